package urnn

import (
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/support/exceptions"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// unitary is W = D3 R2 F⁻¹ D2 Π R1 F D1 ([1] §2, eq. 7) built into one graph, with all
// per-parameter work (cos/sin of θ, normalised reflections, the DFT matrices, or the whole
// matrix for DenseW) done once in newUnitary.
type unitary struct {
	n    int
	impl Impl
	fs   fourStep
	d    [3]diag     // D_k = diag(cos θ_k + i sin θ_k)
	v    [2][2]*Node // normalised reflection vectors (Re, Im), [n] each
	perm []int

	p2, q2 *Node // R_{D3 v2} on states: u − (u·p2)·q2 ([2n, 2], [2, 2n]; q2 = 2p2ᵀ)
	V      *Node // the input matrix [In, 2n]

	// FourStep (see fourStep):
	p1, q1 *Node               // R_{u1}, u1 = D1* F⁻¹ v1, on states: u − (u·p1ᵀ)·q1 ([4, 2n] each, q1 = 2p1; padRows)
	p2t    *Node               // p2ᵀ, [4, 2n] (padRows)
	m2     *Node               // [−q2; 0; V; 0], [4+In+pad, 2n]: R_{D3 v2} u + V x = u + [u·p2t | x | 0]·m2 (padRows)
	xPad   map[int]*Node       // the zeros [b, pad] after x, by batch size b
	dc, ds [3]*Node            // D_k as x ↦ x⊙dc + swap(x⊙ds): D1, D3 on states [1, 2, n], D2 on SQ [n2, 2, n1, 1]
	gather [2]*Node            // Π from SF to SQ and Π* from SQ to SQ, row indices [2n, 1]
	dcB    map[int][6]*Node    // dc and ds broadcast to the states' or the spectrum's shape, by batch size
	wT     *Node               // DenseW: the transpose of the real matrix M with state·M = W state, [2n, 2n] (for rnn.Times)
	custom func(h *Node) *Node // apply of a test-only variant (variants_test.go)
}

// diag is a diagonal unitary D = diag(cos θ + i sin θ), as two [n] nodes.
type diag struct{ cos, sin *Node }

// cmul returns (ar + i ai)(br + i bi) for broadcastable nodes.
func cmul(ar, ai, br, bi *Node) (re, im *Node) {
	return Sub(Mul(ar, br), Mul(ai, bi)), Add(Mul(ar, bi), Mul(ai, br))
}

// testImpls are implementations used only by the tests and benchmarks (variants_test.go).
var testImpls map[Impl]func(u *unitary, like *Node) func(h *Node) *Node

func newUnitary(n int, theta, reflection, V *Node, perm []int, impl Impl) *unitary {
	u := &unitary{n: n, impl: impl, fs: newFourStep(n), perm: perm, V: V, dcB: map[int][6]*Node{}, xPad: map[int]*Node{}}
	for k := range 3 {
		t := Squeeze(SliceAxis(theta, 0, AxisElem(k)), 0)
		u.d[k] = diag{Cos(t), Sin(t)}
	}
	for k := range 2 {
		vr := Squeeze(Slice(reflection, AxisElem(k), AxisElem(0)), 0, 1)
		vi := Squeeze(Slice(reflection, AxisElem(k), AxisElem(1)), 0, 1)
		inv := Reciprocal(Sqrt(ReduceAllSum(Add(Mul(vr, vr), Mul(vi, vi)))))
		u.v[k] = [2]*Node{Mul(vr, inv), Mul(vi, inv)}
	}
	// R2 is applied after D3: D3 R2 = R_{D3 v2} D3 (D3 is unitary).
	v2r, v2i := cmul(u.v[1][0], u.v[1][1], u.d[2].cos, u.d[2].sin)
	u.p2 = reflectionRows(v2r, v2i)
	u.q2 = MulScalar(Transpose(u.p2, 0, 1), 2)
	switch impl {
	case FourStep, DenseW:
		g, dt := theta.Graph(), theta.DType()
		u.fs = u.fs.build(g, dt)
		fs := u.fs
		// R1 is applied first, before D1: R1 F D1 = F D1 R_{u1} with u1 = D1* F⁻¹ v1.
		w := fs.dft(Reshape(Concatenate([]*Node{u.v[0][0], u.v[0][1]}, 0), 1, 2*n), true)
		wr, wi := split(w)
		u1r, u1i := cmul(Squeeze(wr, 0), Squeeze(wi, 0), u.d[0].cos, Neg(u.d[0].sin))
		u.p1 = padRows(Transpose(reflectionRows(u1r, u1i), 0, 1))
		u.q1 = MulScalar(u.p1, 2)
		u.p2t = padRows(Transpose(u.p2, 0, 1))
		u.m2 = padRows(Concatenate([]*Node{padRows(Neg(u.q2)), V}, 0))
		// D x = x⊙[cos θ; cos θ] + swap(x⊙[sin θ; −sin θ]), swap exchanging Re and Im.
		for k := range 3 {
			c, s := u.d[k].cos, u.d[k].sin
			u.dc[k], u.ds[k] = Stack([]*Node{c, c}, 0), Stack([]*Node{s, Neg(s)}, 0) // [2, n]
			if k == 1 {
				// D2 acts on the spectrum in layout SQ, rows (q, c, r) for k = r + n1 q.
				lay := func(x *Node) *Node {
					return InsertAxes(TransposeAllAxes(Reshape(x, 2, fs.n2, fs.n1), 1, 0, 2), -1)
				}
				u.dc[k], u.ds[k] = lay(u.dc[k]), lay(u.ds[k])
			} else {
				u.dc[k], u.ds[k] = InsertAxes(u.dc[k], 0), InsertAxes(u.ds[k], 0) // [1, 2, n]
			}
		}
		// Π from SF to SQ and Π* = Π⁻¹ within SQ: (Π z)_j = z_{perm[j]}, (Π* z)_k = z_{inv[k]}.
		inv := make([]int, n)
		for j, p := range perm {
			inv[p] = j
		}
		idx := [2][]int32{make([]int32, 2*n), make([]int32, 2*n)}
		for j := range n {
			for c := range 2 {
				idx[0][fs.rowQ(j, c)] = int32(fs.rowF(perm[j], c))
				idx[1][fs.rowQ(j, c)] = int32(fs.rowQ(inv[j], c))
			}
		}
		for i := range idx {
			u.gather[i] = Reshape(Const(g, idx[i]), 2*n, 1)
		}
	}
	switch impl {
	case DenseW:
		u.wT = Transpose(u.fourStep(identity(theta, 2*n), nil), 0, 1)
	default:
		if prep := testImpls[impl]; prep != nil {
			u.custom = prep(u, theta)
		}
	}
	return u
}

// identity returns the real [m, m] identity in the dtype of like.
func identity(like *Node, m int) *Node {
	v := make([]float64, m*m)
	for i := range m {
		v[i*m+i] = 1
	}
	return Reshape(ConstAsDType(like.Graph(), like.DType(), v), m, m)
}

// reflectionRows returns P [2n, 2] for the unit vector v = (vr, vi) such that, for states
// u [batch, 2n] = [Re | Im], u·P = [Re v*u, Im v*u]; R_v u = u − 2 (u·P)·Pᵀ.
func reflectionRows(vr, vi *Node) *Node {
	return Stack([]*Node{Concatenate([]*Node{vr, vi}, 0), Concatenate([]*Node{Neg(vi), vr}, 0)}, 1)
}

// apply returns W h + V x for states h [batch, 2n] and inputs x [batch, In].
func (u *unitary) apply(h, x *Node) *Node {
	if u.impl == FourStep {
		return u.fourStep(h, x)
	}
	return Add(u.applyW(h), rnn.ProjectInputs(x, u.V))
}

// applyW returns W h for states h [batch, 2n].
func (u *unitary) applyW(h *Node) *Node {
	switch u.impl {
	case DenseW:
		return rnn.Times(h, u.wT)
	case FourStep:
		return u.fourStep(h, nil)
	case Native:
		return u.native(h)
	}
	if u.custom != nil {
		return u.custom(h)
	}
	exceptions.Panicf("urnn: unknown Impl %s", u.impl)
	return nil
}

// fourStep returns W h + V x for states h [batch, 2n] and inputs x [batch, In] (x nil: W h),
// with
//
//	W h = R_{D3 v2} D3 · F⁻¹ · D2 · Π F · D1 R_{u1} h,   u1 = D1* F⁻¹ v1
//
// (R1 F D1 = F D1 R_{u1} and D3 R2 = R_{D3 v2} D3, since F and the D_k are unitary), and V x
// added by the matmul of the rank-2 update of the last reflection. The factors with
// parameters (the reflections and the diagonals) are plain graph operations, differentiated
// by GoMLX; the two linear blocks without parameters, Π F (states → spectrum in layout SQ) and
// F⁻¹ (SQ → states), are applied by withAdjoint, with their adjoints F⁻¹ Π* and F as
// gradients.
func (u *unitary) fourStep(h, x *Node) *Node {
	fs, n := u.fs, u.n
	b := h.Shape().Dim(0)
	y := Sub(h, rnn.Product(rnn.Product(h, 1, u.p1, 1), 1, u.q1, 0)) // R_{u1} h
	d := u.diagonals(b)
	y = diagonal(y, d[0], d[1], 1, b, 2, n)  // D1
	y = withAdjoint(y, func(y *Node) *Node { // Π F
		return Gather(Reshape(fs.forward(y), 2*n, b), u.gather[0])
	}, func(v *Node) *Node { // F⁻¹ Π*
		return fs.inverse(fs.toFirst(Gather(v, u.gather[1])))
	})
	y = diagonal(y, d[2], d[3], 1, fs.n2, 2, fs.n1, b)                           // D2
	y = withAdjoint(y, func(z *Node) *Node { return fs.inverse(fs.toFirst(z)) }, // F⁻¹
		func(v *Node) *Node { return fs.toQ(fs.forward(v)) }) // F
	y = diagonal(y, d[4], d[5], 1, b, 2, n) // D3
	s2 := rnn.Product(y, 1, u.p2t, 1)       // [b, 4]
	m := u.m2
	if x != nil {
		parts := []*Node{s2, x}
		if pad := u.inputPad(b); pad != nil {
			parts = append(parts, pad)
		}
		s2 = Concatenate(parts, 1)
	} else {
		m = SliceAxis(m, 0, AxisRange(0, 4))
	}
	return Add(y, rnn.Product(s2, 1, m, 0)) // R_{D3 v2} y + V x
}

// diagonals returns dc and ds of D1, D2 and D3 broadcast to the shapes diagonal multiplies
// them with for a data batch of b (made once per graph and b).
func (u *unitary) diagonals(b int) [6]*Node {
	d, ok := u.dcB[b]
	if !ok {
		for k := range 3 {
			dims := []int{b, 2, u.n}
			if k == 1 {
				dims = []int{u.fs.n2, 2, u.fs.n1, b}
			}
			d[2*k], d[2*k+1] = BroadcastToDims(u.dc[k], dims...), BroadcastToDims(u.ds[k], dims...)
		}
		u.dcB[b] = d
	}
	return d
}

// diagonal returns D x for the complex vectors in x, seen as the shape dims whose axis c is
// the component (Re, Im), and D given by dc = [cos θ; cos θ] and dr = [sin θ; −sin θ]
// broadcastable to dims ([1] §2, first factor type):
//
//	(D x)_j = e^{iθ_j} x_j = x_j⊙(cos θ_j, cos θ_j) + swap(x_j⊙(sin θ_j, −sin θ_j)),
//
// swap exchanging Re and Im (a Reverse of axis c).
func diagonal(x, dc, dr *Node, c int, dims ...int) *Node {
	x4 := Reshape(x, dims...)
	return Reshape(Add(Mul(x4, dc), Reverse(Mul(x4, dr), c)), x.Shape().Dimensions...)
}

// withAdjoint returns f(x) for a linear map f without parameters, whose gradient GoMLX does
// not build: the gradient with respect to x is fT(v), fT the adjoint of f (the transpose of
// its real matrix), v the gradient with respect to f(x). f(x) and x must have the same size.
// The gradient enters through x − StopGradient(x), zero, added to f(x).
func withAdjoint(x *Node, f, fT func(*Node) *Node) *Node {
	xs := StopGradient(x)
	y := StopGradient(f(xs))
	dims := y.Shape().Dimensions
	carrier := IdentityWithCustomGradient(Reshape(Sub(x, xs), dims...), func(_, v *Node) *Node {
		return Reshape(fT(v), dims...)
	})
	return Add(y, carrier)
}

// padRows returns the rows of x [r, m] followed by rows of zeros up to a multiple of 4. The
// products of the states with such rows, [b, r], and of their gradients, are then products
// that the Go backend's small matmul kernels compute in whole tiles of 4 rows or columns; rows
// left over from the tiles they take one scalar at a time. The zero rows change no sum.
func padRows(x *Node) *Node {
	r, m := x.Shape().Dim(0), x.Shape().Dim(1)
	if r%4 == 0 {
		return x
	}
	return Concatenate([]*Node{x, Zeros(x.Graph(), shapes.Make(x.DType(), 4-r%4, m))}, 0)
}

// inputPad returns the zeros [b, pad] that follow the inputs x in the rows m2 multiplies, nil
// for pad = 0 (made once per graph and b).
func (u *unitary) inputPad(b int) *Node {
	pad := u.m2.Shape().Dim(0) - 4 - u.V.Shape().Dim(0)
	if pad == 0 {
		return nil
	}
	z, ok := u.xPad[b]
	if !ok {
		z = Zeros(u.m2.Graph(), shapes.Make(u.m2.DType(), b, pad))
		u.xPad[b] = z
	}
	return z
}

// reflect returns u − (u·p)·q for states u [batch, 2n], p [2n, 2], q = 2pᵀ.
func reflect(x, p, q *Node) *Node { return Sub(x, MatMul(MatMul(x, p), q)) }
