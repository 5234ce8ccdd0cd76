package fcurnn_test

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/fcurnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
	"github.com/urnn-notebooks/longmemory/pkg/models/urnn"
)

// setVar overwrites the Float64 variable name under scope with values.
func setVar(scope *model.Scope, name string, values []float64) {
	v := scope.GetVariable(name)
	v.MustSetValue(tensors.FromFlatDataAndDimensions(slices.Clone(values), v.Shape().Dimensions...))
}

// TestCell runs the shared cell suite on a small full-capacity uRNN.
func TestCell(t *testing.T) {
	const in, n, out = 3, 4, 2
	celltest.Test(t, celltest.Config{
		New: func() rnn.Cell {
			c := fcurnn.New(in, n, out)
			c.Type = dtypes.Float64
			return c
		},
		Sizes: rnn.Sizes{In: in, State: 2 * n, Out: out},
		// 2N·In + 2N·Out + 2N² + 3N + Out (the doc of NumParams), at the uRNN paper's sizes.
		ParamCounts: []celltest.ParamCount{
			{Name: "copy, 128 units", Cell: fcurnn.New(10, 128, 9), Want: 38025},
			{Name: "adding, 512 units", Cell: fcurnn.New(2, 512, 1), Want: 528897},
		},
		Budget: celltest.GraphCost{Forward: 17, Training: 75},
		BadConfigs: []celltest.BadConfig{
			{Name: "zero N", Cell: fcurnn.New(2, 0, 1), Want: "fcurnn: N = 0"},
			{Name: "zero In", Cell: fcurnn.New(0, 4, 1), Want: "fcurnn: In = 0"},
			{Name: "negative Out", Cell: fcurnn.New(2, 4, -1), Want: "fcurnn: Out = -1"},
			{Name: "negative Eps", Cell: &fcurnn.Cell{In: 1, N: 4, Out: 1, Eps: -1}, Want: "Eps = -1"},
			{Name: "negative LRW", Cell: &fcurnn.Cell{In: 1, N: 4, Out: 1, LRW: -0.1}, Want: "LRW = -0.1, want a finite value > 0"},
			{Name: "NaN LRW", Cell: &fcurnn.Cell{In: 1, N: 4, Out: 1, LRW: math.NaN()}, Want: "LRW = NaN"},
			{Name: "Int32 Type", Cell: &fcurnn.Cell{In: 1, N: 4, Out: 1, Type: dtypes.Int32}, Want: "Type = Int32"},
		},
		Mismatched: []celltest.BadConfig{{Name: "other N", Cell: fcurnn.New(in, n+1, out), Want: "/Wre has shape"}},
		// Generic biases, b > 0 so that |z| + b stays away from the ReLU kink at 0.
		Randomize: func(scope *model.Scope, rng *rand.Rand) {
			rnn.RandomizeVariables(scope, rng, -1, 1)
			setVar(scope, "b", rnn.Uniform(rng, n, 0.05, 0.3))
		},
		Initial: func(_ rnn.Cell, p map[string][]float64) []float64 { return p["h0"] },
		Step:    step,
	})
}

// step is one step of the package doc's equations in plain Go (complex128), for one
// example: h_t = modReLU(W h_{t−1} + V x_t), y_t = U [Re h_t; Im h_t] + b_o.
func step(cell rnn.Cell, p map[string][]float64, state, x []float64) (next, y []float64) {
	c := cell.(*fcurnn.Cell)
	n := c.N
	next = make([]float64, 2*n)
	for k := range n {
		var z complex128
		for j := range n {
			z += complex(p["Wre"][k*n+j], p["Wim"][k*n+j]) * complex(state[j], state[n+j])
		}
		for i := range c.In { // V is stored as [Re Vᵀ | Im Vᵀ], In × 2N
			z += complex(x[i]*p["V"][i*2*n+k], x[i]*p["V"][i*2*n+n+k])
		}
		mod := cmplx.Abs(z)
		s := max(mod+p["b"][k], 0) / (mod + urnn.DefaultEps)
		next[k], next[n+k] = s*real(z), s*imag(z)
	}
	y = slices.Clone(p["bo"])
	for q := range c.Out {
		for j := range 2 * n {
			y[q] += next[j] * p["U"][j*c.Out+q]
		}
	}
	return next, y
}

// unitarityError returns max |(W^H W − I)_{ij}| for W = re + i·im (n×n, row-major).
func unitarityError(n int, re, im []float64) float64 {
	worst := 0.0
	for i := range n {
		for j := range n {
			var s complex128
			for k := range n {
				s += complex(re[k*n+i], -im[k*n+i]) * complex(re[k*n+j], im[k*n+j])
			}
			if i == j {
				s--
			}
			worst = max(worst, cmplx.Abs(s))
		}
	}
	return worst
}

// TestInit checks the initialisation: W unitary (the restricted-capacity uRNN's W), b and
// b_o zero, h_0 within ±√(3/2N), Float32 by default.
func TestInit(t *testing.T) {
	const n = 16
	c := fcurnn.New(10, n, 9)
	if c.DType() != dtypes.Float32 {
		t.Errorf("DType() = %s, want Float32 by default", c.DType())
	}
	c.Type = dtypes.Float64
	store := model.NewStore()
	scope := store.RootScope()
	if err := c.Init(scope, rand.New(rand.NewPCG(4, 4))); err != nil {
		t.Fatal(err)
	}
	get := func(name string) []float64 {
		return tensors.MustCopyFlatData[float64](scope.GetVariable(name).MustValue())
	}
	if e := unitarityError(n, get("Wre"), get("Wim")); e > 1e-12 {
		t.Errorf("initial W: max |W^H W − I| = %.3g, want ≤ 1e-12", e)
	}
	for _, name := range []string{"b", "bo"} {
		if slices.ContainsFunc(get(name), func(x float64) bool { return x != 0 }) {
			t.Errorf("%s = %v, want zeros", name, get(name))
		}
	}
	bound := math.Sqrt(3.0 / (2 * n))
	for i, x := range get("h0") {
		if math.Abs(x) > bound {
			t.Errorf("h0[%d] = %g, outside ±√(3/2N) = %g", i, x, bound)
		}
	}
	for _, name := range c.ConstrainedVariables() {
		if v := scope.GetVariable(name); v == nil || !v.Trainable {
			t.Errorf("constrained variable %q must exist and be trainable (the trainer takes its gradient)", name)
		}
	}
}

// TestUpdateErrors checks that Update names the bad value and the accepted range.
func TestUpdateErrors(t *testing.T) {
	const n = 3
	ok := func() (map[string][]float64, map[string][]float64) {
		id := rnn.IdentityMatrix(n)
		z := make([]float64, n*n)
		return map[string][]float64{"Wre": id, "Wim": z}, map[string][]float64{"Wre": z, "Wim": z}
	}
	for _, tc := range []struct {
		name  string
		cell  *fcurnn.Cell
		lr    float64
		edit  func(values, grads map[string][]float64)
		wants []string
	}{
		{"zero lr", fcurnn.New(1, n, 1), 0, nil, []string{"λ = 0", "want a finite value > 0"}},
		{"negative lr", fcurnn.New(1, n, 1), -1e-3, nil, []string{"λ = -0.001", "want a finite value > 0"}},
		{"NaN lr", fcurnn.New(1, n, 1), math.NaN(), nil, []string{"λ = NaN"}},
		{"infinite lr", fcurnn.New(1, n, 1), math.Inf(1), nil, []string{"λ = +Inf"}},
		{"negative LRW", &fcurnn.Cell{In: 1, N: n, Out: 1, LRW: -1}, 1e-3, nil, []string{"LRW = -1", "want a finite value > 0"}},
		{"zero N", fcurnn.New(1, 0, 1), 1e-3, nil, []string{"N = 0", "want >= 1"}},
		{"no gradient", fcurnn.New(1, n, 1), 1e-3, func(_, g map[string][]float64) { delete(g, "Wim") }, []string{`no gradient for "Wim"`}},
		{"short value", fcurnn.New(1, n, 1), 1e-3, func(v, _ map[string][]float64) { v["Wre"] = v["Wre"][:4] }, []string{`value of "Wre" has 4 entries, want N² = 9`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values, grads := ok()
			if tc.edit != nil {
				tc.edit(values, grads)
			}
			_, err := tc.cell.Update(tc.lr, values, grads)
			if err == nil {
				t.Fatalf("Update returned no error, want one containing %q", tc.wants)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Update error %q, want one containing %q", err, w)
				}
			}
		})
	}
	// LRW, when set, replaces lr: a zero gradient leaves W = I unchanged.
	values, grads := ok()
	out, err := (&fcurnn.Cell{In: 1, N: n, Out: 1, LRW: 0.1}).Update(0, values, grads)
	if err != nil {
		t.Fatalf("Update with LRW = 0.1 and lr = 0: %v", err)
	}
	if !slices.Equal(out["Wre"], values["Wre"]) || !slices.Equal(out["Wim"], values["Wim"]) {
		t.Errorf("a zero gradient moved W: %v, %v", out["Wre"], out["Wim"])
	}
}
