package gru_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/gru"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// initRandom creates the cell's variables in a new store and then overwrites every one of
// them (biases and h0 included) with values from U[−1, 1], so that no gradient or term of
// the hand computation is trivially zero. It returns the store and the values by name.
func initRandom(t *testing.T, c *gru.Cell, seed uint64) (*model.Store, map[string][]float64) {
	t.Helper()
	store := model.NewStore()
	scope := store.RootScope()
	rng := rand.New(rand.NewPCG(seed, 1))
	if err := c.Init(scope, rng); err != nil {
		t.Fatal(err)
	}
	return store, rnn.RandomizeVariables(scope, rng, -1, 1)
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// byHand runs the GRU equations of the package doc (reset gate before W_h, as
// arXiv:1406.1078 v3) in plain Go for one example x ([T][In]) with the variables p (flat,
// row-major, shapes as documented) and returns y_t ([T][Out]) and h_t ([T][N]).
func byHand(c *gru.Cell, p map[string][]float64, x [][]float64) (ys, states [][]float64) {
	n, in, out := c.N, c.In, c.Out
	V, W, b := p["V"], p["W"], p["b"]
	h := slices.Clone(p["h0"])
	for _, xt := range x {
		inProj := func(k, j int) float64 { // V_k x + b_k, unit j
			z := b[k*n+j]
			for i := range in {
				z += xt[i] * V[k*in*n+i*n+j]
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
		newH := make([]float64, n)
		for j := range n {
			cand := math.Tanh(inProj(gru.GateH, j) + recur(gru.GateH, j, rh))
			newH[j] = (1-z[j])*h[j] + z[j]*cand
		}
		h = newH
		y := slices.Clone(p["bo"])
		for q := range out {
			for j := range n {
				y[q] += h[j] * p["U"][j*out+q]
			}
		}
		ys = append(ys, y)
		states = append(states, slices.Clone(h))
	}
	return ys, states
}

// TestStepByHand compares three steps of the graph, for a batch of two, with byHand.
func TestStepByHand(t *testing.T) {
	const batch, T = 2, 3
	c := gru.New(3, 4, 2)
	c.Type = dtypes.Float64
	store, p := initRandom(t, c, 11)
	x := rnn.Uniform(rand.New(rand.NewPCG(5, 5)), batch*T*c.In, -1, 1)
	res := model.MustExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
		out, states := rnn.Sequence(c, scope, Reshape(Const(g, x), batch, T, c.In))
		return []*Node{out, states}
	})
	gotY := tensors.MustCopyFlatData[float64](res[0])
	gotH := tensors.MustCopyFlatData[float64](res[1])
	for b := range batch {
		xb := make([][]float64, T)
		for s := range T {
			xb[s] = x[(b*T+s)*c.In : (b*T+s+1)*c.In]
		}
		ys, states := byHand(c, p, xb)
		for s := range T {
			for q, want := range ys[s] {
				if got := gotY[(b*T+s)*c.Out+q]; math.Abs(got-want) > 1e-12 {
					t.Errorf("y[%d, %d, %d] = %.15g, want %.15g", b, s, q, got, want)
				}
			}
			for j, want := range states[s] {
				if got := gotH[(b*T+s)*c.N+j]; math.Abs(got-want) > 1e-12 {
					t.Errorf("h[%d, %d, %d] = %.15g, want %.15g", b, s, j, got, want)
				}
			}
		}
	}
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

// TestGradients checks the autodiff gradient of every element of every variable against
// central differences in float64.
func TestGradients(t *testing.T) {
	const batch, T = 2, 4
	c := gru.New(3, 4, 2)
	c.Type = dtypes.Float64
	store, p := initRandom(t, c, 3)
	x := rnn.Uniform(rand.New(rand.NewPCG(4, 4)), batch*T*c.In, -1, 1)
	loss := func(scope *model.Scope, g *Graph) *Node {
		out, _ := rnn.Sequence(c, scope, Reshape(Const(g, x), batch, T, c.In))
		return ReduceAllSum(Mul(out, out))
	}
	if err := analysis.CheckGradient(backend.MustNew(), store, loss, analysis.FD{}); err != nil {
		t.Error(err)
	}
	if len(p) != 6 {
		t.Errorf("%d variables, want 6 (V, W, b, U, bo, h0)", len(p))
	}
}

// TestParamCount compares the variables Init creates with the formula of the package doc,
// 3N(In + N + 1) + N·Out + Out + N, at the LSTM's sizes of the uRNN paper §4.
func TestParamCount(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in, n, out int
		want       int
	}{
		{"copy", 10, 40, 9, 6529},
		{"adding", 2, 128, 1, 50561},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gru.New(tc.in, tc.n, tc.out)
			store := model.NewStore()
			if err := c.Init(store.RootScope(), rand.New(rand.NewPCG(1, 1))); err != nil {
				t.Fatal(err)
			}
			got := 0
			for v := range store.RootScope().IterVariables() {
				got += v.Shape().Size()
			}
			formula := 3*tc.n*(tc.in+tc.n+1) + tc.n*tc.out + tc.out + tc.n
			t.Logf("GRU In=%d N=%d Out=%d: %d parameters", tc.in, tc.n, tc.out, got)
			if got != tc.want || formula != tc.want || c.NumParams() != tc.want {
				t.Errorf("parameters: Init created %d, formula gives %d, NumParams %d; want %d", got, formula, c.NumParams(), tc.want)
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
	if s := c.Sizes(); s != (rnn.Sizes{In: 10, State: 40, Out: 9}) {
		t.Errorf("Sizes() = %+v, want {In:10 State:40 Out:9}", s)
	}
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cell *gru.Cell
		want string // in the error
	}{
		{gru.New(0, 4, 2), "gru.Cell: In = 0"},
		{gru.New(3, -1, 2), "gru.Cell: N = -1"},
		{gru.New(3, 4, 0), "gru.Cell: Out = 0"},
		{&gru.Cell{In: 3, N: 4, Out: 2, Type: dtypes.Int32}, "Type = Int32"},
	} {
		err := tc.cell.Init(model.NewStore().RootScope(), rand.New(rand.NewPCG(1, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Init(%+v) = %v, want an error containing %q", *tc.cell, err, tc.want)
		}
	}
	store := model.NewStore()
	if err := gru.New(3, 4, 2).Init(store.RootScope(), rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	var msg string
	func() {
		defer func() { msg = fmt.Sprint(recover()) }()
		model.MustExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
			out, _ := rnn.Sequence(gru.New(2, 4, 2), scope, Zeros(g, shapes.Make(dtypes.Float32, 1, 1, 2)))
			return out
		})
	}()
	if !strings.Contains(msg, "/V has shape") {
		t.Errorf("Build with In = 2 after Init with In = 3: panic %q, want one naming variable V", msg)
	}
}

// TestNodesPerStep measures how many graph nodes one time step adds to rnn.Sequence (built
// for T = 2, 3, 4) and checks it is the same at every T: all per-parameter work is outside
// the time loop. The count includes rnn.Unroll's slice of px and Stack's reshape.
func TestNodesPerStep(t *testing.T) {
	const maxPerStep = 17
	c := gru.New(3, 4, 2)
	store := model.NewStore()
	if err := c.Init(store.RootScope(), rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	nodes := make([]int, 5)
	for T := 2; T < len(nodes); T++ {
		model.MustExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
			out, _ := rnn.Sequence(c, scope, Zeros(g, shapes.Make(dtypes.Float32, 2, T, 3)))
			nodes[T] = len(g.Nodes())
			return out
		})
	}
	perStep := nodes[3] - nodes[2]
	t.Logf("GRU: %d nodes per time step (graph: %d nodes at T=2)", perStep, nodes[2])
	if d := nodes[4] - nodes[3]; d != perStep {
		t.Errorf("nodes added by step 4: %d, by step 3: %d; want equal", d, perStep)
	}
	if perStep > maxPerStep {
		t.Errorf("%d nodes per step, want <= %d", perStep, maxPerStep)
	}
}
