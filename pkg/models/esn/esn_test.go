package esn_test

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/models/esn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
)

// TestCell runs the shared cell suite on the ESN. Its only trainable variables are the
// readout's, so the suite's gradient and parameter checks see U and b_o alone; the Step
// check reads the frozen W_in and W as well.
func TestCell(t *testing.T) {
	celltest.Test(t, celltest.Config{
		New: func() rnn.Cell {
			return &esn.Cell{In: 3, N: 4, Out: 2, Connectivity: 0.5, Type: dtypes.Float64}
		},
		Sizes: rnn.Sizes{In: 3, State: 4, Out: 2},
		// N·Out + Out (the doc of NumParams).
		ParamCounts: []celltest.ParamCount{
			{Name: "copy, N 128", Cell: esn.New(10, 128, 9), Want: 1161},
			{Name: "adding, N 128", Cell: esn.New(2, 128, 1), Want: 129},
		},
		Budget: celltest.GraphCost{Forward: 8, Training: 30},
		BadConfigs: []celltest.BadConfig{
			{Name: "zero N", Cell: esn.New(3, 0, 2), Want: "esn.Cell: N = 0"},
			{Name: "negative In", Cell: esn.New(-1, 4, 2), Want: "esn.Cell: In = -1"},
			{Name: "zero Out", Cell: esn.New(3, 4, 0), Want: "esn.Cell: Out = 0"},
			{Name: "negative Rho", Cell: &esn.Cell{In: 3, N: 4, Out: 2, Rho: -0.5}, Want: "Rho = -0.5, want a spectral radius > 0"},
			{Name: "NaN Rho", Cell: &esn.Cell{In: 3, N: 4, Out: 2, Rho: math.NaN()}, Want: "Rho = NaN"},
			{Name: "infinite Rho", Cell: &esn.Cell{In: 3, N: 4, Out: 2, Rho: math.Inf(1)}, Want: "Rho = +Inf"},
			{Name: "Connectivity > 1", Cell: &esn.Cell{In: 3, N: 4, Out: 2, Connectivity: 1.5}, Want: "Connectivity = 1.5, want a fraction of nonzero entries in (0, 1]"},
			{Name: "negative Connectivity", Cell: &esn.Cell{In: 3, N: 4, Out: 2, Connectivity: -0.1}, Want: "Connectivity = -0.1"},
			{Name: "negative InputScale", Cell: &esn.Cell{In: 3, N: 4, Out: 2, InputScale: -1}, Want: "InputScale = -1, want > 0"},
			{Name: "Int32 Type", Cell: &esn.Cell{In: 3, N: 4, Out: 2, Type: dtypes.Int32}, Want: "Type = Int32"},
		},
		Mismatched: []celltest.BadConfig{
			{Name: "other N", Cell: esn.New(3, 5, 2), Want: "/Win has shape"},
			{Name: "other Out", Cell: esn.New(3, 4, 3), Want: "/U has shape"},
		},
		Step: step,
	})
}

// step is h_t = tanh(W_in x_t + W h_{t−1}), y_t = U h_t + b_o in plain Go (row-vector
// orientation, as stored: x·W_in, h·W).
func step(cell rnn.Cell, p map[string][]float64, h, x []float64) (next, y []float64) {
	c := cell.(*esn.Cell)
	next = make([]float64, c.N)
	for j := range c.N {
		z := 0.0
		for i := range c.In {
			z += x[i] * p["Win"][i*c.N+j]
		}
		for i := range c.N {
			z += h[i] * p["W"][i*c.N+j]
		}
		next[j] = math.Tanh(z)
	}
	y = slices.Clone(p["bo"])
	for k := range c.Out {
		for j := range c.N {
			y[k] += next[j] * p["U"][j*c.Out+k]
		}
	}
	return next, y
}

// values returns variable name under scope as float64.
func values(t *testing.T, scope *model.Scope, name string) []float64 {
	t.Helper()
	v := scope.GetVariable(name)
	if v == nil {
		t.Fatalf("no variable %s", name)
	}
	switch tv := v.MustValue(); tv.DType() {
	case dtypes.Float64:
		return tensors.MustCopyFlatData[float64](tv)
	default:
		f := tensors.MustCopyFlatData[float32](tv)
		out := make([]float64, len(f))
		for i, x := range f {
			out[i] = float64(x)
		}
		return out
	}
}

// TestReservoir checks W as the package doc draws it: spectral radius Rho (computed again
// here with analysis.Eigenvalues, to 1e-6; a Float32 cell stores W rounded, to 1e-5),
// round(Connectivity·N²) nonzero entries, W_in within ±InputScale, and W_in and W frozen.
func TestReservoir(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell *esn.Cell
		rho  float64 // the Rho in effect
		conn float64 // the Connectivity in effect
		tol  float64
	}{
		{"defaults, Float32", esn.New(10, 128, 9), esn.DefaultRho, esn.DefaultConnectivity, 1e-5},
		{"defaults", &esn.Cell{In: 2, N: 128, Out: 1, Type: dtypes.Float64}, 0.9, 0.1, 1e-6},
		{"rho 1.5", &esn.Cell{In: 2, N: 40, Out: 1, Rho: 1.5, Connectivity: 0.3, InputScale: 0.1, Type: dtypes.Float64}, 1.5, 0.3, 1e-6},
		{"dense", &esn.Cell{In: 2, N: 20, Out: 1, Rho: 0.5, Connectivity: 1, Type: dtypes.Float64}, 0.5, 1, 1e-6},
		{"tiny and sparse", &esn.Cell{In: 1, N: 3, Out: 1, Rho: 0.99, Connectivity: 0.2, Type: dtypes.Float64}, 0.99, 0.2, 1e-6},
		{"one unit", &esn.Cell{In: 1, N: 1, Out: 1, Type: dtypes.Float64}, 0.9, 0.1, 1e-6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cell
			scope := model.NewStore().RootScope()
			if err := c.Init(scope, rand.New(rand.NewPCG(5, 5))); err != nil {
				t.Fatal(err)
			}
			w := values(t, scope, "W")
			eig, err := analysis.Eigenvalues(w, c.N)
			if err != nil {
				t.Fatal(err)
			}
			rho := 0.0
			for _, l := range eig {
				rho = max(rho, cmplx.Abs(l))
			}
			if math.Abs(rho-tc.rho) > tc.tol {
				t.Errorf("ρ(W) = %.12g, want Rho = %g within %g", rho, tc.rho, tc.tol)
			}
			nonzero := 0
			for _, x := range w {
				if x != 0 {
					nonzero++
				}
			}
			if want := max(1, int(math.Round(tc.conn*float64(c.N*c.N)))); nonzero != want {
				t.Errorf("W has %d nonzero entries, want round(%g·%d²) = %d", nonzero, tc.conn, c.N, want)
			}
			s := c.InputScale
			if s == 0 {
				s = esn.DefaultInputScale
			}
			for i, x := range values(t, scope, "Win") {
				if math.Abs(x) > s {
					t.Fatalf("Win[%d] = %g, want within ±%g", i, x, s)
				}
			}
			for v := range scope.IterVariables() {
				want := v.Name() == "U" || v.Name() == "bo"
				if v.Trainable != want {
					t.Errorf("variable %s: trainable %v, want %v (only the readout is trained)", v.Name(), v.Trainable, want)
				}
			}
		})
	}
}

// TestSameSeedSameReservoir checks that the reservoir and the input weights depend on the
// seed alone.
func TestSameSeedSameReservoir(t *testing.T) {
	draw := func(seed uint64) (w, win []float64) {
		scope := model.NewStore().RootScope()
		if err := esn.New(3, 50, 2).Init(scope, rand.New(rand.NewPCG(seed, 1))); err != nil {
			t.Fatal(err)
		}
		return values(t, scope, "W"), values(t, scope, "Win")
	}
	w1, in1 := draw(7)
	w2, in2 := draw(7)
	w3, in3 := draw(8)
	if !slices.Equal(w1, w2) || !slices.Equal(in1, in2) {
		t.Error("two Inits with seed 7 drew different reservoirs")
	}
	if slices.Equal(w1, w3) || slices.Equal(in1, in3) {
		t.Error("Inits with seeds 7 and 8 drew the same reservoir")
	}
}
