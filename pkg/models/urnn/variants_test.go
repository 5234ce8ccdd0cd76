package urnn

import (
	"math"

	. "github.com/gomlx/gomlx/core/graph"
)

// The two DFT variants that lost to the four-step FFT in BenchmarkDFT (package doc),
// kept in this test file so that the measurement can be repeated.
const (
	implDenseDFT Impl = 100 + iota
	implRadix2
)

func init() {
	testImpls = map[Impl]func(u *unitary, like *Node) func(h *Node) *Node{
		implDenseDFT: prepareDenseDFT,
		implRadix2:   prepareRadix2,
	}
}

type variantState struct {
	u          *unitary
	a1, a2     *Node // dense DFT: F D1 and D3 F⁻¹ D2 Π as [2n, 2n] row matrices
	p1r, q1r   *Node // R1 in state layout
	cc, ss     [3]*Node
	permRowIdx *Node
	tw         map[int][2]*Node
}

// prepareDenseDFT returns W h = R_{D3 v2} (R1 (h·A1))·A2 with the dense real matrices
// A1 = F D1 and A2 = D3 F⁻¹ D2 Π (rows = inputs), made by applying the factors to the identity.
func prepareDenseDFT(u *unitary, like *Node) func(h *Node) *Node {
	n, fs := u.n, u.fs
	vs := &variantState{u: u}
	d := func(x *Node, k int) *Node {
		c, s := u.d[k].cos, u.d[k].sin
		return diagonal(x, InsertAxes(Stack([]*Node{c, c}, 0), 0), InsertAxes(Stack([]*Node{s, Neg(s)}, 0), 0), 1, 2*n, 2, n)
	}
	eye := identity(like, 2*n)
	vs.a1 = fs.dft(d(eye, 0), false)
	re, im := split(eye)
	re, im = permPair(re, im, u.perm)
	vs.a2 = d(fs.dft(d(Concatenate([]*Node{re, im}, 1), 1), true), 2)
	vs.p1r = reflectionRows(u.v[0][0], u.v[0][1])
	vs.q1r = MulScalar(Transpose(vs.p1r, 0, 1), 2)
	return func(h *Node) *Node {
		x := reflect(MatMul(h, vs.a1), vs.p1r, vs.q1r)
		return reflect(MatMul(x, vs.a2), u.p2, u.q2)
	}
}

// prepareRadix2 returns W h with each factor applied in turn on the state layout and the
// DFTs as radix-2 butterflies (log2 n stages of slices, twiddle multiply, add, sub, concat).
func prepareRadix2(u *unitary, like *Node) func(h *Node) *Node {
	n := u.n
	if n&(n-1) != 0 {
		panic("urnn: radix-2 needs a power-of-two N")
	}
	vs := &variantState{u: u, tw: map[int][2]*Node{}}
	vs.p1r = reflectionRows(u.v[0][0], u.v[0][1])
	vs.q1r = MulScalar(Transpose(vs.p1r, 0, 1), 2)
	for k := range 3 {
		c, s := u.d[k].cos, u.d[k].sin
		vs.cc[k] = InsertAxes(Concatenate([]*Node{c, c}, 0), 0)
		vs.ss[k] = InsertAxes(Concatenate([]*Node{Neg(s), s}, 0), 0)
	}
	idx := make([]int32, n)
	for j, p := range u.perm {
		idx[j] = int32(p)
	}
	vs.permRowIdx = Reshape(Const(like.Graph(), idx), n, 1)
	g, dt := like.Graph(), like.DType()
	for _, sign := range []float64{-1, 1} {
		for L := 2; L < n; L *= 2 {
			tr := make([]float64, 2*L)
			ti := make([]float64, 2*L)
			for k := range L {
				t := omega(sign, k, 2*L)
				tr[k], tr[L+k] = real(t), real(t)
				ti[k], ti[L+k] = -imag(t), imag(t)
			}
			vs.tw[int(sign)*L] = [2]*Node{Reshape(ConstAsDType(g, dt, tr), 1, 2, L, 1, 1), Reshape(ConstAsDType(g, dt, ti), 1, 2, L, 1, 1)}
		}
	}
	return vs.radix2
}
func (vs *variantState) radix2DFT(x *Node, sign float64) *Node {
	n := vs.u.n
	batch := x.Shape().Dim(0)
	s := Reshape(x, batch, 2, 1, n)
	for L := 1; L < n; L *= 2 {
		s5 := Reshape(s, batch, 2, L, 2, n/(2*L))
		e, o := SliceAxis(s5, 3, AxisElem(0)), SliceAxis(s5, 3, AxisElem(1))
		if L > 1 {
			t := vs.tw[int(sign)*L]
			o = Add(Mul(o, t[0]), Mul(swapPair(o, 1), t[1]))
		}
		s = Concatenate([]*Node{Add(e, o), Sub(e, o)}, 2)
	}
	return MulScalar(Reshape(s, batch, 2*n), 1/math.Sqrt(float64(n)))
}

func (vs *variantState) cmulRows(x *Node, k int) *Node {
	batch, n := x.Shape().Dim(0), vs.u.n
	sw := Reshape(swapPair(Reshape(x, batch, 2, n), 1), batch, 2*n)
	return Add(Mul(x, vs.cc[k]), Mul(sw, vs.ss[k]))
}

func (vs *variantState) radix2(h *Node) *Node {
	u := vs.u
	batch, n := h.Shape().Dim(0), u.n
	x := vs.radix2DFT(vs.cmulRows(h, 0), -1)
	x = reflect(x, vs.p1r, vs.q1r)
	x = Reshape(Transpose(Gather(Transpose(Reshape(x, batch*2, n), 0, 1), vs.permRowIdx), 0, 1), batch, 2*n)
	x = vs.radix2DFT(vs.cmulRows(x, 1), +1)
	return reflect(vs.cmulRows(x, 2), u.p2, u.q2)
}

// swapPair exchanges the two entries of axis (Re ↔ Im); Reverse has no gradient in GoMLX.
func swapPair(x *Node, axis int) *Node {
	return Concatenate([]*Node{SliceAxis(x, axis, AxisElem(1)), SliceAxis(x, axis, AxisElem(0))}, axis)
}
