package urnn

import (
	"math"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/support/exceptions"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// unitary is W = D3 R2 F⁻¹ D2 Π R1 F D1 ([1] §2, eq. 7) built into one graph, with all
// per-parameter work (cos/sin of θ, normalised reflections, the folded DFT matrices,
// or the whole matrix for DenseW) done once in newUnitary.
type unitary struct {
	n    int
	impl Impl
	fs   fourStep
	d    [3]diag     // D_k = diag(cos θ_k + i sin θ_k)
	v    [2][2]*Node // normalised reflection vectors (Re, Im), [n] each
	perm []int

	// FourStep: R1 on the spectrum, R_{D3 v2} on the state ([2n, 2] and [2, 2n] each), and
	// the gather indices of Π from the spectrum to the layout before F⁻¹.
	p1, q1  *Node // R1 on the spectrum [batch, (k1, c, k2)]: u − (u·p1)·q1
	p2, q2  *Node // R_{D3 v2} in state layout
	permIdx *Node
	a1, b1  *Node               // F with D1 folded: matA, matB
	a2, b2  *Node               // F⁻¹ with D2 and D3 folded: matA, matBDiag
	wT      *Node               // DenseW: the transpose of the real matrix M with state·M = W state, [2n, 2n] (for rnn.Times)
	custom  func(h *Node) *Node // apply of a test-only variant (variants_test.go)
}

// testImpls are implementations used only by the tests and benchmarks (variants_test.go).
var testImpls map[Impl]func(u *unitary, like *Node) func(h *Node) *Node

func newUnitary(n int, theta, reflection *Node, perm []int, impl Impl) *unitary {
	u := &unitary{n: n, impl: impl, fs: newFourStep(n), perm: perm}
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
		fs := u.fs
		// R1 on the spectrum [batch, 2n] laid out (k1, c, k2), k = k1 + n1 k2: the rows of
		// the state layout (c, k2, k1) moved to it.
		rows := reflectionRows(u.v[0][0], u.v[0][1]) // [2n, 2]
		u.p1 = Reshape(TransposeAllAxes(Reshape(rows, 2, fs.n2, fs.n1, 2), 2, 0, 1, 3), 2*n, 2)
		u.q1 = MulScalar(Transpose(u.p1, 0, 1), 2)
		// Π reads the spectrum, transposed to [(k1, c, k2), batch], into [c, j1, j2, batch]
		// (j = n2 j1 + j2): in_j = spectrum_{perm[j]}.
		idx := make([]int32, 0, 2*n)
		for c := range 2 {
			for j1 := range fs.n1 {
				for j2 := range fs.n2 {
					k := perm[fs.n2*j1+j2]
					idx = append(idx, int32((k%fs.n1)*2*fs.n2+c*fs.n2+k/fs.n1))
				}
			}
		}
		g, dt := theta.Graph(), theta.DType()
		u.permIdx = Reshape(Const(g, idx), 2, fs.n1, fs.n2, 1)
		scale := 1 / math.Sqrt(float64(n))
		u.a1, u.b1 = fs.matA(g, dt, -1, scale, &u.d[0], false), fs.matB(g, dt, -1)
		u.a2, u.b2 = fs.matA(g, dt, +1, scale, &u.d[1], true), fs.matBDiag(g, dt, +1, u.d[2])
	}
	switch impl {
	case DenseW:
		u.wT = Transpose(u.fourStep(identity(theta, 2*n)), 0, 1)
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

// apply returns W h for states h [batch, 2n].
func (u *unitary) apply(h *Node) *Node {
	switch u.impl {
	case DenseW:
		return rnn.Times(h, u.wT)
	case FourStep:
		return u.fourStep(h)
	case Native:
		return u.native(h)
	}
	if u.custom != nil {
		return u.custom(h)
	}
	exceptions.Panicf("urnn: unknown Impl %s", u.impl)
	return nil
}

// fourStep applies W to h [batch, 2n]: D1 and the twiddles fold into stage A of F, R1
// acts on the spectrum, Π is one Gather, D2 folds into stage A of F⁻¹ and D3 into its
// stage B, and R2 is applied last as R_{D3 v2}. Every DotGeneral has the states on the
// left with the data batch right after the batch axis, and every layout change is a
// transpose of two blocks of axes (see input): 4 DotGenerals, 7 such transposes, a
// Gather and the two rank-2 reflections (4 small matmuls) per step (see the note above input
// in dft.go).
func (u *unitary) fourStep(h *Node) *Node {
	fs, n := u.fs, u.n
	batch := h.Shape().Dim(0)
	spec := fs.stageB(u.b1, stageA(u.a1, fs.input(h)))                                     // F D1 h, [batch, k1, c, k2]
	spec = reflect(Reshape(spec, batch, 2*n), u.p1, u.q1)                                  // R1
	x := Gather(Transpose(spec, 0, 1), u.permIdx)                                          // Π, [c, j1, j2, batch]
	x = Reshape(Transpose(Reshape(x, 2*fs.n1, fs.n2*batch), 0, 1), fs.n2, batch, 2, fs.n1) // [j2, batch, c, j1]
	out := fs.output(stageBDiag(u.b2, stageA(u.a2, x)))                                    // D3 F⁻¹ D2 Π R1 F D1 h
	return reflect(out, u.p2, u.q2)
}

// reflect returns u − (u·p)·q for states u [batch, 2n], p [2n, 2], q = 2pᵀ. (Computing it as
// u − (q·uᵀ)ᵀ·pᵀ, so that the gradient with respect to p needs no transpose of u, measured
// 11% slower a uRNN 512 step: 1.52 → 1.69 s at adding T = 750.)
func reflect(x, p, q *Node) *Node { return Sub(x, MatMul(MatMul(x, p), q)) }
