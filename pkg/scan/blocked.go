package scan

import (
	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/support/exceptions"
)

// Block is the block length C of DiagonalComplex and DiagonalFilter (at most: a sequence
// shorter than Block is one block, and DiagonalComplex takes the largest divisor of the length
// between Block/2 and Block when there is one, blockLen; DiagonalFilter a smaller power of two
// when it has many inputs and outputs, filterBlock). A block's matrix products do work
// that grows with C and the levels of blocks fall with it; 32 is the fastest of 16, 32 and 64 in cmd/bench's LRU
// rows (copy, T = 10 000). Tests set it smaller to make many levels out of short sequences.
var Block = 32

// DiagonalComplex returns the states of x_t = λ ⊙ x_{t−1} + p_t for a constant complex λ [N] given
// as lamRe, lamIm, and p [batch, T, 2N] and x_0 [batch, 2N] as [Re | Im] (the layout of the
// diagonal linear recurrences' states: the LRU, S4D): [batch, T, 2N].
//
// With λ constant the recurrence is a linear time-invariant filter, and a block of C steps has
// a closed form ([5] §6; [2] §1.4 for the recurrence between blocks): for the block whose
// state on entry is x_in,
//
//	x_{t} = Σ_{s ≤ t} λ^{t−s} ⊙ p_s + λ^{t+1} ⊙ x_in,   t, s = 0 … C−1 within the block,
//
// one matrix product per unit j with the C×C lower-triangular Toeplitz matrix of the powers
// λ_j^0 … λ_j^{C−1} and the column λ_j^1 … λ_j^C. In real arithmetic the row
// [Re p_0, Im p_0, …, Re p_{C−1}, Im p_{C−1}, Re x_in, Im x_in] times a (2C+2)×2C matrix per
// unit (blockMatrix) gives the block's states in the same order, with the units as the batch
// axis of the product: p and the states go to and from that layout by the backend's fast 2-D
// transpose of [batch·T·2, N]. The states entering the blocks are a recurrence of the same
// form over the T/C blocks, with λ^C and the inputs e_k, the state at the end of block k from
// x_in = 0 (a matrix product too); it is solved the same way, recursively, so that the graph
// has ⌈log_C T⌉ levels of a fixed number of nodes, and the work is O(T·C) a unit in matrix
// products the backend does at its best, instead of the O(T log T) element-wise work of the
// Hillis–Steele scan (LinearComplex). The powers λ^0 … λ^C are products of λ (log₂ C
// doublings); the gradient with respect to λ flows through them and the matrix products
// (GoMLX's autodiff).
func DiagonalComplex(lamRe, lamIm, p, x0 *Node) *Node {
	if lamRe == nil || lamIm == nil {
		exceptions.Panicf("scan.DiagonalComplex: nil λ")
	}
	checkShapes("DiagonalComplex", []*Node{p}, []*Node{x0})
	batch, T, n := p.Shape().Dim(0), p.Shape().Dim(1), lamRe.Shape().Size()
	if p.Shape().Dim(2) != 2*n || lamIm.Shape().Size() != n || lamRe.Rank() != 1 || lamIm.Rank() != 1 {
		exceptions.Panicf("scan.DiagonalComplex: λ parts of shapes %s and %s for p of shape %s, want [N] each and p [batch, T, 2N]",
			lamRe.Shape(), lamIm.Shape(), p.Shape())
	}
	// [batch, T, 2N] = [batch·T·2, N] → [N, batch, T, 2] by the backend's fast 2-D transpose.
	unitMajor := func(x *Node, steps int) *Node {
		return Reshape(Transpose(Reshape(x, x.Shape().Size()/n, n), 0, 1), n, batch, steps, 2)
	}
	h := blocks(lamRe, lamIm, unitMajor(p, T), Reshape(unitMajor(x0, 1), n, batch, 2))
	return Reshape(Transpose(Reshape(h, n, batch*T*2), 0, 1), batch, T, 2*n)
}

// padTo pads x with zeros at the end of axis to length L, listing every axis (see shift).
func padTo(x *Node, axis, L int) *Node {
	if x.Shape().Dim(axis) == L {
		return x
	}
	pads := make([]compute.PadAxis, x.Rank())
	pads[axis].End = L - x.Shape().Dim(axis)
	return Pad(x, ScalarZero(x.Graph(), x.DType()), pads...)
}

// blockLen returns the block length C of blocks for L steps: L when L <= Block; else the
// largest divisor of L in [⌈Block/2⌉, Block] (at least 2), so that the steps fill whole blocks
// and the sequence-long inputs and states are neither padded nor sliced back (a pad, a slice
// and their gradients, each a copy of the whole tensor); Block when L has no such divisor (the
// last block then padded with zeros).
func blockLen(L int) int {
	if L <= Block {
		return L
	}
	for c := Block; c >= max(2, (Block+1)/2); c-- {
		if L%c == 0 {
			return c
		}
	}
	return Block
}

// blocks solves x_t = λ ⊙ x_{t−1} + p_t for the inputs p [N, R, L, 2] (unit j, row r, step t,
// real and imaginary part) and the states x_0 = h0 [N, R, 2]: [N, R, L, 2], the state after
// each step. The steps are cut into K blocks of C = blockLen(L); the block matrix acts on the
// rows [Re p_0, Im p_0, …, Re p_{C−1}, Im p_{C−1}, Re x_in, Im x_in] of a block.
func blocks(lr, li, p, h0 *Node) *Node {
	N, R, L := p.Shape().Dim(0), p.Shape().Dim(1), p.Shape().Dim(2)
	C := blockLen(L)
	K := (L + C - 1) / C
	pr, pi := powers(lr, li, C)
	m := blockMatrix(pr, pi, C) // [N, 2C+2, 2C]
	xf := Reshape(padTo(p, 2, K*C), N, R*K, 2*C)
	hIn := InsertAxes(h0, 2) // [N, R, 1, 2]: the state entering each block
	if K > 1 {
		// e_k, the state at the end of block k from 0; the states entering blocks 2 … K are
		// H_k = λ^C H_{k−1} + e_k, H_0 = h0, for k = 1 … K−1.
		end := SliceAxis(SliceAxis(m, 1, AxisRange(0, 2*C)), 2, AxisRange(2*C-2, 2*C)) // [N, 2C, 2]
		e := Reshape(DotGeneral(xf, []int{2}, []int{0}, end, []int{1}, []int{0}), N, R, K, 2)
		lcR, lcI := Reshape(SliceAxis(pr, 1, AxisElem(C)), N), Reshape(SliceAxis(pi, 1, AxisElem(C)), N) // λ^C
		hIn = Concatenate([]*Node{hIn, blocks(lcR, lcI, SliceAxis(e, 2, AxisRange(0, K-1)), h0)}, 2)
	}
	lhs := Concatenate([]*Node{xf, Reshape(hIn, N, R*K, 2)}, 2) // [N, RK, 2C+2]
	h := Reshape(DotGeneral(lhs, []int{2}, []int{0}, m, []int{1}, []int{0}), N, R, K*C, 2)
	if K*C > L {
		h = SliceAxis(h, 2, AxisRange(0, L))
	}
	return h
}

// powers returns λ^0 … λ^C, [N, C+1] each part, for λ [N]: λ^m … λ^{2m−1} are λ^0 … λ^{m−1}
// times λ^m, so ⌈log₂(C+1)⌉ complex products of growing width.
func powers(lr, li *Node, C int) (pr, pi *Node) {
	qr, qi := InsertAxes(lr, 1), InsertAxes(li, 1) // λ, [N, 1]
	pr, pi = Concatenate([]*Node{OnesLike(qr), qr}, 1), Concatenate([]*Node{ZerosLike(qi), qi}, 1)
	for m := 2; m < C+1; m *= 2 {
		sr, si := cmul(SliceAxis(pr, 1, AxisElem(m-1)), SliceAxis(pi, 1, AxisElem(m-1)), qr, qi) // λ^m
		nr, ni := cmul(pr, pi, sr, si)
		pr, pi = Concatenate([]*Node{pr, nr}, 1), Concatenate([]*Node{pi, ni}, 1)
	}
	return SliceAxis(pr, 1, AxisRange(0, C+1)), SliceAxis(pi, 1, AxisRange(0, C+1))
}

// blockMatrix returns the matrix per unit that maps the row [Re p_0, Im p_0, …, Re p_{C−1},
// Im p_{C−1}, Re x_in, Im x_in] of a block to [Re x_0, Im x_0, …, Re x_{C−1}, Im x_{C−1}]
// (DiagonalComplex), [N, 2C+2, 2C], from the powers λ^0 … λ^C, [N, C+1] each part:
// [Re λ^n | Im λ^n] times a constant selection tensor of entries 0 and ±1. Entry by entry,
// from (a + ib)(c + id) = (ac − bd) + i(ad + bc), the input with coefficient λ^n = c + id
// into Re x_t and Im x_t:
//
//	Re p_s → (Re λ^n, Im λ^n),   Im p_s → (−Im λ^n, Re λ^n),   n = t − s ≥ 0,
//	Re x_in → (Re λ^n, Im λ^n),   Im x_in → (−Im λ^n, Re λ^n),   n = t + 1.
func blockMatrix(pr, pi *Node, C int) *Node {
	N := pr.Shape().Dim(0)
	rows, cols := 2*C+2, 2*C
	sel := make([]float64, 2*(C+1)*rows*cols)
	// in: the row of the input's real part (its imaginary part is the next row); n: the power.
	set := func(in, t, n int) {
		re, im := n, C+1+n                 // indices of Re λ^n and Im λ^n in [Re λ^0 … Re λ^C, Im λ^0 … Im λ^C]
		sel[(re*rows+in)*cols+2*t] = 1     // Re in → Re x_t
		sel[(im*rows+in)*cols+2*t+1] = 1   // Re in → Im x_t
		sel[(im*rows+in+1)*cols+2*t] = -1  // Im in → Re x_t
		sel[(re*rows+in+1)*cols+2*t+1] = 1 // Im in → Im x_t
	}
	for t := range C {
		for s := 0; s <= t; s++ {
			set(2*s, t, t-s)
		}
		set(2*C, t, t+1)
	}
	g := pr.Graph()
	selN := Reshape(ConstAsDType(g, pr.DType(), sel), 2*(C+1), rows*cols)
	coef := Concatenate([]*Node{pr, pi}, 1) // [N, 2C+2]
	return Reshape(DotGeneral(coef, []int{1}, nil, selN, []int{0}, nil), N, rows, cols)
}
