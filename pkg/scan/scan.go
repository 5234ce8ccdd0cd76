// Package scan computes the linear recurrence
//
//	h_t = a_t ⊙ h_{t−1} + b_t,   t = 1 … T,   h_0 given,
//
// for all t at once from whole-tensor graph operations, so that the graph grows with log T
// rather than with T, in two ways:
//
//   - any a_t (Linear, LinearComplex): an associative (parallel prefix) scan, below;
//   - a constant complex diagonal a_t = λ, the linear recurrences of the LRU and S4D (rnn.DiagonalStep):
//     blocks of C steps in closed form as matrix products, and a recurrence of the same form over
//     the blocks (DiagonalComplex, blocked.go), or, for the outputs of a linear readout of the
//     states, the filter from inputs to outputs by blocks without the states (DiagonalFilter,
//     filter.go), which training uses. The scan's O(T log T) element-wise work on sequence-long
//     tensors, and the transposes and slices of such tensors, are what a step costs on the Go
//     backend; the blocks do O(T·C) work in the matrix products it does best, and the filter
//     never forms a tensor of T states.
//
// The elements (a_t, b_t) are affine maps h ↦ a_t h + b_t; composing the map of step s after
// that of an earlier step r is again such a map,
//
//	(a_s, b_s) ∘ (a_r, b_r) = (a_s a_r, a_s b_r + b_s),
//
// an associative operation with the identity (1, 0). Folding h_0 into the first element
// (b_1 ← a_1 h_0 + b_1), the prefix composition of elements 1 … t applied to 0 is h_t. The
// scan is Hillis and Steele's [1]: at level k = 0, 1, …, ⌈log₂ T⌉ − 1, with shift s = 2^k,
//
//	(a, b)_t ← (a_t · a_{t−s}, a_t · b_{t−s} + b_t),
//
// for every t at once, the operands at t − s made by slicing the first T − s steps and padding
// s identity elements (a = 1, b = 0) in front. After level k, (a, b)_t composes the elements
// (t − 2^{k+1}, t] (clipped at 1), so after the last level b_t = h_t. The last level skips the
// a update that nothing reads. Only b's fill decides the result: a position t < s is complete
// after level k, and at every later level its shifted operand is b's fill, 0, so what a holds
// there is never read (a's fill could be any finite number; 1 keeps every a_t the product of
// the factors it composes). TestValues fails with b's fill set to 1; with a's set to 0 only the
// node count changes.
//
// GoMLX has no scan op, and its While has no gradient: the scan is made of Slice, Pad, Mul and
// Add, and gradients come from GoMLX's reverse-mode autodiff through them (a Pad's adjoint is
// a Slice, a Slice's a zero Pad). Each level adds a fixed number of nodes to the forward graph
// and to its gradient, so a sequence of T steps costs O(log T) nodes, against O(T) for an
// unrolled loop (rnn.Unroll), at the price of O(T log T) element-wise work instead of O(T).
// On a backend where every node has a fixed overhead (GoMLX's pure-Go backend: ~10–20 µs)
// the node count is what matters for long T.
//
// LinearComplex is the same recurrence over complex a, b and h, each given as its real and
// imaginary parts (the Go backend has no complex dtype); the combine is the same formula in
// complex arithmetic.
//
// References:
//
//	[1] Hillis, Steele, "Data Parallel Algorithms", Communications of the ACM 29(12), 1986.
//	[2] Blelloch, "Prefix Sums and Their Applications", CMU-CS-90-190, 1990 (first-order
//	    linear recurrences as scans, §1.4).
//	[3] Martin, Cundy, "Parallelizing Linear Recurrent Neural Nets Over Sequence Length",
//	    ICLR 2018; Smith, Warrington, Linderman, "Simplified State Space Layers for Sequence
//	    Modeling" (S5), ICLR 2023, §2.2 and appendix H: the scan applied to linear RNNs.
//	[4] Gu, Goel, Ré, "Efficiently Modeling Long Sequences with Structured State Spaces" (S4),
//	    ICLR 2022, §2.4: a linear time-invariant state space as a convolution with the kernel
//	    K_n = C Āⁿ B̄ (DiagonalFilter).
//	[5] Dao, Gu, "Transformers are SSMs" (Mamba-2), ICML 2024, §6: a sequence in blocks, matrix
//	    products within the blocks, a recurrence over the states between them (DiagonalComplex,
//	    DiagonalFilter).
package scan

import (
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/support/exceptions"
)

// Linear returns h_1 … h_T, [batch, T, N], of h_t = a_t ⊙ h_{t−1} + b_t for a and b
// [batch, T, N] and h_0 [batch, N] (states[:, t−1] is h_t, as rnn.Unroll returns them).
// a, b and h0 must be float nodes of one dtype in one graph; a constant a (per unit, as a
// diagonal recurrence's eigenvalues, [N]) is broadcast by the caller:
// BroadcastToDims(ExpandLeftToRank(a, 3), batch, T, N).
// It panics (through exceptions.Panicf, so that an Exec reports it) on mismatched shapes.
func Linear(a, b, h0 *Node) *Node {
	checkShapes("Linear", []*Node{a, b}, []*Node{h0})
	T := a.Shape().Dim(1)
	g, dt := a.Graph(), a.DType()
	one, zero := ScalarOne(g, dt), ScalarZero(g, dt)
	// b_1 ← a_1 h_0 + b_1.
	b = Add(b, padFirst(Mul(firstStep(a), InsertAxes(h0, 1)), zero, T))
	for s := 1; s < T; s *= 2 {
		sb := shift(b, s, zero)
		nb := Add(Mul(a, sb), b)
		if 2*s < T { // a is read again by the next level
			a = Mul(a, shift(a, s, one))
		}
		b = nb
	}
	return b
}

// LinearComplex is Linear over complex values given as real and imaginary parts: a = aRe +
// i·aIm and b = bRe + i·bIm, [batch, T, N] each, h_0 = h0Re + i·h0Im, [batch, N] each. It
// returns the real and imaginary parts of h_1 … h_T, [batch, T, N] each. The combine is
// (a_s, b_s) ∘ (a_r, b_r) = (a_s a_r, a_s b_r + b_s) with complex products, the identity
// (1 + 0i, 0 + 0i).
func LinearComplex(aRe, aIm, bRe, bIm, h0Re, h0Im *Node) (hRe, hIm *Node) {
	checkShapes("LinearComplex", []*Node{aRe, aIm, bRe, bIm}, []*Node{h0Re, h0Im})
	T := aRe.Shape().Dim(1)
	g, dt := aRe.Graph(), aRe.DType()
	one, zero := ScalarOne(g, dt), ScalarZero(g, dt)
	// b_1 ← a_1 h_0 + b_1.
	h0r, h0i := InsertAxes(h0Re, 1), InsertAxes(h0Im, 1)
	a1r, a1i := firstStep(aRe), firstStep(aIm)
	fr, fi := cmul(a1r, a1i, h0r, h0i)
	bRe, bIm = Add(bRe, padFirst(fr, zero, T)), Add(bIm, padFirst(fi, zero, T))
	for s := 1; s < T; s *= 2 {
		pr, pi := cmul(aRe, aIm, shift(bRe, s, zero), shift(bIm, s, zero))
		nbr, nbi := Add(pr, bRe), Add(pi, bIm)
		if 2*s < T {
			aRe, aIm = cmul(aRe, aIm, shift(aRe, s, one), shift(aIm, s, zero))
		}
		bRe, bIm = nbr, nbi
	}
	return bRe, bIm
}

// cmul returns (xr + i·xi)(yr + i·yi) as real and imaginary parts.
func cmul(xr, xi, yr, yi *Node) (re, im *Node) {
	return Sub(Mul(xr, yr), Mul(xi, yi)), Add(Mul(xr, yi), Mul(xi, yr))
}

// firstStep returns x[:, 0:1], [batch, 1, N].
func firstStep(x *Node) *Node { return SliceAxis(x, 1, AxisRange(0, 1)) }

// padFirst pads x [batch, 1, N] with T − 1 steps of zero after it: [batch, T, N], x at step 0.
func padFirst(x, zero *Node, T int) *Node {
	if T == 1 {
		return x
	}
	return Pad(x, zero, compute.PadAxis{}, compute.PadAxis{End: T - 1}, compute.PadAxis{})
}

// shift returns x [batch, T, N] moved s steps later along axis 1: element t is x_{t−s} for
// t ≥ s and fill (a scalar) for t < s.
//
// Every Pad here lists all three axes: GoMLX v0.28.15's padVJP slices the adjoint only along the
// axes listed (limit 0 on the others), so a Pad listing two axes of a rank-3 operand has a
// gradient of shape [batch, T, 0] and Gradient panics.
func shift(x *Node, s int, fill *Node) *Node {
	T := x.Shape().Dim(1)
	return Pad(SliceAxis(x, 1, AxisRange(0, T-s)), fill, compute.PadAxis{}, compute.PadAxis{Start: s}, compute.PadAxis{})
}

// checkShapes panics unless every node of seqs is [batch, T, N] with T ≥ 1 and every node of
// inits [batch, N], all of one float dtype and in one graph.
func checkShapes(fn string, seqs, inits []*Node) {
	for _, x := range append(slices.Clone(seqs), inits...) {
		if x == nil {
			exceptions.Panicf("scan.%s: nil node", fn)
		}
	}
	s0 := seqs[0].Shape()
	if s0.Rank() != 3 || s0.Dim(1) < 1 {
		exceptions.Panicf("scan.%s: sequence operand of shape %s, want [batch, T, N] with T >= 1", fn, s0)
	}
	if s0.DType != dtypes.Float32 && s0.DType != dtypes.Float64 {
		exceptions.Panicf("scan.%s: dtype %s, want Float32 or Float64", fn, s0.DType)
	}
	g := seqs[0].Graph()
	for _, x := range seqs[1:] {
		if !x.Shape().Equal(s0) {
			exceptions.Panicf("scan.%s: sequence operands of shapes %s and %s, want equal shapes [batch, T, N]", fn, s0, x.Shape())
		}
	}
	want := []int{s0.Dim(0), s0.Dim(2)}
	for _, x := range inits {
		if !slices.Equal(x.Shape().Dimensions, want) || x.DType() != s0.DType {
			exceptions.Panicf("scan.%s: initial state of shape %s, want (%s)%v for sequences of shape %s", fn, x.Shape(), s0.DType, want, s0)
		}
	}
	for _, x := range append(slices.Clone(seqs), inits...) {
		if x.Graph() != g {
			exceptions.Panicf("scan.%s: operands from different graphs", fn)
		}
	}
}
