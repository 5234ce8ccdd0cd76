package urnn

import (
	. "github.com/gomlx/gomlx/core/graph"
)

// The factors of W = D3 R2 F⁻¹ D2 Π R1 F D1 ([1] §2, eq. 7) one at a time, on complex
// vectors given as real and imaginary parts re, im [batch, n] (row b is the vector z_b).
// They are for notebooks and tests: apply one to (re, im) = (I, 0) to see its matrix.
// The recurrence itself uses fused forms of the same maps (Cell.Build).

// D applies the diagonal unitary D = diag(e^{iθ_1}, …, e^{iθ_n}) ([1] §2, first factor type):
//
//	(D z)_j = e^{iθ_j} z_j = (cos θ_j Re z_j − sin θ_j Im z_j) + i (sin θ_j Re z_j + cos θ_j Im z_j).
//
// theta: [n].
func D(re, im, theta *Node) (outRe, outIm *Node) {
	t := InsertAxes(theta, 0)
	return cmul(re, im, Cos(t), Sin(t))
}

// R applies the complex reflection R = I − 2 v v*/‖v‖² ([1] §2, second factor type):
//
//	R z = z − 2 v (v* z)/‖v‖²,  v* z = Σ_j conj(v_j) z_j.
//
// vRe, vIm: [n], not all zero (R does not depend on the scale of v).
func R(re, im, vRe, vIm *Node) (outRe, outIm *Node) {
	inv := Reciprocal(Sqrt(ReduceAllSum(Add(Mul(vRe, vRe), Mul(vIm, vIm)))))
	return reflectPair(re, im, Mul(vRe, inv), Mul(vIm, inv))
}

// F applies the unitary discrete Fourier transform ([1] §2, fourth factor type):
//
//	(F z)_k = n^{−1/2} Σ_j e^{−2πi jk/n} z_j,
//
// in real arithmetic (four-step FFT; any n).
func F(re, im *Node) (outRe, outIm *Node) { return dftPair(re, im, false) }

// Finv applies F⁻¹ = F*, (F⁻¹ z)_j = n^{−1/2} Σ_k e^{+2πi jk/n} z_k ([1] §2).
func Finv(re, im *Node) (outRe, outIm *Node) { return dftPair(re, im, true) }

// Perm applies the fixed permutation Π ([1] §2, third factor type): (Π z)_j = z_{perm[j]}.
// perm must be a permutation of 0..n−1 (as Cell.Perm returns).
func Perm(re, im *Node, perm []int) (outRe, outIm *Node) { return permPair(re, im, perm) }

// ModReLU is the uRNN nonlinearity, per complex unit ([1] §3.2, eq. 9):
//
//	σ(z) = ReLU(|z| + b) · z/(|z| + ε)
//
// ε (DefaultEps = 1e-5 in the authors' code) keeps σ and its gradient finite at z = 0;
// with ε = 0 it is the paper's (|z| + b) z/|z| for |z| + b ≥ 0 and 0 otherwise.
// re, im: [batch, n]; b: [n].
func ModReLU(re, im, b *Node, eps float64) (outRe, outIm *Node) {
	return split(newModReLU(b, eps).apply(Concatenate([]*Node{re, im}, 1)))
}

// SplitReLU is the nonlinearity of Cell.SplitReLU, ReLU on the real and imaginary parts
// separately with one bias b per unit (the "previous work" of [1] §3.2):
//
//	σ(z) = ReLU(Re z + b) + i·ReLU(Im z + b)
//
// re, im: [batch, n]; b: [n].
func SplitReLU(re, im, b *Node) (outRe, outIm *Node) {
	return split(splitReLU(b)(Concatenate([]*Node{re, im}, 1)))
}

// split cuts states [batch, 2n] into (Re, Im), [batch, n] each.
func split(h *Node) (re, im *Node) {
	n := h.Shape().Dim(1) / 2
	return SliceAxis(h, 1, AxisRange(0, n)), SliceAxis(h, 1, AxisRange(n, 2*n))
}

func dftPair(re, im *Node, inverse bool) (outRe, outIm *Node) {
	fs := newFourStep(re.Shape().Dim(1))
	return split(fs.dft(Concatenate([]*Node{re, im}, 1), inverse))
}

// reflectPair applies R = I − 2 v v* for a unit vector v = (vr, vi) [n].
func reflectPair(re, im, vr, vi *Node) (outRe, outIm *Node) {
	vr, vi = InsertAxes(vr, 0), InsertAxes(vi, 0)
	sr := ReduceSum(Add(Mul(re, vr), Mul(im, vi)), -1) // Re v*z, [batch]
	si := ReduceSum(Sub(Mul(im, vr), Mul(re, vi)), -1) // Im v*z
	sr, si = InsertAxes(sr, -1), InsertAxes(si, -1)
	cr, ci := cmul(vr, vi, sr, si)
	return Sub(re, MulScalar(cr, 2)), Sub(im, MulScalar(ci, 2))
}

// permPair returns (re, im) with out_j = in_{perm[j]} on the last axis.
func permPair(re, im *Node, perm []int) (outRe, outIm *Node) {
	idx := make([]int32, len(perm))
	for i, p := range perm {
		idx[i] = int32(p)
	}
	ix := InsertAxes(Const(re.Graph(), idx), -1)
	g := func(x *Node) *Node { return Transpose(Gather(Transpose(x, 0, 1), ix), 0, 1) }
	return g(re), g(im)
}
