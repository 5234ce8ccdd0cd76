package scan_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/scan"
)

// lengths are the sequence lengths of the value and gradient checks: powers of two and not.
var lengths = []int{1, 2, 3, 7, 64, 100}

const batch, units = 2, 3

// recurrence is the real or the complex recurrence: how its inputs are drawn, scanned,
// unrolled in the graph and computed in plain Go. Its inputs are a, b, h0 (real) or aRe, aIm,
// bRe, bIm, h0Re, h0Im (complex); its outputs h or hRe, hIm.
type recurrence struct {
	name    string
	complex bool
}

var recurrences = []recurrence{{"real", false}, {"complex", true}}

func (r recurrence) String() string { return r.name }

// inputs draws the inputs for [batch, T, N] sequences: |a| in [0.8, 1] (long memory, any
// sign or phase), b and h_0 from U[−1, 1].
func (r recurrence) inputs(seed uint64, B, T, N int) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	u := func(n int, lo, hi float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = lo + (hi-lo)*rng.Float64()
		}
		return v
	}
	n := B * T * N
	if !r.complex {
		a := u(n, 0.8, 1)
		for i := range a {
			if rng.IntN(2) == 0 {
				a[i] = -a[i]
			}
		}
		return [][]float64{a, u(n, -1, 1), u(B*N, -1, 1)}
	}
	ar, ai := make([]float64, n), make([]float64, n)
	for i := range ar {
		z := cmplx.Rect(0.8+0.2*rng.Float64(), 2*math.Pi*rng.Float64())
		ar[i], ai[i] = real(z), imag(z)
	}
	return [][]float64{ar, ai, u(n, -1, 1), u(n, -1, 1), u(B*N, -1, 1), u(B*N, -1, 1)}
}

// tensors returns the inputs as tensors of dtype: sequences [B, T, N], initial states [B, N].
func (r recurrence) tensors(vals [][]float64, dtype dtypes.DType, B, T, N int) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		dims := []int{B, T, N}
		if i >= len(vals)-r.numInit() {
			dims = []int{B, N}
		}
		if dtype == dtypes.Float32 {
			f := make([]float32, len(v))
			for k, x := range v {
				f[k] = float32(x)
			}
			out[i] = tensors.FromFlatDataAndDimensions(f, dims...)
		} else {
			out[i] = tensors.FromFlatDataAndDimensions(v, dims...)
		}
	}
	return out
}

func (r recurrence) numInit() int {
	if r.complex {
		return 2
	}
	return 1
}

// scan returns the states by package scan.
func (r recurrence) scan(in []*Node) []*Node {
	if !r.complex {
		return []*Node{scan.Linear(in[0], in[1], in[2])}
	}
	hr, hi := scan.LinearComplex(in[0], in[1], in[2], in[3], in[4], in[5])
	return []*Node{hr, hi}
}

// unrolled returns the states by the recurrence unrolled step by step in the graph.
func (r recurrence) unrolled(in []*Node) []*Node {
	T := in[0].Shape().Dim(1)
	at := func(x *Node, t int) *Node { return Squeeze(SliceAxis(x, 1, AxisElem(t)), 1) }
	if !r.complex {
		h, hs := in[2], make([]*Node, T)
		for t := range T {
			h = Add(Mul(at(in[0], t), h), at(in[1], t))
			hs[t] = h
		}
		return []*Node{Stack(hs, 1)}
	}
	hr, hi := in[4], in[5]
	hsr, hsi := make([]*Node, T), make([]*Node, T)
	for t := range T {
		ar, ai := at(in[0], t), at(in[1], t)
		hr, hi = Add(Sub(Mul(ar, hr), Mul(ai, hi)), at(in[2], t)), Add(Add(Mul(ar, hi), Mul(ai, hr)), at(in[3], t))
		hsr[t], hsi[t] = hr, hi
	}
	return []*Node{Stack(hsr, 1), Stack(hsi, 1)}
}

// reference is the recurrence in plain Go (complex128 for the complex one), in float64.
func (r recurrence) reference(v [][]float64, B, T, N int) [][]float64 {
	if !r.complex {
		h := make([]float64, B*T*N)
		for b := range B {
			for j := range N {
				x := v[2][b*N+j]
				for t := range T {
					i := (b*T+t)*N + j
					x = v[0][i]*x + v[1][i]
					h[i] = x
				}
			}
		}
		return [][]float64{h}
	}
	hr, hi := make([]float64, B*T*N), make([]float64, B*T*N)
	for b := range B {
		for j := range N {
			x := complex(v[4][b*N+j], v[5][b*N+j])
			for t := range T {
				i := (b*T+t)*N + j
				x = complex(v[0][i], v[1][i])*x + complex(v[2][i], v[3][i])
				hr[i], hi[i] = real(x), imag(x)
			}
		}
	}
	return [][]float64{hr, hi}
}

// params returns graph parameters for the inputs of a [B, T, N] recurrence in dtype.
func (r recurrence) params(g *Graph, dtype dtypes.DType, B, T, N int) []*Node {
	n := 3
	if r.complex {
		n = 6
	}
	in := make([]*Node, n)
	for i := range in {
		s := shapes.Make(dtype, B, T, N)
		if i >= n-r.numInit() {
			s = shapes.Make(dtype, B, N)
		}
		in[i] = Parameter(g, fmt.Sprintf("in%d", i), s)
	}
	return in
}

func flat(t *tensors.Tensor) []float64 {
	if t.DType() == dtypes.Float32 {
		f := tensors.MustCopyFlatData[float32](t)
		out := make([]float64, len(f))
		for i, x := range f {
			out[i] = float64(x)
		}
		return out
	}
	return tensors.MustCopyFlatData[float64](t)
}

func run(t *testing.T, fn func(in []*Node) []*Node, args ...any) [][]float64 {
	t.Helper()
	res, err := ExecOnceN(backend.MustNew(), fn, args...)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(res))
	for i, r := range res {
		out[i] = flat(r)
	}
	return out
}

// compare reports the first elements of got that differ from want by more than
// tol·max(1, |want|).
func compare(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*max(1, math.Abs(want[i]))) {
			if bad++; bad <= 3 {
				t.Errorf("%s[%d] = %.17g, want %.17g (difference %.3g, tolerance %.3g relative)", what, i, got[i], want[i], d, tol)
			}
		}
	}
	if bad > 3 {
		t.Errorf("%s: %d elements differ in all", what, bad)
	}
}

// TestValues checks the scan against the recurrence in plain Go, to 1e-12, at lengths that
// are and are not powers of two.
func TestValues(t *testing.T) {
	for _, r := range recurrences {
		for _, T := range lengths {
			t.Run(fmt.Sprintf("%s/T=%d", r, T), func(t *testing.T) {
				v := r.inputs(uint64(T), batch, T, units)
				got := run(t, r.scan, r.tensors(v, dtypes.Float64, batch, T, units)...)
				want := r.reference(v, batch, T, units)
				for k := range want {
					compare(t, fmt.Sprintf("h part %d", k), got[k], want[k], 1e-12)
				}
			})
		}
	}
}

// weights draws the loss weights w, one per output element.
func weights(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 11))
	w := make([]float64, n)
	for i := range w {
		w[i] = 2*rng.Float64() - 1
	}
	return w
}

// lossOf returns Σ_k Σ w_k ⊙ out_k, the w_k drawn from seed.
func lossOf(outs []*Node, seed uint64) *Node {
	var loss *Node
	for k, o := range outs {
		w := Reshape(ConstAsDType(o.Graph(), o.DType(), weights(seed+uint64(k), o.Shape().Size())), o.Shape().Dimensions...)
		l := ReduceAllSum(Mul(o, w))
		if loss == nil {
			loss = l
		} else {
			loss = Add(loss, l)
		}
	}
	return loss
}

// withGradient returns the loss of states(in) and its gradient with respect to every input.
func withGradient(states func([]*Node) []*Node, seed uint64) func(in []*Node) []*Node {
	return func(in []*Node) []*Node {
		loss := lossOf(states(in), seed)
		return append([]*Node{loss}, Gradient(loss, in...)...)
	}
}

// TestGradients checks the gradients of Σ w ⊙ h with respect to every input (a, b, h_0; real
// and imaginary parts for the complex scan) against those of the recurrence unrolled step by
// step in the graph, to 1e-10.
func TestGradients(t *testing.T) {
	for _, r := range recurrences {
		for _, T := range lengths {
			t.Run(fmt.Sprintf("%s/T=%d", r, T), func(t *testing.T) {
				v := r.inputs(100+uint64(T), batch, T, units)
				args := r.tensors(v, dtypes.Float64, batch, T, units)
				got := run(t, withGradient(r.scan, 5), args...)
				want := run(t, withGradient(r.unrolled, 5), args...)
				compare(t, "loss", got[0], want[0], 1e-12)
				for k := 1; k < len(want); k++ {
					compare(t, fmt.Sprintf("gradient wrt input %d", k-1), got[k], want[k], 1e-10)
				}
			})
		}
	}
}

// TestFiniteDifferences checks a few coordinates of every input's gradient against central
// differences of the loss, (L(x + ε e_i) − L(x − ε e_i)) / 2ε, ε = 1e-6.
func TestFiniteDifferences(t *testing.T) {
	const T, eps, tol = 7, 1e-6, 1e-7
	for _, r := range recurrences {
		t.Run(r.String(), func(t *testing.T) {
			v := r.inputs(3, batch, T, units)
			be := backend.MustNew()
			grad := run(t, withGradient(r.scan, 9), r.tensors(v, dtypes.Float64, batch, T, units)...)
			lossExec, err := NewExec(be, func(in []*Node) *Node { return lossOf(r.scan(in), 9) })
			if err != nil {
				t.Fatal(err)
			}
			loss := func(v [][]float64) float64 {
				res, err := lossExec.Call(r.tensors(v, dtypes.Float64, batch, T, units)...)
				if err != nil {
					t.Fatal(err)
				}
				return flat(res[0])[0]
			}
			rng := rand.New(rand.NewPCG(4, 4))
			for k := range v {
				for range 4 {
					i := rng.IntN(len(v[k]))
					x := v[k][i]
					v[k][i] = x + eps
					lp := loss(v)
					v[k][i] = x - eps
					lm := loss(v)
					v[k][i] = x
					fd, g := (lp-lm)/(2*eps), grad[1+k][i]
					if math.Abs(fd-g) > tol*max(1, math.Abs(g)) {
						t.Errorf("input %d element %d: gradient %.12g, central difference %.12g", k, i, g, fd)
					}
				}
			}
		})
	}
}

// lastState returns x[:, T−1], [batch, N], of x [batch, T, N].
func lastState(x *Node) *Node {
	return Squeeze(SliceAxis(x, 1, AxisElem(x.Shape().Dim(1)-1)), 1)
}

// chunked scans steps [0, T1) from h_0, then [T1, T) from the first chunk's last state, and
// returns the states of both chunks concatenated along time.
func (r recurrence) chunked(T1 int) func(in []*Node) []*Node {
	return func(in []*Node) []*Node {
		T := in[0].Shape().Dim(1)
		nSeq := len(in) - r.numInit()
		first, second := make([]*Node, len(in)), make([]*Node, len(in))
		for k := range nSeq {
			first[k] = SliceAxis(in[k], 1, AxisRange(0, T1))
			second[k] = SliceAxis(in[k], 1, AxisRange(T1, T))
		}
		copy(first[nSeq:], in[nSeq:])
		h1 := r.scan(first)
		for k, h := range h1 {
			second[nSeq+k] = lastState(h)
		}
		h2 := r.scan(second)
		out := make([]*Node, len(h1))
		for k := range h1 {
			out[k] = Concatenate([]*Node{h1[k], h2[k]}, 1)
		}
		return out
	}
}

// TestChunks checks that scanning [0, T1) and then [T1, T) from the first chunk's last state
// gives the states of one scan over [0, T), and the same gradients with respect to every input.
func TestChunks(t *testing.T) {
	const T = 100
	for _, r := range recurrences {
		for _, T1 := range []int{1, 37, 64, 99} {
			t.Run(fmt.Sprintf("%s/T1=%d", r, T1), func(t *testing.T) {
				args := r.tensors(r.inputs(200+uint64(T1), batch, T, units), dtypes.Float64, batch, T, units)
				whole := run(t, r.scan, args...)
				chunks := run(t, r.chunked(T1), args...)
				for k := range whole {
					compare(t, fmt.Sprintf("chunked h part %d", k), chunks[k], whole[k], 1e-12)
				}
				gWhole := run(t, withGradient(r.scan, 13), args...)
				gChunks := run(t, withGradient(r.chunked(T1), 13), args...)
				for k := 1; k < len(gWhole); k++ {
					compare(t, fmt.Sprintf("chunked gradient wrt input %d", k-1), gChunks[k], gWhole[k], 1e-10)
				}
			})
		}
	}
}

// TestNodeCount checks that the graph grows by a constant number of nodes per doubling of T
// (one more level), forward and with the gradient, within a budget per level: real forward
// 2 shifts (Slice, Pad) of b and of a, a·b_{t−s} + b and a·a_{t−s}, 7 nodes; complex 4
// shifts, two complex products of 6 nodes and 2 adds, 22.
func TestNodeCount(t *testing.T) {
	budget := map[string]map[bool]int{"real": {false: 7, true: 22}, "complex": {false: 22, true: 70}}
	be := backend.MustNew()
	count := func(r recurrence, T int, withGrad bool) int {
		g := NewGraph(be, "count")
		in := r.params(g, dtypes.Float64, batch, T, units)
		loss := lossOf(r.scan(in), 1)
		if withGrad {
			for _, gr := range Gradient(loss, in...) {
				loss = Add(loss, ReduceAllSum(gr))
			}
		}
		return len(g.Nodes())
	}
	for _, r := range recurrences {
		for _, withGrad := range []bool{false, true} {
			var n []int
			for _, T := range []int{64, 128, 256} {
				n = append(n, count(r, T, withGrad))
			}
			d1, d2 := n[1]-n[0], n[2]-n[1]
			t.Logf("%s, gradient %v: %v nodes at T = 64, 128, 256 (%d per doubling)", r, withGrad, n, d1)
			if d1 != d2 {
				t.Errorf("%s, gradient %v: %v nodes at T = 64, 128, 256: grows by %d then %d, want a constant per doubling", r, withGrad, n, d1, d2)
			}
			if limit := budget[r.name][withGrad]; d1 > limit {
				t.Errorf("%s, gradient %v: %d nodes per doubling (%v in all), budget %d", r, withGrad, d1, n, limit)
			}
		}
	}
}

// TestLongFloat32 scans T = 10 000 steps in float32 and compares with the recurrence in plain
// Go (float64 on the same float32 inputs), to 1e-5 of the largest |h| of each unit's sequence.
func TestLongFloat32(t *testing.T) {
	const B, T, N = 2, 10000, 8
	for _, r := range recurrences {
		t.Run(r.String(), func(t *testing.T) {
			v := r.inputs(77, B, T, N)
			args := r.tensors(v, dtypes.Float32, B, T, N)
			for k, a := range args { // the reference reads the float32 values
				v[k] = flat(a.(*tensors.Tensor))
			}
			got := run(t, r.scan, args...)
			want := r.reference(v, B, T, N)
			worst := 0.0
			for k := range want {
				for b := range B {
					for j := range N {
						scale := 1.0
						for tt := range T {
							scale = max(scale, math.Abs(want[k][(b*T+tt)*N+j]))
						}
						for tt := range T {
							i := (b*T+tt)*N + j
							worst = max(worst, math.Abs(got[k][i]-want[k][i])/scale)
						}
					}
				}
			}
			t.Logf("largest error relative to the unit's largest |h|: %.3g", worst)
			if !(worst <= 1e-5) {
				t.Errorf("float32 scan of %d steps: error %.3g of the largest |h|, want <= 1e-5", T, worst)
			}
		})
	}
}

// TestBadShapes checks that mismatched operands panic with a message naming the shapes.
func TestBadShapes(t *testing.T) {
	be := backend.MustNew()
	for _, tc := range []struct {
		name string
		a, b []int
		h0   []int
		want string
	}{
		{"b longer", []int{2, 5, 3}, []int{2, 6, 3}, []int{2, 3}, "want equal shapes"},
		{"h0 width", []int{2, 5, 3}, []int{2, 5, 3}, []int{2, 4}, "initial state of shape"},
		{"rank 2", []int{2, 5}, []int{2, 5}, []int{2, 5}, "want [batch, T, N]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				msg := fmt.Sprint(recover())
				if !strings.Contains(msg, tc.want) {
					t.Errorf("panic %q, want one containing %q", msg, tc.want)
				}
			}()
			g := NewGraph(be, "bad")
			scan.Linear(Parameter(g, "a", shapes.Make(dtypes.Float64, tc.a...)), Parameter(g, "b", shapes.Make(dtypes.Float64, tc.b...)),
				Parameter(g, "h0", shapes.Make(dtypes.Float64, tc.h0...)))
		})
	}
}
