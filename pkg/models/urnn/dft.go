package urnn

import (
	"math"
	"math/cmplx"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
)

// The unitary DFT in real arithmetic (the Go backend has no complex dtype and no FFT).
//
// F z, (F z)_k = n^{−1/2} Σ_j ω^{jk} z_j with ω = e^{−2πi/n} (F⁻¹ = F*: ω = e^{+2πi/n}),
// is computed as a four-step FFT (Cooley–Tukey with n = n1·n2; Bailey 1990): with
// j = n2·j1 + j2 and k = k1 + n1·k2,
//
//	X_{k1 + n1 k2} = Σ_{j2} ω_{n2}^{j2 k2} · [ω_n^{j2 k1} Σ_{j1} ω_{n1}^{j1 k1} x_{n2 j1 + j2}],
//
// that is two batched real matmuls (DotGeneral): stage A, a DFT of size n1 batched
// over j2 with the twiddle ω_n^{j2 k1} (and any diagonal D applied before F) folded in,
// and stage B, a DFT of size n2 (with any diagonal applied after F folded in, when
// it is batched over k1). Complex numbers travel as a real axis c ∈ {Re, Im} of size 2,
// and a complex matrix entry a acts on it as the real 2×2 block [[Re a, Im a], [−Im a, Re a]]
// (row c_in, column c_out). Any n works: n1 is the largest divisor of n not above √n
// (n1 = 1 for a prime n, where stage B is a dense DFT).
//
// Measured on the Go backend (BenchmarkDFT, batch 20, forward+backward per step of the
// whole recurrence), this beats the dense DFT matmul and radix-2 butterflies; see the
// package doc for the numbers.

// fourStep is the factorisation n = n1·n2 used by the four-step DFT.
type fourStep struct{ n, n1, n2 int }

func newFourStep(n int) fourStep {
	n1 := 1
	for d := 1; d*d <= n; d++ {
		if n%d == 0 {
			n1 = d
		}
	}
	return fourStep{n: n, n1: n1, n2: n / n1}
}

// omega returns e^{sign·2πi·p/m}.
func omega(sign float64, p, m int) complex128 {
	return cmplx.Exp(complex(0, sign*2*math.Pi*float64(p%m)/float64(m)))
}

// cconst returns the real and imaginary parts of values as constants shaped dims.
func cconst(g *Graph, dtype dtypes.DType, values []complex128, dims ...int) (re, im *Node) {
	r := make([]float64, len(values))
	i := make([]float64, len(values))
	for k, v := range values {
		r[k], i[k] = real(v), imag(v)
	}
	return Reshape(ConstAsDType(g, dtype, r), dims...), Reshape(ConstAsDType(g, dtype, i), dims...)
}

// diag is a diagonal unitary D = diag(cos θ + i sin θ), as two [n] nodes.
type diag struct{ cos, sin *Node }

// cmul returns (ar + i ai)(br + i bi) for broadcastable nodes.
func cmul(ar, ai, br, bi *Node) (re, im *Node) {
	return Sub(Mul(ar, br), Mul(ai, bi)), Add(Mul(ar, bi), Mul(ai, br))
}

// block assembles the real form of a complex matrix a = (ar, ai), where both have
// the same shape S: it stacks the 2×2 blocks [[ar, ai], [−ai, ar]] (row c_in, column
// c_out) with c_out inserted at axis outAxis and then c_in at axis inAxis (axes of the
// final rank-(|S|+2) result).
func block(ar, ai *Node, outAxis, inAxis int) *Node {
	// For c_in = Re: (c_out = Re: ar, c_out = Im: ai); for c_in = Im: (−ai, ar).
	fromRe := Stack([]*Node{ar, ai}, outAxis)
	fromIm := Stack([]*Node{Neg(ai), ar}, outAxis)
	return Stack([]*Node{fromRe, fromIm}, inAxis)
}

// matA returns the real matrix of the first four-step stage, A[j2, d, k1, c, j1], the
// real form of scale · ω_{n1}^{j1 k1} ω_n^{j2 k1} · din_{n2 j1 + j2} (din nil: no diagonal).
func (fs fourStep) matA(g *Graph, dt dtypes.DType, sign, scale float64, din *diag) *Node {
	n1, n2 := fs.n1, fs.n2
	vals := make([]complex128, n2*n1*n1) // [j2, k1, j1]
	for j2 := range n2 {
		for k1 := range n1 {
			for j1 := range n1 {
				vals[(j2*n1+k1)*n1+j1] = complex(scale, 0) * omega(sign, j1*k1, n1) * omega(sign, j2*k1, fs.n)
			}
		}
	}
	ar, ai := cconst(g, dt, vals, n2, n1, n1)
	if din != nil {
		// din_j with j = n2 j1 + j2, laid out [j2, 1, j1].
		lay := func(d *Node) *Node { return InsertAxes(Transpose(Reshape(d, n1, n2), 0, 1), 1) }
		ar, ai = cmul(ar, ai, lay(din.cos), lay(din.sin))
	}
	return block(ar, ai, 1, 3) // [j2, d, k1, c, j1]
}

// stageA applies a = matA(…): x has the four axes c, j1, j2 and batch, with c, j1, j2
// at the positions cAx, j1Ax, j2Ax; the result is
// Y[j2, d, k1, batch] = Σ_{c, j1} A[j2, d, k1, c, j1] x[c, j1, j2, batch].
func stageA(a, x *Node, cAx, j1Ax, j2Ax int) *Node {
	return DotGeneral(a, []int{3, 4}, []int{0}, x, []int{cAx, j1Ax}, []int{j2Ax})
}

// matB returns the real matrix of the second stage without a diagonal, B[e, k2, j2, d],
// the real form of ω_{n2}^{j2 k2}.
func (fs fourStep) matB(g *Graph, dt dtypes.DType, sign float64) *Node {
	n2 := fs.n2
	vals := make([]complex128, n2*n2) // [k2, j2]
	for k2 := range n2 {
		for j2 := range n2 {
			vals[k2*n2+j2] = omega(sign, j2*k2, n2)
		}
	}
	br, bi := cconst(g, dt, vals, n2, n2)
	return block(br, bi, 0, 3) // [e, k2, j2, d]
}

// stageB applies b = matB(…) to Y[j2, d, k1, batch]: the result, [e, k2, k1, batch], is
// the spectrum X_k, k = k1 + n1 k2, in layout [2, n2, n1, batch].
func stageB(b, y *Node) *Node { return DotGeneral(b, []int{2, 3}, nil, y, []int{0, 1}, nil) }

// matBDiag returns the real matrix of the second stage batched over k1 with the diagonal
// dout (applied after the DFT) folded in, B[k1, e, k2, j2, d]: ω_{n2}^{j2 k2} dout_{k1 + n1 k2}.
func (fs fourStep) matBDiag(g *Graph, dt dtypes.DType, sign float64, dout diag) *Node {
	n1, n2 := fs.n1, fs.n2
	vals := make([]complex128, n2*n2) // [k2, j2]
	for k2 := range n2 {
		for j2 := range n2 {
			vals[k2*n2+j2] = omega(sign, j2*k2, n2)
		}
	}
	br, bi := cconst(g, dt, vals, 1, n2, n2)
	// dout_k with k = k1 + n1 k2, laid out [k1, k2, 1].
	lay := func(d *Node) *Node { return InsertAxes(Transpose(Reshape(d, n2, n1), 0, 1), 2) }
	br, bi = cmul(br, bi, lay(dout.cos), lay(dout.sin)) // [k1, k2, j2]
	return block(br, bi, 1, 4)                          // [k1, e, k2, j2, d]
}

// stageBDiag applies b = matBDiag(…) to Y[k1, j2, d, batch] (stage A's output with k1
// moved first): the result is [k1, e, k2, batch].
func stageBDiag(b, y *Node) *Node {
	return DotGeneral(b, []int{3, 4}, []int{0}, y, []int{1, 2}, []int{0})
}

// dft returns the unitary DFT (inverse: F⁻¹) of the complex vectors x [batch, 2n] =
// [Re z | Im z], in the same layout: 5 graph nodes (reshape, two DotGenerals, transpose,
// reshape).
func (fs fourStep) dft(x *Node, inverse bool) *Node {
	batch := x.Shape().Dim(0)
	sign := -1.0
	if inverse {
		sign = 1
	}
	g, dt := x.Graph(), x.DType()
	a := fs.matA(g, dt, sign, 1/math.Sqrt(float64(fs.n)), nil)
	y := stageA(a, Reshape(x, batch, 2, fs.n1, fs.n2), 1, 2, 3)
	out := stageB(fs.matB(g, dt, sign), y)                           // [e, k2, k1, batch]
	return Reshape(TransposeAllAxes(out, 3, 0, 1, 2), batch, 2*fs.n) // [batch, e, k2, k1]
}
