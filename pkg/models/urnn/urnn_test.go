package urnn

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// setVar overwrites variable name with values (converted to its dtype).
func setVar(t testing.TB, scope *model.Scope, name string, values []float64) {
	t.Helper()
	v := scope.GetVariable(name)
	dims := v.Shape().Dimensions
	if v.DType() == dtypes.Float64 {
		v.MustSetValue(tensors.FromFlatDataAndDimensions(append([]float64(nil), values...), dims...))
		return
	}
	f := make([]float32, len(values))
	for i, x := range values {
		f[i] = float32(x)
	}
	v.MustSetValue(tensors.FromFlatDataAndDimensions(f, dims...))
}

func inputs(g *Graph, dtype dtypes.DType, seed uint64, batch, T, in int) *Node {
	rng := rand.New(rand.NewPCG(seed, 1))
	return Reshape(ConstAsDType(g, dtype, rnn.Uniform(rng, batch*T*in, -1, 1)), batch, T, in)
}

// TestGradients checks the autodiff gradient of every trainable variable (θ, reflections,
// V, b, U, b_o, h_0) against central differences in float64.
func TestGradients(t *testing.T) {
	for _, tc := range []struct {
		n    int
		impl Impl
	}{{4, FourStep}, {4, DenseW}, {6, FourStep}} {
		t.Run(fmt.Sprintf("n=%d/%s", tc.n, tc.impl), func(t *testing.T) {
			c, store := newTestCell(t, 3, tc.n, 2, dtypes.Float64, tc.impl, 11)
			scope := store.RootScope()
			// Generic biases, b > 0 so that |z| + b stays away from the ReLU kink at 0.
			rng := rand.New(rand.NewPCG(2, 2))
			setVar(t, scope, "b", rnn.Uniform(rng, tc.n, 0.05, 0.3))
			setVar(t, scope, "bo", rnn.Uniform(rng, 2, -0.5, 0.5))
			loss := func(scope *model.Scope, g *Graph) *Node {
				out, _ := rnn.Sequence(c, scope, inputs(g, dtypes.Float64, 3, 2, 4, 3))
				return ReduceAllSum(Mul(out, out))
			}
			if err := analysis.CheckGradient(backend.MustNew(), store, loss, analysis.FD{}); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestStepByHand compares one step, h_1 = modReLU(W h_0 + V x), o = U [Re h_1; Im h_1] + b_o
// with fixed weights (n = 4, Π = (2, 0, 3, 1), one unit below the ReLU threshold), with
// the same step written in plain Go with complex128 ([1] §2–3).
func TestStepByHand(t *testing.T) {
	const n, in, out = 4, 2, 3
	fixed := func(k int, scale, offset float64) []float64 { // a fixed, irregular pattern
		v := make([]float64, k)
		for i := range v {
			v[i] = offset + scale*math.Sin(1.7*float64(i)+0.3)
		}
		return v
	}
	for _, impl := range []Impl{FourStep, DenseW} {
		t.Run(impl.String(), func(t *testing.T) {
			c, store := newTestCell(t, in, n, out, dtypes.Float64, impl, 1)
			scope := store.RootScope()
			setVar(t, scope, "theta", fixed(3*n, 2.5, 0))
			setVar(t, scope, "reflection", fixed(4*n, 0.8, 0.1))
			setVar(t, scope, "V", fixed(in*2*n, 0.6, 0))
			setVar(t, scope, "U", fixed(2*n*out, 0.4, 0.05))
			setVar(t, scope, "b", []float64{0.2, -0.1, -5, 0.05}) // unit 2 is switched off
			setVar(t, scope, "bo", []float64{0.1, -0.2, 0.3})
			setVar(t, scope, "h0", fixed(2*n, 0.5, 0))
			scope.GetVariable("perm").MustSetValue(tensors.FromFlatDataAndDimensions([]int32{2, 0, 3, 1}, n))
			x := []float64{0.7, -1.3}
			p := readParams(t, c, scope)
			wantH, wantO := p.refStep(x, DefaultEps)
			res := model.MustExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
				o, h := rnn.Sequence(c, scope, Const(g, [][][]float64{{x}}))
				return []*Node{o, h}
			})
			gotO, gotH := tensors.MustCopyFlatData[float64](res[0]), tensors.MustCopyFlatData[float64](res[1])
			for j := range n {
				if got := complex(gotH[j], gotH[n+j]); cmplx.Abs(got-wantH[j]) > 1e-12 {
					t.Errorf("h_1[%d] = %v, want %v", j, got, wantH[j])
				}
			}
			if wantH[2] != 0 {
				t.Errorf("reference h_1[2] = %v, want 0 (|z| + b < 0)", wantH[2])
			}
			for k := range out {
				if math.Abs(gotO[k]-wantO[k]) > 1e-12 {
					t.Errorf("o[%d] = %.15g, want %.15g", k, gotO[k], wantO[k])
				}
			}
		})
	}
}

// TestParamCount checks the parameter count of the paper's configurations ([1] §4.1, §4.2)
// against NumParams, the formula 2N·In + 2N·Out + 10N + Out of the package doc.
func TestParamCount(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in, n, out  int
		wantFormula int
	}{
		{"copy uRNN 128", 10, 128, 9, 2*128*10 + 2*128*9 + 10*128 + 9},
		{"adding uRNN 512", 2, 512, 1, 2*512*2 + 2*512*1 + 10*512 + 1},
	} {
		c := New(tc.in, tc.n, tc.out)
		store := model.NewStore()
		if err := c.Init(store.RootScope(), rand.New(rand.NewPCG(1, 1))); err != nil {
			t.Fatal(err)
		}
		got := 0
		for v := range store.RootScope().IterVariables() {
			if v.Trainable {
				got += v.Shape().Size()
			}
		}
		t.Logf("%s (In %d, Out %d): %d trainable parameters", tc.name, tc.in, tc.out, got)
		if got != c.NumParams() || got != tc.wantFormula {
			t.Errorf("%s: %d trainable parameters, NumParams() = %d, formula %d: want all equal", tc.name, got, c.NumParams(), tc.wantFormula)
		}
	}
}

// TestInit checks the initialisation of [1] §3.4 and that the seed fixes everything, Π included.
func TestInit(t *testing.T) {
	const n = 512
	c := New(2, n, 1)
	stores := make([]*model.Store, 3)
	for i, seed := range []uint64{1, 1, 2} {
		stores[i] = model.NewStore()
		if err := c.Init(stores[i].RootScope(), rand.New(rand.NewPCG(seed, 1))); err != nil {
			t.Fatal(err)
		}
	}
	p := [3]params{}
	for i := range p {
		p[i] = readParams(t, c, stores[i].RootScope())
	}
	samePerm := func(a, b []int) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
	if !samePerm(p[0].perm, p[1].perm) || fmt.Sprint(p[0].theta) != fmt.Sprint(p[1].theta) {
		t.Error("same seed gave different Π or θ")
	}
	if samePerm(p[0].perm, p[2].perm) {
		t.Error("seeds 1 and 2 gave the same Π")
	}
	for name, r := range map[string]struct {
		vals   []float64
		lo, hi float64
	}{
		"theta":      {append(append(append([]float64{}, p[0].theta[0]...), p[0].theta[1]...), p[0].theta[2]...), -math.Pi, math.Pi},
		"reflection": {readFloats(t, stores[0].RootScope(), "reflection"), -1, 1},
		"h0":         {p[0].h0, -math.Sqrt(3.0 / (2 * n)), math.Sqrt(3.0 / (2 * n))},
		"V":          {p[0].V, -math.Sqrt(6.0 / (2 + 2*n)), math.Sqrt(6.0 / (2 + 2*n))},
		"U":          {p[0].U, -math.Sqrt(6.0 / (2*n + 1)), math.Sqrt(6.0 / (2*n + 1))},
		"b":          {p[0].b, 0, 0},
		"bo":         {p[0].bo, 0, 0},
	} {
		for i, x := range r.vals {
			if x < r.lo || x > r.hi {
				t.Fatalf("%s[%d] = %g, want in [%g, %g]", name, i, x, r.lo, r.hi)
			}
		}
	}
	var norm2 float64
	for _, x := range p[0].h0 {
		norm2 += x * x
	}
	if math.Abs(norm2-1) > 0.15 { // E‖h_0‖² = 1, standard deviation √(2/5n) ≈ 0.03
		t.Errorf("‖h_0‖² = %.3f, want ≈ 1", norm2)
	}
	for _, bad := range []*Cell{New(2, 0, 1), New(0, 4, 1), {In: 1, N: 4, Out: 1, Eps: -1}} {
		if err := bad.Init(model.NewStore().RootScope(), rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("Init(%+v): no error", *bad)
		}
	}
}

// TestNativeNeedsSupport checks that asking for Native on a backend without complex FFT
// panics in Build with a message naming the backend, and that DenseW returns an error.
// (Build is called outside an Exec: GoMLX v0.28.2's Exec deadlocks when graph building panics.)
func TestNativeNeedsSupport(t *testing.T) {
	be := backend.MustNew()
	if NativeSupported(be, dtypes.Float32) {
		t.Skipf("backend %q supports complex FFT", be.Name())
	}
	c, store := newTestCell(t, 2, 8, 1, dtypes.Float32, Native, 1)
	msg := func() (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		c.Build(store.RootScope(), NewGraph(be, "native"))
		return ""
	}()
	if !strings.Contains(msg, "Native") || !strings.Contains(msg, be.Name()) {
		t.Errorf("Build with Impl Native on %q: panic %q, want one naming Native and the backend", be.Name(), msg)
	}
	if _, _, err := c.DenseW(be, store.RootScope()); err == nil {
		t.Errorf("DenseW with Impl Native on %q: no error", be.Name())
	}
}
