package scrn_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
	"github.com/urnn-notebooks/longmemory/pkg/models/scrn"
)

// TestCell runs the shared cell suite on the SCRN, with the default α and with another.
func TestCell(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alpha float64
	}{{"default alpha", 0}, {"alpha 0.5", 0.5}} {
		alpha := tc.alpha
		t.Run(tc.name, func(t *testing.T) {
			celltest.Test(t, celltest.Config{
				New: func() rnn.Cell {
					return &scrn.Cell{In: 3, N: 4, S: 2, Out: 2, Alpha: alpha, Type: dtypes.Float64}
				},
				Sizes: rnn.Sizes{In: 3, State: 6, Out: 2},
				// In·(N + S) + S·N + N² + (N + S)·Out + Out (the doc of NumParams).
				ParamCounts: []celltest.ParamCount{
					{Name: "copy, N 80, S 40", Cell: scrn.New(10, 80, 40, 9), Want: 11889},
					{Name: "adding, N 128, S 40", Cell: scrn.New(2, 128, 40, 1), Want: 22009},
				},
				Budget: celltest.GraphCost{Forward: 8, Training: 30},
				BadConfigs: []celltest.BadConfig{
					{Name: "zero N", Cell: scrn.New(3, 0, 2, 2), Want: "scrn.Cell: N = 0"},
					{Name: "zero S", Cell: scrn.New(3, 4, 0, 2), Want: "scrn.Cell: S = 0"},
					{Name: "negative In", Cell: scrn.New(-1, 4, 2, 2), Want: "scrn.Cell: In = -1"},
					{Name: "zero Out", Cell: scrn.New(3, 4, 2, 0), Want: "scrn.Cell: Out = 0"},
					{Name: "Alpha 1", Cell: &scrn.Cell{In: 3, N: 4, S: 2, Out: 2, Alpha: 1}, Want: "Alpha = 1, want 0 < Alpha < 1"},
					{Name: "negative Alpha", Cell: &scrn.Cell{In: 3, N: 4, S: 2, Out: 2, Alpha: -0.5}, Want: "Alpha = -0.5"},
					{Name: "NaN Alpha", Cell: &scrn.Cell{In: 3, N: 4, S: 2, Out: 2, Alpha: math.NaN()}, Want: "Alpha = NaN"},
					{Name: "Int32 Type", Cell: &scrn.Cell{In: 3, N: 4, S: 2, Out: 2, Type: dtypes.Int32}, Want: "Type = Int32"},
				},
				Mismatched: []celltest.BadConfig{
					{Name: "other N", Cell: scrn.New(3, 5, 2, 2), Want: "/A has shape"},
					{Name: "other S", Cell: scrn.New(3, 4, 3, 2), Want: "/B has shape"},
				},
				Step: step,
			})
		})
	}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// step is one step of the SCRN equations of [1] §3 in plain Go, for one example, with the
// variables p (row-major, shapes as in the package doc) and the state [h | s]:
//
//	s_t = (1 − α) B x_t + α s_{t−1},  h_t = σ(P s_t + A x_t + R h_{t−1}),  y_t = U h_t + V s_t + b_o.
func step(cell rnn.Cell, p map[string][]float64, state, x []float64) (next, y []float64) {
	c := cell.(*scrn.Cell)
	in, n, sz, out := c.In, c.N, c.S, c.Out
	alpha := c.Alpha
	if alpha == 0 {
		alpha = scrn.DefaultAlpha
	}
	h, sPrev := state[:n], state[n:]
	s := make([]float64, sz)
	for k := range sz {
		bx := 0.0
		for i := range in {
			bx += x[i] * p["B"][i*sz+k]
		}
		s[k] = (1-alpha)*bx + alpha*sPrev[k]
	}
	hNew := make([]float64, n)
	for j := range n {
		z := 0.0
		for k := range sz {
			z += s[k] * p["P"][k*n+j]
		}
		for i := range in {
			z += x[i] * p["A"][i*n+j]
		}
		for m := range n {
			z += h[m] * p["R"][m*n+j]
		}
		hNew[j] = sigmoid(z)
	}
	y = slices.Clone(p["bo"])
	for q := range out {
		for j := range n {
			y[q] += hNew[j] * p["U"][j*out+q]
		}
		for k := range sz {
			y[q] += s[k] * p["V"][k*out+q]
		}
	}
	return append(hNew, s...), y
}

// TestContextDecay checks that α is fixed and acts as [1] §3 says: after a single input
// x_1 and zeros afterwards, the context is s_1 = (1 − α) B x_1 and then s_t = α^{t−1} s_1,
// whatever the trainable variables are; and that α is no variable (no gradient moves it).
func TestContextDecay(t *testing.T) {
	const T = 6
	for _, alpha := range []float64{0, 0.3} {
		c := &scrn.Cell{In: 2, N: 3, S: 4, Out: 1, Alpha: alpha, Type: dtypes.Float64}
		want := alpha
		if want == 0 {
			want = scrn.DefaultAlpha
		}
		store := model.NewStore()
		scope := store.RootScope()
		if err := c.Init(scope, rand.New(rand.NewPCG(3, 3))); err != nil {
			t.Fatal(err)
		}
		p := rnn.RandomizeVariables(scope, rand.New(rand.NewPCG(4, 4)), -1, 1)
		for v := range scope.IterVariables() {
			if !v.Trainable || v.Name() == "alpha" {
				t.Errorf("variable %s: trainable %v, want every variable trainable and none for α", v.Name(), v.Trainable)
			}
		}
		x := make([]float64, T*2)
		x[0], x[1] = 0.7, -0.4
		states := model.MustExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
			rnn.LiveVariables(store, g)
			_, s := rnn.Sequence(c, scope, Reshape(ConstAsDType(g, dtypes.Float64, x), 1, T, 2))
			return s
		})
		got := tensors.MustCopyFlatData[float64](states) // [1, T, N+S]
		w := c.N + c.S
		for k := range c.S {
			s1 := (1 - want) * (x[0]*p["B"][k] + x[1]*p["B"][c.S+k])
			for step := range T {
				if g, e := got[step*w+c.N+k], s1*math.Pow(want, float64(step)); math.Abs(g-e) > 1e-14 {
					t.Errorf("α = %g: s_%d[%d] = %.17g, want α^%d·(1 − α)·(B x_1)[%d] = %.17g", want, step+1, k, g, step, k, e)
				}
			}
		}
	}
}

// TestInit checks the initialisation of the package doc: every matrix Glorot-uniform with
// its own fan-in and fan-out, b_o zero; and that α defaults to 0.95.
func TestInit(t *testing.T) {
	c := scrn.New(10, 80, 40, 9)
	scope := model.NewStore().RootScope()
	if err := c.Init(scope, rand.New(rand.NewPCG(9, 9))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		fanIn, fanOut int
	}{
		{"A", c.In, c.N}, {"B", c.In, c.S}, {"P", c.S, c.N}, {"R", c.N, c.N}, {"U", c.N, c.Out}, {"V", c.S, c.Out},
	} {
		v := scope.GetVariable(tc.name)
		if d := v.Shape().Dimensions; !slices.Equal(d, []int{tc.fanIn, tc.fanOut}) {
			t.Errorf("%s has dimensions %v, want [%d %d]", tc.name, d, tc.fanIn, tc.fanOut)
		}
		bound := math.Sqrt(6 / float64(tc.fanIn+tc.fanOut))
		maxAbs := 0.0
		for _, x := range tensors.MustCopyFlatData[float32](v.MustValue()) {
			maxAbs = max(maxAbs, math.Abs(float64(x)))
		}
		if maxAbs > bound || maxAbs < 0.9*bound {
			t.Errorf("%s: max |w| = %.4g, want in [0.9, 1]·√(6/(%d+%d)) = %.4g", tc.name, maxAbs, tc.fanIn, tc.fanOut, bound)
		}
	}
	for i, x := range tensors.MustCopyFlatData[float32](scope.GetVariable("bo").MustValue()) {
		if x != 0 {
			t.Errorf("bo[%d] = %g, want 0", i, x)
		}
	}
	if scrn.DefaultAlpha != 0.95 {
		t.Errorf("DefaultAlpha = %g, want 0.95 ([1] §3)", scrn.DefaultAlpha)
	}
}
