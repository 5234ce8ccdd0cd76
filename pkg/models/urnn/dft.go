package urnn

import (
	"math"
	"math/cmplx"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
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
// c_out), c_out inserted at axis outAxis of S and then c_in at axis inAxis of the result
// (so with inAxis ≤ outAxis, c_out ends at outAxis + 1 of the final rank-(|S|+2) result).
func block(ar, ai *Node, outAxis, inAxis int) *Node {
	// For c_in = Re: (c_out = Re: ar, c_out = Im: ai); for c_in = Im: (−ai, ar).
	fromRe := Stack([]*Node{ar, ai}, outAxis)
	fromIm := Stack([]*Node{Neg(ai), ar}, outAxis)
	return Stack([]*Node{fromRe, fromIm}, inAxis)
}

// The stages below take and give the data batch b right after the DotGenerals' batch axis
// (the DFT's j2 or k1), with the states as the left operand: the layouts the Go backend
// multiplies without transposing, and whose gradients with respect to the states need no
// transpose either (those with respect to the matrices do: see below). The
// layout changes between the stages are all transposes of two blocks of axes ([A, B] →
// [B, A], or [A, B, C] → [B, A, C]), which the Go backend copies row by row instead of
// element by element (generic transposes were 45% of a uRNN 512 training step before; one
// that kept a last axis of only 2 values, stageBDiag's, was still walked pair by pair until
// it became two block swaps: 1.70 → 1.61 s a uRNN 512 step at adding T = 750). The
// gradients with respect to the matrices (which hold D1, D2, D3) contract the data batch, and
// the backend transposes operands for each of those inside its DotGeneral; applying D1, D2
// and D3 to the states instead (the matrices then constant) measured no faster (1.50–1.60 s
// folded, 1.56–1.62 s unfolded at T = 750) with 25 more nodes a step forward, 78 in all.
// Those transposes are the backend's: GoMLX's gradient of the matrix contracts v = ∂C/∂Y over
// the data batch, which sits in the middle of Y, and compute's DotGeneral multiplies without
// copying only when the left operand's contracted axes are trailing, so it copies both operands
// through its generic transpose (the 3 products holding a variable: 6 copies a step at N = 512,
// about a fifth of a step in a CPU profile). This holds for the right operand of any product: its gradient contracts
// v over the left operand's free axes, which follow v's batch axes, so with the matrix on the
// left (Y = [j2, k1, d, batch]) the states' gradient would copy v and the (larger) matrix at
// every step instead.

// input lays out states x [batch, 2n] = [Re z | Im z], z_j with j = n2 j1 + j2, as stage
// A's input [j2, batch, c, j1]: one transpose of two blocks.
func (fs fourStep) input(x *Node) *Node {
	batch := x.Shape().Dim(0)
	return Reshape(Transpose(Reshape(x, batch*2*fs.n1, fs.n2), 0, 1), fs.n2, batch, 2, fs.n1)
}

// matA returns the real matrix of the first four-step stage, A[j2, k1, d, c, j1], the
// real form of scale · ω_{n1}^{j1 k1} ω_n^{j2 k1} · din_{n2 j1 + j2} (din nil: no
// diagonal); with toBDiag its free axes come the other way round, A[j2, d, k1, c, j1], the
// layout stageBDiag takes. Its axes are ordered batch, free, contracted: the order in which
// GoMLX's gradient of a DotGeneral produces them, so that gradient needs no transpose either.
func (fs fourStep) matA(g *Graph, dt dtypes.DType, sign, scale float64, din *diag, toBDiag bool) *Node {
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
	if toBDiag {
		return block(ar, ai, 1, 3) // [j2, d, k1, c, j1]
	}
	return block(ar, ai, 2, 3) // [j2, k1, d, c, j1]
}

// stageA applies a = matA(…) to x [j2, batch, c, j1] (input's layout):
// Y[j2, batch, k1, d] = Σ_{c, j1} x[j2, batch, c, j1] A[j2, k1, d, c, j1] (Y[j2, batch, d, k1]
// for a matA toBDiag).
func stageA(a, x *Node) *Node { return DotGeneral(x, []int{2, 3}, []int{0}, a, []int{3, 4}, []int{0}) }

// matB returns the real matrix of the second stage without a diagonal, B[e, k2, j2, d],
// the real form of ω_{n2}^{j2 k2} (axes free, contracted).
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

// stageB applies b = matB(…) to Y[j2, batch, k1, d]: the result, [batch, k1, e, k2], is the
// spectrum X_k, k = k1 + n1 k2, with k1 before the component e.
func (fs fourStep) stageB(b, y *Node) *Node {
	batch := y.Shape().Dim(1)
	y = Transpose(Reshape(y, fs.n2, batch*fs.n1, 2), 0, 1) // [(batch k1), j2, d]
	return Reshape(DotGeneral(y, []int{1, 2}, nil, b, []int{2, 3}, nil), batch, fs.n1, 2, fs.n2)
}

// matBDiag returns the real matrix of the second stage batched over k1 with the diagonal
// dout (applied after the DFT) folded in, B[k1, e, k2, j2, d]: ω_{n2}^{j2 k2} dout_{k1 + n1 k2}
// (axes batch, free, contracted, as matA's).
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
	return block(br, bi, 1, 3)                          // [k1, e, k2, d, j2]
}

// stageBDiag applies b = matBDiag(…) to Y[j2, batch, d, k1] (stage A's output with a matA
// toBDiag): the result, [k1, batch, e, k2], is the spectrum with k1 first. Bringing k1 to the
// front and j2 to the back takes two transposes of blocks, [j2, (batch d k1)] → [(batch d k1), j2]
// and then [(batch d), k1, j2] → [k1, (batch d), j2], each copied in runs of n2 or more values:
// one transpose [j2, batch, k1, d] → [k1, batch, j2, d] would keep a last axis of 2 values,
// which the backend walks pair by pair (a quarter of a uRNN 512 step).
func stageBDiag(b, y *Node) *Node {
	n2, batch, n1 := y.Shape().Dim(0), y.Shape().Dim(1), y.Shape().Dim(3)
	y = Reshape(Transpose(Reshape(y, n2, batch*2*n1), 0, 1), batch*2, n1, n2) // [(batch d), k1, j2]
	y = Reshape(TransposeAllAxes(y, 1, 0, 2), n1, batch, 2, n2)               // [k1, batch, d, j2]
	return DotGeneral(y, []int{2, 3}, []int{0}, b, []int{3, 4}, []int{0})
}

// output lays out the spectrum [k1, batch, e, k2] (stageBDiag's) as states [batch, 2n]
// = [Re X | Im X] with k = k1 + n1 k2: one transpose of two blocks.
func (fs fourStep) output(spec *Node) *Node {
	batch := spec.Shape().Dim(1)
	return Reshape(Transpose(Reshape(spec, fs.n1, batch*2*fs.n2), 0, 1), batch, 2*fs.n)
}

// dft returns the unitary DFT (inverse: F⁻¹) of the complex vectors x [batch, 2n] =
// [Re z | Im z], in the same layout (the second stage batched over k1, with no diagonal).
func (fs fourStep) dft(x *Node, inverse bool) *Node {
	sign := -1.0
	if inverse {
		sign = 1
	}
	g, dt := x.Graph(), x.DType()
	one := diag{Ones(g, shapes.Make(dt, fs.n)), Zeros(g, shapes.Make(dt, fs.n))}
	a := fs.matA(g, dt, sign, 1/math.Sqrt(float64(fs.n)), nil, true)
	return fs.output(stageBDiag(fs.matBDiag(g, dt, sign, one), stageA(a, fs.input(x))))
}
