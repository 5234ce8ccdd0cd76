package exprnn

import (
	"math"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/support/exceptions"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// The matrix exponential of Expm: the Taylor polynomial T of degree TaylorDegree = m of
// exp(A/2^s), squared s = Squarings times. Both are fixed when the graph is built: one
// compiled graph runs with whatever A the variables hold at each execution, so the scaling
// cannot follow ‖A‖. They are chosen for skew-symmetric A with spectral norm ρ = ‖A‖₂ ≤
// MaxNorm (ρ is the largest |eigenvalue| of A, the largest rotation angle of exp(A); since
// ‖A‖₂ ≤ ‖A‖_F, a Frobenius norm up to MaxNorm is enough). Henaff's and the Cayley
// initialisation have ρ ≤ π.
//
// For skew-symmetric A the truncation error is a function of ρ alone: A = Q Λ Qᵀ with Q
// orthogonal and eigenvalues ±iθ_k, so Expm(A) − exp(A) = Q (T(Λ/2^s)^{2^s} − e^Λ) Qᵀ and
//
//	‖Expm(A) − exp(A)‖₂ = max_k |T(iθ_k/2^s)^{2^s} − e^{iθ_k}| ≲ 2^s (ρ/2^s)^{m+1}/(m+1)!,
//
// relative, since ‖exp(A)‖₂ = 1. With m = 24 and s = 4 the bound is 3.5e-17 at ρ = 32 and
// 9.2e-15 at ρ = MaxNorm = 40, below Float64 rounding; past MaxNorm it grows as ρ²⁵ (8.7e-13
// at 48, 1.2e-9 at 64, 3e-7 at 80, 3e-5 at 96; TestExpmTruncation checks it there).
//
// Measured against exact exponentials Q R(θ) Qᵀ (TestExpmAccuracy, N from 2 to 512, ρ up to
// MaxNorm): max-entry error ≤ 6e-15 in Float64 and ≤ 1.2e-6 in Float32, max |WᵀW − I| ≤
// 5e-15 and ≤ 2.5e-6.
//
// In Float32 the rounding, not the truncation, sets the error: the squarings amplify it by
// up to 2^s, and the cancellation in T(X) by Σ_k ‖X‖^k/k! ≤ e^{ρ/2^s}. For the same 12
// matmuls up to MaxNorm, degree 20 would need 5 squarings, 16 needs 6 and 12 needs 7.
// Squaring is done on E = T(X) − I, as I + (2E + E²), so that a W close to I keeps the low
// bits of E (squaring I + E directly lost them: 1e-5 from I in Float32 at ρ = 1).
//
// Cost: T(X) − I is evaluated by Paterson–Stockmeyer in X⁴ (3 matmuls for X², X³, X⁴, then 5
// for Horner's rule in X⁴), then the 4 squarings: 12 N×N matmuls per Build, and about twice
// that in the gradient, against T matmuls of [batch, N]×[N, N] for the steps.
const (
	TaylorDegree = 24
	Squarings    = 4
	MaxNorm      = 40.0
)

// psBlock is the block size of the Paterson–Stockmeyer evaluation: powers X … X^psBlock are
// formed, then the polynomial is evaluated by Horner's rule in X^psBlock.
const psBlock = 4

// Expm returns the matrix exponential of the square matrix a ([n, n], Float32 or Float64),
// built from matmuls only (scaling and squaring of a Taylor polynomial, see TaylorDegree),
// so that GoMLX's reverse-mode autodiff differentiates it. It is accurate to the errors of
// TaylorDegree's doc for skew-symmetric a with ‖a‖₂ ≤ MaxNorm. (Any square a works, but for
// a non-normal a the error is bounded through ‖a‖ and relative to e^{‖a‖}, not 1.)
func Expm(a *Node) *Node { return expTaylor(a, TaylorDegree, psBlock, Squarings) }

// expTaylor is Expm with its degree m (a multiple of p), block size p and squarings s.
func expTaylor(a *Node, m, p, s int) *Node {
	if a.Rank() != 2 || a.Shape().Dim(0) != a.Shape().Dim(1) {
		exceptions.Panicf("exprnn.Expm: shape %s, want a square matrix", a.Shape())
	}
	if p < 2 || m < p || m%p != 0 || s < 0 {
		exceptions.Panicf("exprnn.Expm: degree %d, block %d, squarings %d: want a block >= 2 and the degree a multiple of it", m, p, s)
	}
	g, dt, n := a.Graph(), a.DType(), a.Shape().Dim(0)
	id := Reshape(ConstAsDType(g, dt, rnn.IdentityMatrix(n)), n, n)
	coef := make([]float64, m+1) // 1/k!
	coef[0] = 1
	for k := 1; k <= m; k++ {
		coef[k] = coef[k-1] / float64(k)
	}
	x := MulScalar(a, math.Ldexp(1, -s))
	pow := []*Node{id, x} // pow[k] = X^k, k ≤ p
	for k := 2; k <= p; k++ {
		if k%2 == 0 {
			pow = append(pow, MatMul(pow[k/2], pow[k/2]))
		} else {
			pow = append(pow, MatMul(pow[k-1], x))
		}
	}
	// E = T(X) − I, with block j = Σ_{k<p} c_{pj+k} X^k (block 0 without its I) and
	// T(X) = Σ_j (X^p)^j block_j + c_m (X^p)^{m/p}. Squaring I + E as I + (2E + E²) keeps
	// the small E apart from I: in Float32 a W near I would otherwise lose E's low bits at
	// every squaring.
	block := func(j int) *Node {
		var b *Node
		if j > 0 {
			b = MulScalar(id, coef[p*j])
		}
		for k := 1; k < p; k++ {
			if term := MulScalar(pow[k], coef[p*j+k]); b == nil {
				b = term
			} else {
				b = Add(b, term)
			}
		}
		return b
	}
	q := m / p
	e := Add(block(q-1), MulScalar(pow[p], coef[m]))
	for j := q - 2; j >= 0; j-- {
		e = Add(block(j), MatMul(pow[p], e))
	}
	for range s {
		e = Add(MulScalar(e, 2), MatMul(e, e))
	}
	return Add(id, e)
}

// NumSkew returns n(n−1)/2, the number of entries of the strictly upper triangle of an n×n
// matrix: the free parameters of a skew-symmetric matrix, and the dimension of SO(n).
func NumSkew(n int) int { return n * (n - 1) / 2 }

// Skew returns the n×n skew-symmetric matrix A whose strictly upper triangle, read row by
// row, is a ([NumSkew(n)]): A_ij = a_k, A_ji = −a_k for i < j, with
// k = i·n − i(i+1)/2 + (j − i − 1), and A_ii = 0. It is one Gather from [0, a, −a].
func Skew(a *Node, n int) *Node {
	if a.Rank() != 1 || a.Shape().Dim(0) != NumSkew(n) {
		exceptions.Panicf("exprnn.Skew: a has shape %s, want [%d] (n = %d)", a.Shape(), NumSkew(n), n)
	}
	g, m := a.Graph(), NumSkew(n)
	idx := make([]int32, n*n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			k := int32(SkewIndex(n, i, j))
			idx[i*n+j] = 1 + k
			idx[j*n+i] = 1 + int32(m) + k
		}
	}
	zero := Zeros(g, shapes.Make(a.DType(), 1))
	all := Concatenate([]*Node{zero, a, Neg(a)}, 0)
	return Reshape(Gather(all, Reshape(Const(g, idx), n*n, 1)), n, n)
}

// SkewIndex returns the position of A_ij (i < j) in the strictly upper triangle of an n×n
// matrix read row by row, the layout of Skew and of the variable "A".
func SkewIndex(n, i, j int) int { return i*n - i*(i+1)/2 + (j - i - 1) }
