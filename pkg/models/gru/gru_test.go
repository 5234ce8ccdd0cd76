package gru_test

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
	"github.com/urnn-notebooks/longmemory/pkg/models/gru"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
)

// TestCell runs the shared cell suite on the GRU.
func TestCell(t *testing.T) {
	celltest.Test(t, celltest.Config{
		New:   func() rnn.Cell { return &gru.Cell{In: 3, N: 4, Out: 2, Type: dtypes.Float64} },
		Sizes: rnn.Sizes{In: 3, State: 4, Out: 2},
		// 3N(In + N + 1) + N·Out + Out + N at the LSTM's sizes of the uRNN paper §4.
		ParamCounts: []celltest.ParamCount{
			{Name: "copy, 40 units", Cell: gru.New(10, 40, 9), Want: 6529},
			{Name: "adding, 128 units", Cell: gru.New(2, 128, 1), Want: 50561},
		},
		Budget: celltest.GraphCost{Forward: 20, Training: 70},
		BadConfigs: []celltest.BadConfig{
			{Name: "zero In", Cell: gru.New(0, 4, 2), Want: "gru.Cell: In = 0"},
			{Name: "negative N", Cell: gru.New(3, -1, 2), Want: "gru.Cell: N = -1"},
			{Name: "zero Out", Cell: gru.New(3, 4, 0), Want: "gru.Cell: Out = 0"},
			{Name: "Int32 Type", Cell: &gru.Cell{In: 3, N: 4, Out: 2, Type: dtypes.Int32}, Want: "Type = Int32"},
		},
		Mismatched: []celltest.BadConfig{{Name: "other In", Cell: gru.New(2, 4, 2), Want: "/V has shape"}},
		Initial:    func(_ rnn.Cell, p map[string][]float64) []float64 { return p["h0"] },
		Step:       step,
	})
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// step is one step of the GRU equations of the package doc (reset gate before W_h, as
// arXiv:1406.1078 v3) in plain Go, for one example with the variables p (flat, row-major,
// shapes as documented).
func step(cell rnn.Cell, p map[string][]float64, h, x []float64) (next, y []float64) {
	c := cell.(*gru.Cell)
	n, in, out := c.N, c.In, c.Out
	V, W, b := p["V"], p["W"], p["b"]
	inProj := func(k, j int) float64 { // V_k x + b_k, unit j
		z := b[k*n+j]
		for i := range in {
			z += x[i] * V[k*in*n+i*n+j]
		}
		return z
	}
	recur := func(k, j int, v []float64) float64 { // (W_k v)_j, v a row vector
		z := 0.0
		for m := range n {
			z += v[m] * W[k*n*n+m*n+j]
		}
		return z
	}
	z, rh := make([]float64, n), make([]float64, n)
	for j := range n {
		z[j] = sigmoid(inProj(gru.GateZ, j) + recur(gru.GateZ, j, h))
		rh[j] = sigmoid(inProj(gru.GateR, j)+recur(gru.GateR, j, h)) * h[j]
	}
	next = make([]float64, n)
	for j := range n {
		cand := math.Tanh(inProj(gru.GateH, j) + recur(gru.GateH, j, rh))
		next[j] = (1-z[j])*h[j] + z[j]*cand
	}
	y = slices.Clone(p["bo"])
	for q := range out {
		for j := range n {
			y[q] += next[j] * p["U"][j*out+q]
		}
	}
	return next, y
}

// TestGates checks the role of each gate in the graph with V = W = 0 and h_0 given:
// z = σ(b_z) → 0 keeps h_t = h_0; z → 1 and r → 0 give h_t = tanh(b_h), whatever h_0.
func TestGates(t *testing.T) {
	const n, T = 3, 4
	h0 := []float64{0.5, -0.25, 0.75}
	for _, tc := range []struct {
		name       string
		bz, br, bh float64
		want       func(j int) float64
	}{
		{"z=0 keeps h0", -40, 0, 0.3, func(j int) float64 { return h0[j] }},
		{"z=1,r=0 resets", 40, -40, 0.3, func(int) float64 { return math.Tanh(0.3) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gru.New(2, n, 1)
			c.Type = dtypes.Float64
			store := model.NewStore()
			scope := store.RootScope()
			if err := c.Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"V", "W"} {
				v := scope.GetVariable(name)
				v.MustSetValue(tensors.FromFlatDataAndDimensions(make([]float64, v.Shape().Size()), v.Shape().Dimensions...))
			}
			b := make([]float64, 3*n)
			for j := range n {
				b[gru.GateZ*n+j], b[gru.GateR*n+j], b[gru.GateH*n+j] = tc.bz, tc.br, tc.bh
			}
			scope.GetVariable("b").MustSetValue(tensors.FromFlatDataAndDimensions(b, 3, n))
			scope.GetVariable("h0").MustSetValue(tensors.FromFlatDataAndDimensions(h0, n))
			states := model.MustExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
				x := Reshape(ConstAsDType(g, dtypes.Float64, rnn.Uniform(rand.New(rand.NewPCG(2, 2)), T*2, -1, 1)), 1, T, 2)
				_, s := rnn.Sequence(c, scope, x)
				return s
			})
			got := tensors.MustCopyFlatData[float64](states)
			for j := range n {
				if g, want := got[(T-1)*n+j], tc.want(j); math.Abs(g-want) > 1e-12 {
					t.Errorf("h_%d[%d] = %.15g, want %.15g", T, j, g, want)
				}
			}
		})
	}
}

// TestInit checks that each gate's matrix is Glorot-uniform with its own fan-in + fan-out
// (In + N for V, 2N for W) and that biases and h0 start at 0.
func TestInit(t *testing.T) {
	c := gru.New(10, 40, 9)
	scope := model.NewStore().RootScope()
	if err := c.Init(scope, rand.New(rand.NewPCG(9, 9))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		fanIn, fanOut int
		gates         int // matrices along the leading axis (1 for U)
	}{
		{"V", c.In, c.N, 3}, {"W", c.N, c.N, 3}, {"U", c.N, c.Out, 1},
	} {
		v := tensors.MustCopyFlatData[float32](scope.GetVariable(tc.name).MustValue())
		bound := math.Sqrt(6 / float64(tc.fanIn+tc.fanOut))
		size := tc.fanIn * tc.fanOut
		for k := range tc.gates {
			maxAbs := 0.0
			for _, x := range v[k*size : (k+1)*size] {
				maxAbs = max(maxAbs, math.Abs(float64(x)))
			}
			if maxAbs > bound || maxAbs < 0.95*bound {
				t.Errorf("%s[%d]: max |w| = %.4g, want in [0.95, 1]·√(6/(%d+%d)) = %.4g", tc.name, k, maxAbs, tc.fanIn, tc.fanOut, bound)
			}
		}
	}
	for _, name := range []string{"b", "h0", "bo"} {
		for i, x := range tensors.MustCopyFlatData[float32](scope.GetVariable(name).MustValue()) {
			if x != 0 {
				t.Errorf("%s[%d] = %g, want 0", name, i, x)
			}
		}
	}
}
