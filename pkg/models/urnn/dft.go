package urnn

import (
	"math"
	"math/cmplx"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
)

// The unitary DFT in real arithmetic (the Go backend has no complex dtype and no FFT).
//
// F z, (F z)_k = n^{−1/2} Σ_j ω^{jk} z_j with ω = e^{−2πi/n} (F⁻¹ = F*: ω̄ = e^{+2πi/n}), is
// computed as a four-step FFT (Cooley–Tukey with n = n1·n2; Bailey 1990). With the state
// index j = n2 j1 + j2 and the spectral index k = r + n1 q (j1, r ∈ [n1]; j2, q ∈ [n2]),
//
//	ω^{jk} = ω_{n1}^{j1 r} · ω_n^{j2 r} · ω_{n2}^{j2 q},
//
// so F is two batched real matmuls (DotGenerals):
//
//	stage 1:  Y_{r, j2} = Σ_{j1} ω_{n1}^{j1 r} x_{n2 j1 + j2}                (an n1-point DFT per j2)
//	stage 2:  X_{r + n1 q} = Σ_{j2} ω_n^{j2 r} ω_{n2}^{j2 q} Y_{r, j2}         (an n2-point DFT per r, twiddles folded in)
//
// and F⁻¹, with the state index m = n2 m1 + m2 of its output, is the same two stages
// conjugated and in the reverse order:
//
//	stage 1:  Y_{r, m2} = Σ_q ω̄_n^{r m2} ω̄_{n2}^{q m2} X_{r + n1 q}
//	stage 2:  x_{n2 m1 + m2} = Σ_r ω̄_{n1}^{r m1} Y_{r, m2}
//
// Complex numbers travel as a real axis c ∈ {Re, Im} of size 2, and a complex matrix entry a
// acts on it as the real 2×2 block [[Re a, Im a], [−Im a, Re a]] (row c_in, column c_out).
// Any n works: n1 is the largest divisor of n not above √n (n1 = 1 for a prime n, where
// stage 2 is a dense DFT).
//
// Layouts. The states are [b, 2n] = [Re z | Im z], that is [b, c, j1, j2], b the data batch.
// The spectrum X_k, k = r + n1 q, lives in three layouts:
//
//	SB = [r, b, (c q)]   what F⁻¹'s first stage takes (batch b in the middle)
//	SF = [(r c q), b]    what F's second stage gives, the data batch last
//	SQ = [(q c r), b]    the layout of Π's output (a Gather of whole rows of b values) and of D2
//
// Every matmul takes its operands in a layout the Go backend multiplies without copying
// them: stage 1 of F and stage 2 of F⁻¹ contract the axes right after the data batch, with
// the matrix (broadcast over b) on the left; stage 1 of F⁻¹ contracts the last axis of the
// states, batched over r; stage 2 of F contracts the last axis of the states with the matrix
// on the left, batched over r, so that b comes out last. Between layouts the data moves by
// transposes that keep the last axis, or are two-dimensional with a short first axis (n2): the
// kinds the backend copies fastest.
//
// None of this is differentiated by GoMLX: the DFTs and Π are linear maps without
// parameters whose adjoints (the transposes of their real matrices) are known — F's is F⁻¹,
// Π's is Π⁻¹, a transpose's is the inverse transpose — and withAdjoint applies those as their
// gradients (see unitary.fourStep).

// fourStep holds the factorisation n = n1·n2 of the four-step DFT and, once built into a
// graph (build), the real matrices of its stages.
type fourStep struct {
	n, n1, n2 int

	m1, h  *Node            // stage 1 of F, [(r d), (c j1)]; stage 2 of F⁻¹, [(e m1), (r d)]
	g2, g1 *Node            // stage 2 of F, [r, (e q), (d j2)]; stage 1 of F⁻¹, [r, (c q), (d m2)]
	perB   map[int][2]*Node // m1 and h broadcast to [b, ·, ·], by batch size b
}

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

// realBlocks lays out the real form of the complex matrix a[o][i] (input i, output o), the
// block of a[o][i] being [[Re, Im], [−Im, Re]][c][d] (input component c, output component
// d), as a flat matrix whose entry (o, d, c, i) sits at at(o, d, c, i).
func realBlocks(a [][]complex128, at func(o, d, c, i int) int) []float64 {
	O, I := len(a), len(a[0])
	v := make([]float64, 4*O*I)
	for o := range O {
		for i := range I {
			x := a[o][i]
			block := [2][2]float64{{real(x), imag(x)}, {-imag(x), real(x)}}
			for c := range 2 {
				for d := range 2 {
					v[at(o, d, c, i)] = block[c][d]
				}
			}
		}
	}
	return v
}

// complexMatrix returns a[o][i] = f(o, i) for o ∈ [rows], i ∈ [cols].
func complexMatrix(rows, cols int, f func(o, i int) complex128) [][]complex128 {
	a := make([][]complex128, rows)
	for o := range a {
		a[o] = make([]complex128, cols)
		for i := range a[o] {
			a[o][i] = f(o, i)
		}
	}
	return a
}

// build returns fs with the stage matrices as constants of g in dtype dt (the scale
// n^{−1/2} of the unitary DFT is in stage 1 of F and stage 2 of F⁻¹).
func (fs fourStep) build(g *Graph, dt dtypes.DType) fourStep {
	n, n1, n2 := fs.n, fs.n1, fs.n2
	scale := complex(1/math.Sqrt(float64(n)), 0)
	fs.m1 = Reshape(ConstAsDType(g, dt, realBlocks(complexMatrix(n1, n1, func(r, j1 int) complex128 {
		return scale * omega(-1, j1*r, n1)
	}), func(r, d, c, j1 int) int { return ((r*2+d)*2+c)*n1 + j1 })), 2*n1, 2*n1) // [(r d), (c j1)]
	fs.h = Reshape(ConstAsDType(g, dt, realBlocks(complexMatrix(n1, n1, func(m1, r int) complex128 {
		return scale * omega(1, r*m1, n1)
	}), func(m1, e, d, r int) int { return ((e*n1+m1)*n1+r)*2 + d })), 2*n1, 2*n1) // [(e m1), (r d)]
	var g2, g1 []float64
	for r := range n1 {
		g2 = append(g2, realBlocks(complexMatrix(n2, n2, func(q, j2 int) complex128 {
			return omega(-1, j2*r, n) * omega(-1, j2*q, n2)
		}), func(q, e, d, j2 int) int { return ((e*n2+q)*2+d)*n2 + j2 })...) // [(e q), (d j2)]
		g1 = append(g1, realBlocks(complexMatrix(n2, n2, func(m2, q int) complex128 {
			return omega(1, r*m2, n) * omega(1, q*m2, n2)
		}), func(m2, d, c, q int) int { return ((c*n2+q)*2+d)*n2 + m2 })...) // [(c q), (d m2)]
	}
	fs.g2 = Reshape(ConstAsDType(g, dt, g2), n1, 2*n2, 2*n2)
	fs.g1 = Reshape(ConstAsDType(g, dt, g1), n1, 2*n2, 2*n2)
	fs.perB = map[int][2]*Node{}
	return fs
}

// perBatch returns m1 and h broadcast over a data batch of b (made once per graph and b).
func (fs fourStep) perBatch(b int) (m1, h *Node) {
	m, ok := fs.perB[b]
	if !ok {
		bc := func(x *Node) *Node { return BroadcastToDims(InsertAxes(x, 0), b, 2*fs.n1, 2*fs.n1) }
		m = [2]*Node{bc(fs.m1), bc(fs.h)}
		fs.perB[b] = m
	}
	return m[0], m[1]
}

// forward applies F to states x [b, 2n] and returns the spectrum in layout SF, [n1, 2n2, b]
// (rows (r, c, q)).
func (fs fourStep) forward(x *Node) *Node {
	b, n1, n2 := x.Shape().Dim(0), fs.n1, fs.n2
	m1, _ := fs.perBatch(b)
	y := DotGeneral(m1, []int{2}, []int{0}, Reshape(x, b, 2*n1, n2), []int{1}, []int{0}) // [b, (r d), j2]
	y = Transpose(Reshape(y, b, n1, 2*n2), 0, 1)                                         // [r, b, (d j2)]
	return DotGeneral(fs.g2, []int{2}, []int{0}, y, []int{2}, []int{0})                  // [r, (e q), b]
}

// inverse applies F⁻¹ to a spectrum in layout SB, [n1, b, 2n2], and returns states [b, 2n].
func (fs fourStep) inverse(z *Node) *Node {
	b, n1, n2 := z.Shape().Dim(1), fs.n1, fs.n2
	_, h := fs.perBatch(b)
	y := DotGeneral(z, []int{2}, []int{0}, fs.g1, []int{1}, []int{0}) // [r, b, (d m2)]
	y = Reshape(Transpose(y, 0, 1), b, 2*n1, n2)                      // [b, (r d), m2]
	x := DotGeneral(h, []int{2}, []int{0}, y, []int{1}, []int{0})     // [b, (e m1), m2]
	return Reshape(x, b, 2*fs.n)
}

// toFirst moves a spectrum from layout SQ, [2n, b], to SB, [n1, b, 2n2]: a 2-D transpose
// whose first axis is q, then a transpose that keeps the last axis.
func (fs fourStep) toFirst(z *Node) *Node {
	b, n1, n2 := z.Shape().Dim(1), fs.n1, fs.n2
	z = Transpose(Reshape(z, n2, 2*n1*b), 0, 1)                // [(c r b), q]
	z = TransposeAllAxes(Reshape(z, 2, n1, b, n2), 1, 2, 0, 3) // [r, b, c, q]
	return Reshape(z, n1, b, 2*n2)
}

// toQ moves a spectrum from layout SF, [n1, 2n2, b], to SQ, [2n, b]: a transpose that keeps
// the last axis.
func (fs fourStep) toQ(z *Node) *Node {
	b := z.Shape().Dim(2)
	return Reshape(TransposeAllAxes(Reshape(z, fs.n1, 2, fs.n2, b), 2, 1, 0, 3), 2*fs.n, b)
}

// rowF and rowQ return the row of layouts SF and SQ holding component c of X_k, k = r + n1 q.
func (fs fourStep) rowF(k, c int) int { return ((k%fs.n1)*2+c)*fs.n2 + k/fs.n1 }
func (fs fourStep) rowQ(k, c int) int { return ((k/fs.n1)*2+c)*fs.n1 + k%fs.n1 }

// dft returns the unitary DFT (inverse: F⁻¹) of the complex vectors x [batch, 2n] =
// [Re z | Im z], in the same layout (for the exported factors F and Finv: the spectrum is
// moved to the state layout, X_k with k = r + n1 q at position k).
func (fs fourStep) dft(x *Node, inverse bool) *Node {
	if fs.m1 == nil || fs.m1.Graph() != x.Graph() || fs.m1.DType() != x.DType() {
		fs = fs.build(x.Graph(), x.DType())
	}
	b, n1, n2 := x.Shape().Dim(0), fs.n1, fs.n2
	if inverse {
		z := TransposeAllAxes(Reshape(x, b, 2, n2, n1), 3, 0, 1, 2) // [r, b, c, q]
		return fs.inverse(Reshape(z, n1, b, 2*n2))
	}
	z := Reshape(fs.forward(x), n1, 2, n2, b)
	return Reshape(TransposeAllAxes(z, 3, 1, 2, 0), b, 2*fs.n) // [b, e, q, r]
}
