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

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
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

// TestCell runs the shared cell suite on the uRNN with each real implementation of W, at
// an N whose four-step factorisation is square (4 = 2·2) and one where it is not (6 = 2·3).
func TestCell(t *testing.T) {
	const in, out = 3, 2
	for _, tc := range []struct {
		n      int
		impl   Impl
		split  bool
		budget celltest.GraphCost
	}{
		// FourStep: many cheap nodes (elementwise diagonals, layout changes that the backend
		// copies in runs, the carriers of withAdjoint) rather than few generic transposes; with
		// 3 inputs, 2 more to train for the zeros after them (padRows).
		{4, FourStep, false, celltest.GraphCost{Forward: 68, Training: 197}},
		{4, DenseW, false, celltest.GraphCost{Forward: 17, Training: 75}},
		{6, FourStep, false, celltest.GraphCost{Forward: 68, Training: 197}},
		// The split ReLU of [1] §3.2's "previous work" in modReLU's place: 2 nodes a step
		// against modReLU's 11.
		{4, DenseW, true, celltest.GraphCost{Forward: 8, Training: 33}},
	} {
		name := fmt.Sprintf("n=%d/%s", tc.n, tc.impl)
		if tc.split {
			name += "/split-relu"
		}
		t.Run(name, func(t *testing.T) {
			celltest.Test(t, celltest.Config{
				New: func() rnn.Cell {
					return &Cell{In: in, N: tc.n, Out: out, Type: dtypes.Float64, Impl: tc.impl, SplitReLU: tc.split}
				},
				Sizes: rnn.Sizes{In: in, State: 2 * tc.n, Out: out},
				// 2N·In + 2N·Out + 10N + Out ([1] §4.1, §4.2).
				ParamCounts: []celltest.ParamCount{
					{Name: "copy, 128 units", Cell: New(10, 128, 9), Want: 6153},
					{Name: "adding, 512 units", Cell: New(2, 512, 1), Want: 8193},
				},
				Budget: tc.budget,
				BadConfigs: []celltest.BadConfig{
					{Name: "zero N", Cell: New(2, 0, 1), Want: "urnn: N = 0"},
					{Name: "zero In", Cell: New(0, 4, 1), Want: "urnn: In = 0"},
					{Name: "negative Out", Cell: New(2, 4, -1), Want: "urnn: Out = -1"},
					{Name: "negative Eps", Cell: &Cell{In: 1, N: 4, Out: 1, Eps: -1}, Want: "Eps = -1"},
					{Name: "bad Impl", Cell: &Cell{In: 1, N: 4, Out: 1, Impl: 9}, Want: "Impl = 9"},
					{Name: "Int32 Type", Cell: &Cell{In: 1, N: 4, Out: 1, Type: dtypes.Int32}, Want: "Type = Int32"},
				},
				Mismatched: []celltest.BadConfig{{Name: "other N", Cell: &Cell{In: in, N: tc.n + 2, Out: out, Impl: tc.impl}, Want: "/theta has shape"}},
				// Generic biases, b > 0 so that |z| + b stays away from the ReLU kink at 0.
				Randomize: func(scope *model.Scope, rng *rand.Rand) {
					rnn.RandomizeVariables(scope, rng, -1, 1)
					setVar(t, scope, "b", rnn.Uniform(rng, tc.n, 0.05, 0.3))
				},
				Initial: func(_ rnn.Cell, p map[string][]float64) []float64 { return p["h0"] },
				Step: func(cell rnn.Cell, p map[string][]float64, state, x []float64) (next, y []float64) {
					c := cell.(*Cell)
					h, y := paramsOf(c, p).refStepFrom(state, x, c.eps())
					next = make([]float64, 2*c.N)
					for j, z := range h {
						next[j], next[c.N+j] = real(z), imag(z)
					}
					return next, y
				},
			})
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

// TestAutoImpl checks the measured choice of Auto on the Go backend (no complex FFT):
// DenseW up to DenseWMaxN units, FourStep above.
func TestAutoImpl(t *testing.T) {
	b := backend.MustNew()
	for _, tc := range []struct {
		n    int
		want Impl
	}{{8, DenseW}, {DenseWMaxN, DenseW}, {DenseWMaxN + 2, FourStep}, {512, FourStep}} {
		c := &Cell{In: 1, N: tc.n, Out: 1}
		if got, err := c.resolveImpl(b); err != nil || got != tc.want {
			t.Errorf("N = %d: Auto resolves to %v (%v), want %v", tc.n, got, err, tc.want)
		}
	}
}

// TestCodeBound: with CodeBound, V is drawn from U[−a, a] with the authors' code's
// a = √(6/(In + N)), wider than §3.4's √(6/(In + 2N)): the largest |V| lies between the two
// bounds' 0.95 a and a. The other variables are drawn as without it (same seed, same values).
func TestCodeBound(t *testing.T) {
	const in, n = 2, 128
	stores := [2]*model.Store{model.NewStore(), model.NewStore()}
	for i, c := range []*Cell{New(in, n, 1), {In: in, N: n, Out: 1, CodeBound: true}} {
		if err := c.Init(stores[i].RootScope(), rand.New(rand.NewPCG(4, 4))); err != nil {
			t.Fatal(err)
		}
	}
	v := readFloats(t, stores[1].RootScope(), "V")
	maxAbs := 0.0
	for _, x := range v {
		maxAbs = max(maxAbs, math.Abs(x))
	}
	if a := math.Sqrt(6.0 / (in + n)); maxAbs > a || maxAbs < 0.95*a {
		t.Errorf("CodeBound: max |V| = %.4f, want in [0.95, 1]·√(6/(In+N)) = %.4f (§3.4's bound: %.4f)", maxAbs, a, math.Sqrt(6.0/(in+2*n)))
	}
	for _, name := range []string{"theta", "reflection", "U", "h0"} {
		if a, b := readFloats(t, stores[0].RootScope(), name), readFloats(t, stores[1].RootScope(), name); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s differs with CodeBound", name)
		}
	}
}
