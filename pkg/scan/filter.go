package scan

import (
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/support/exceptions"
)

// DiagonalFilter returns the outputs y_t = x_t·R, [batch, T, Out], and the last state x_T,
// [batch, 2N], of the diagonal recurrence of DiagonalComplex driven by the inputs u [batch, T,
// In] through the input matrix P [In, 2N]:
//
//	x_t = λ ⊙ x_{t−1} + u_t·P,   y_t = x_t·R,   x_0 given [batch, 2N],
//
// states as [Re x | Im x], P and R real matrices of that layout (rnn.DiagonalStep's input and
// readout matrices), without forming the states: from u to y the recurrence is a linear
// time-invariant filter, and its blocks of C steps are matrix products with matrices of C·In
// and C·Out columns, the convolution view of a state space [4] §2.4, computed by blocks as in
// [5] §6. Within a block, with x_in the state entering it,
//
//	y_t = Σ_{s ≤ t} u_s·K_{t−s} + x_in·Λ^{t+1}·R,   K_n = P·Λ^n·R,   t, s = 0 … C−1,
//
// Λ^n the real 2N×2N form of diag(λ^n). Row k of the blocks' inputs [u_0 … u_{C−1}] (C·In)
// times the block-Toeplitz matrix of the K_n gives the block's outputs (C·Out), x_in times the
// columns Λ^{t+1}·R adds the entering state's share, and the states entering the blocks are the
// recurrence H_k = λ^C ⊙ H_{k−1} + e_k over the T/C blocks, e_k = Σ_s u_s·P·Λ^{C−1−s} the state
// a block ends in from 0, solved by DiagonalComplex on tensors C times smaller than the states.
// The largest tensors are u and y; the work is O(T·C·In·Out + T·N·(In + Out)) a sequence in
// matrix products with no transposes of sequence-long tensors, and the graph has a fixed
// number of nodes plus DiagonalComplex's ⌈log_C(T/C)⌉ levels. Gradients come from GoMLX's
// autodiff through the matrix products and the small matrices built from λ, P and R.
//
// lamRe, lamIm: [N]; in: [In, 2N]; out: [2N, Out]; u: [batch, T, In]; x0: [batch, 2N]; all of
// one float dtype. It panics (through exceptions.Panicf) on mismatched shapes.
func DiagonalFilter(lamRe, lamIm, in, out, u, x0 *Node) (y, last *Node) {
	checkShapes("DiagonalFilter", []*Node{u}, nil)
	batch, T, nIn := u.Shape().Dim(0), u.Shape().Dim(1), u.Shape().Dim(2)
	n := lamRe.Shape().Size()
	if lamRe.Rank() != 1 || !lamIm.Shape().Equal(lamRe.Shape()) || in.Rank() != 2 || in.Shape().Dim(0) != nIn || in.Shape().Dim(1) != 2*n ||
		out.Rank() != 2 || out.Shape().Dim(0) != 2*n || x0.Rank() != 2 || x0.Shape().Dim(0) != batch || x0.Shape().Dim(1) != 2*n {
		exceptions.Panicf("scan.DiagonalFilter: λ parts %s, %s, P %s, R %s, u %s, x0 %s: want [N], [N], [In, 2N], [2N, Out], [batch, T, In], [batch, 2N]",
			lamRe.Shape(), lamIm.Shape(), in.Shape(), out.Shape(), u.Shape(), x0.Shape())
	}
	nOut := out.Shape().Dim(1)
	C := min(filterBlock(n, nIn, nOut), T)
	K := (T + C - 1) / C
	m := T - (K-1)*C // steps of the last block
	pr, pi := powers(lamRe, lamIm, C)

	// a_n = P·Λ^n, [C+1, In, 2N]: u_s·a_n is u_s's share of the state n steps later.
	lr, li := InsertAxes(Transpose(pr, 0, 1), 1), InsertAxes(Transpose(pi, 0, 1), 1) // [C+1, 1, N]
	wr, wi := InsertAxes(SliceAxis(in, 1, AxisRange(0, n)), 0), InsertAxes(SliceAxis(in, 1, AxisRange(n, 2*n)), 0)
	a := Concatenate([]*Node{Sub(Mul(wr, lr), Mul(wi, li)), Add(Mul(wr, li), Mul(wi, lr))}, 2)
	aC := SliceAxis(a, 0, AxisRange(0, C))

	// The block-Toeplitz matrix of K_n = a_n·R: rows (s, i), columns (t, o), K_{t−s} for t ≥ s.
	k := Reshape(DotGeneral(aC, []int{2}, nil, out, []int{0}, nil), C, nIn*nOut)
	toeplitz := make([]float64, C*C*C)
	for s := range C {
		for t := s; t < C; t++ {
			toeplitz[(s*C+t)*C+t-s] = 1
		}
	}
	sel := Reshape(ConstAsDType(u.Graph(), u.DType(), toeplitz), C*C, C)
	kBlock := Reshape(TransposeAllAxes(Reshape(MatMul(sel, k), C, C, nIn, nOut), 0, 2, 1, 3), C*nIn, C*nOut)

	// Λ^{t+1}·R = [Re λ^n ⊙ R_re + Im λ^n ⊙ R_im ; −Im λ^n ⊙ R_re + Re λ^n ⊙ R_im], n = t + 1,
	// R_re and R_im R's first and last N rows: [2N, C·Out], columns (t, o).
	qr, qi := InsertAxes(SliceAxis(pr, 1, AxisRange(1, C+1)), 2), InsertAxes(SliceAxis(pi, 1, AxisRange(1, C+1)), 2) // [N, C, 1]
	rr, ri := InsertAxes(SliceAxis(out, 0, AxisRange(0, n)), 1), InsertAxes(SliceAxis(out, 0, AxisRange(n, 2*n)), 1) // [N, 1, Out]
	q := Reshape(Concatenate([]*Node{Add(Mul(qr, rr), Mul(qi, ri)), Sub(Mul(qr, ri), Mul(qi, rr))}, 0), 2*n, C*nOut)

	U := Reshape(padTo(u, 1, K*C), batch*K, C*nIn)
	hIn := InsertAxes(x0, 1) // [batch, K, 2N]: the state entering each block
	if K > 1 {
		end := Reshape(Reverse(aC, 0), C*nIn, 2*n) // row (s, i): a_{C−1−s}
		e := Reshape(MatMul(U, end), batch, K, 2*n)
		lcR, lcI := Reshape(SliceAxis(pr, 1, AxisElem(C)), n), Reshape(SliceAxis(pi, 1, AxisElem(C)), n) // λ^C
		hIn = Concatenate([]*Node{hIn, DiagonalComplex(lcR, lcI, SliceAxis(e, 1, AxisRange(0, K-1)), x0)}, 1)
	}
	y = Add(MatMul(U, kBlock), MatMul(Reshape(hIn, batch*K, 2*n), q))
	y = Reshape(y, batch, K*C, nOut)
	if K*C > T {
		y = SliceAxis(y, 1, AxisRange(0, T))
	}

	// x_T = λ^m ⊙ H_{K−1} + Σ_{s<m} u_s·a_{m−1−s} over the last block's m steps.
	endM := Reshape(padTo(Reverse(SliceAxis(a, 0, AxisRange(0, m)), 0), 0, C), C*nIn, 2*n)
	uLast := Reshape(SliceAxis(Reshape(U, batch, K, C*nIn), 1, AxisElem(K-1)), batch, C*nIn)
	h := Reshape(SliceAxis(hIn, 1, AxisElem(K-1)), batch, 2*n)
	hr, hi := SliceAxis(h, 1, AxisRange(0, n)), SliceAxis(h, 1, AxisRange(n, 2*n))
	mr, mi := Reshape(SliceAxis(pr, 1, AxisElem(m)), 1, n), Reshape(SliceAxis(pi, 1, AxisElem(m)), 1, n)
	er, ei := cmul(hr, hi, mr, mi)
	last = Add(MatMul(uLast, endM), Concatenate([]*Node{er, ei}, 1))
	return y, last
}

// filterBlock is DiagonalFilter's block length for N units, In inputs and Out outputs: Block
// halved until C·In·Out ≤ 4N·(In + Out) or C ≤ 4. A step costs
// C·In·Out multiply-adds in the block-Toeplitz product, which grows with C, and 2N·(In + Out)
// in the products with the states entering the blocks, which do not; the bound keeps the
// first within twice the second. With few inputs and outputs (the one-layer LRU on copy, 10
// in and 9 out) C is Block; the deep LRU's blocks (In = Out = H = N = 64) take 8, whose
// Toeplitz product does half the work of 16's and a quarter of Block's 32 (cmd/bench,
// docs/bench.txt).
func filterBlock(n, nIn, nOut int) int {
	c := Block
	for c > 4 && c*nIn*nOut > 4*n*(nIn+nOut) {
		c /= 2
	}
	return c
}
