package lstm_test

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
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// initRandom creates the cell's variables in a new store and then overwrites every one of
// them (biases, h0 and c0 included) with values from U[−1, 1], so that no gradient or term
// of the hand computation is trivially zero. It returns the store and the values by name.
func initRandom(t *testing.T, c *lstm.Cell, seed uint64) (*model.Store, map[string][]float64) {
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

// byHand runs the LSTM equations of the package doc in plain Go for one example x ([T][In])
// with the variables p (flat, row-major, shapes as documented) and returns y_t ([T][Out])
// and the states [h_t | c_t] ([T][2N]).
func byHand(c *lstm.Cell, p map[string][]float64, x [][]float64) (ys, states [][]float64) {
	n, in, out := c.N, c.In, c.Out
	h := slices.Clone(p["h0"])
	cell := slices.Clone(p["c0"])
	for _, xt := range x {
		pre := func(k, j int) float64 { // gate k, unit j: V_k x + W_k h + b_k
			z := p["b"][k*n+j]
			for i := range in {
				z += xt[i] * p["V"][k*in*n+i*n+j]
			}
			for m := range n {
				z += h[m] * p["W"][k*n*n+m*n+j]
			}
			return z
		}
		newC := make([]float64, n)
		for j := range n {
			i, f, g := sigmoid(pre(lstm.GateI, j)), sigmoid(pre(lstm.GateF, j)), math.Tanh(pre(lstm.GateG, j))
			newC[j] = f*cell[j] + i*g
		}
		newH := make([]float64, n)
		for j := range n {
			zo := pre(lstm.GateO, j)
			if c.Peephole {
				for m := range n {
					zo += newC[m] * p["P"][m*n+j]
				}
			}
			newH[j] = sigmoid(zo) * math.Tanh(newC[j])
		}
		h, cell = newH, newC
		y := slices.Clone(p["bo"])
		for q := range out {
			for j := range n {
				y[q] += h[j] * p["U"][j*out+q]
			}
		}
		ys = append(ys, y)
		states = append(states, append(slices.Clone(h), cell...))
	}
	return ys, states
}

// TestStepByHand compares two steps of the graph, for a batch of two, with byHand, for
// the cell with and without the peephole.
func TestStepByHand(t *testing.T) {
	const batch, T = 2, 2
	for _, tc := range []struct {
		name string
		cell *lstm.Cell
	}{
		{"zaremba", lstm.New(3, 4, 2)},
		{"peephole", &lstm.Cell{In: 3, N: 4, Out: 2, Peephole: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cell
			c.Type = dtypes.Float64
			store, p := initRandom(t, c, 11)
			x := rnn.Uniform(rand.New(rand.NewPCG(5, 5)), batch*T*c.In, -1, 1)
			res := model.MustExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
				out, states := rnn.Sequence(c, scope, Reshape(Const(g, x), batch, T, c.In))
				return []*Node{out, states}
			})
			gotY := tensors.MustCopyFlatData[float64](res[0])
			gotS := tensors.MustCopyFlatData[float64](res[1])
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
					for k, want := range states[s] {
						if got := gotS[(b*T+s)*2*c.N+k]; math.Abs(got-want) > 1e-12 {
							t.Errorf("state[%d, %d, %d] = %.15g, want %.15g ([h | c], N = %d)", b, s, k, got, want, c.N)
						}
					}
				}
			}
		})
	}
}

// TestGradients checks the autodiff gradient of every element of every variable against
// central differences in float64, with and without the peephole.
func TestGradients(t *testing.T) {
	const batch, T = 2, 4
	for _, tc := range []struct {
		name string
		cell *lstm.Cell
	}{
		{"zaremba", lstm.New(3, 4, 2)},
		{"peephole", lstm.NewURNNCode(3, 4, 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cell
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
			// CheckGradient skips variables the loss does not use: make sure none is left out.
			n := 0
			for range store.RootScope().IterVariables() {
				n++
			}
			if n != len(p) || (c.Peephole && p["P"] == nil) {
				t.Errorf("%d variables, want %d", n, len(p))
			}
		})
	}
}

// TestForgetBias checks that Init puts ForgetBias in b_f only, and that the graph uses it
// as the forget gate: with V = W = 0, b_i = b_o = b_g = 0 and h_0 = 0 the cell update is
// c_t = σ(b_f) c_{t−1} + σ(0) tanh(0) = σ(b_f) c_{t−1}, so c_T = σ(b_f)^T c_0.
func TestForgetBias(t *testing.T) {
	const n, T = 3, 3
	for _, tc := range []struct {
		name string
		cell *lstm.Cell
		want float64 // b_f after Init
	}{
		{"New", lstm.New(2, n, 1), 0},
		{"NewURNNCode", lstm.NewURNNCode(2, n, 1), 1},
		{"ForgetBias=-2", &lstm.Cell{In: 2, N: n, Out: 1, ForgetBias: -2}, -2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cell
			c.Type = dtypes.Float64
			store := model.NewStore()
			scope := store.RootScope()
			if err := c.Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
				t.Fatal(err)
			}
			b := tensors.MustCopyFlatData[float64](scope.GetVariable("b").MustValue())
			for k := range 4 {
				for j := range n {
					want := 0.0
					if k == lstm.GateF {
						want = tc.want
					}
					if b[k*n+j] != want {
						t.Errorf("b[%d, %d] = %g, want %g", k, j, b[k*n+j], want)
					}
				}
			}
			for _, name := range []string{"V", "W"} {
				v := scope.GetVariable(name)
				v.MustSetValue(tensors.FromFlatDataAndDimensions(make([]float64, v.Shape().Size()), v.Shape().Dimensions...))
			}
			c0 := []float64{1, -2, 0.5}
			scope.GetVariable("c0").MustSetValue(tensors.FromFlatDataAndDimensions(c0, n))
			states := model.MustExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
				x := Reshape(ConstAsDType(g, dtypes.Float64, rnn.Uniform(rand.New(rand.NewPCG(2, 2)), T*2, -1, 1)), 1, T, 2)
				_, s := rnn.Sequence(c, scope, x)
				return s
			})
			got := tensors.MustCopyFlatData[float64](states)
			decay := math.Pow(sigmoid(tc.want), T)
			for j := range n {
				if g, want := got[(T-1)*2*n+n+j], decay*c0[j]; math.Abs(g-want) > 1e-12 {
					t.Errorf("c_%d[%d] = %.15g, want σ(%g)^%d · %g = %.15g", T, j, g, tc.want, T, c0[j], want)
				}
			}
		})
	}
}

// TestParamCount counts the variables Init creates for the paper's configurations
// (uRNN paper §4: LSTM 40 on copy, 128 on adding) and compares them with the formula of
// the package doc, 4N(In + N + 1) + N·Out + Out + 2N (+ N² with the peephole).
func TestParamCount(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in, n, out int
		peephole   bool
		want       int
	}{
		{"copy", 10, 40, 9, false, 8609},
		{"copy+peephole", 10, 40, 9, true, 10209},
		{"adding", 2, 128, 1, false, 67457},
		{"adding+peephole", 2, 128, 1, true, 83841},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &lstm.Cell{In: tc.in, N: tc.n, Out: tc.out, Peephole: tc.peephole}
			store := model.NewStore()
			if err := c.Init(store.RootScope(), rand.New(rand.NewPCG(1, 1))); err != nil {
				t.Fatal(err)
			}
			got := 0
			for v := range store.RootScope().IterVariables() {
				got += v.Shape().Size()
			}
			formula := 4*tc.n*(tc.in+tc.n+1) + tc.n*tc.out + tc.out + 2*tc.n
			if tc.peephole {
				formula += tc.n * tc.n
			}
			t.Logf("LSTM In=%d N=%d Out=%d Peephole=%v: %d parameters", tc.in, tc.n, tc.out, tc.peephole, got)
			if got != tc.want || formula != tc.want || c.NumParams() != tc.want {
				t.Errorf("parameters: Init created %d, formula gives %d, NumParams %d; want %d", got, formula, c.NumParams(), tc.want)
			}
		})
	}
}

// TestInit checks the initialisation against [4]'s code: each gate's matrix is Glorot-
// uniform with its own fan-in + fan-out (In + N for V, 2N for W, not In + 4N), h0 = c0 = 0.
func TestInit(t *testing.T) {
	c := &lstm.Cell{In: 10, N: 40, Out: 9, Peephole: true}
	store := model.NewStore()
	scope := store.RootScope()
	if err := c.Init(scope, rand.New(rand.NewPCG(9, 9))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		fanIn, fanOut int
		gates         int // matrices along the leading axis (1 for P and U)
	}{
		{"V", c.In, c.N, 4}, {"W", c.N, c.N, 4}, {"P", c.N, c.N, 1}, {"U", c.N, c.Out, 1},
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
	for _, name := range []string{"h0", "c0", "bo"} {
		for i, x := range tensors.MustCopyFlatData[float32](scope.GetVariable(name).MustValue()) {
			if x != 0 {
				t.Errorf("%s[%d] = %g, want 0", name, i, x)
			}
		}
	}
	if s := c.Sizes(); s != (rnn.Sizes{In: 10, State: 80, Out: 9}) {
		t.Errorf("Sizes() = %+v, want {In:10 State:80 Out:9}", s)
	}
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cell *lstm.Cell
		want string // in the error
	}{
		{lstm.New(0, 4, 2), "lstm.Cell: In = 0"},
		{lstm.New(3, -1, 2), "lstm.Cell: N = -1"},
		{lstm.New(3, 4, 0), "lstm.Cell: Out = 0"},
		{&lstm.Cell{In: 3, N: 4, Out: 2, ForgetBias: math.NaN()}, "ForgetBias = NaN"},
		{&lstm.Cell{In: 3, N: 4, Out: 2, Type: dtypes.Int32}, "Type = Int32"},
	} {
		err := tc.cell.Init(model.NewStore().RootScope(), rand.New(rand.NewPCG(1, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Init(%+v) = %v, want an error containing %q", *tc.cell, err, tc.want)
		}
	}
	// Build with a configuration other than the one Init used panics naming the variable.
	store := model.NewStore()
	if err := lstm.New(3, 4, 2).Init(store.RootScope(), rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	var msg string
	func() {
		defer func() { msg = fmt.Sprint(recover()) }()
		model.MustExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
			out, _ := rnn.Sequence(lstm.New(3, 5, 2), scope, Zeros(g, shapes.Make(dtypes.Float32, 1, 1, 3)))
			return out
		})
	}()
	if !strings.Contains(msg, "/V has shape") {
		t.Errorf("Build with N = 5 after Init with N = 4: panic %q, want one naming variable V", msg)
	}
}

// TestNodesPerStep measures how many graph nodes one time step adds to rnn.Sequence (built
// for T = 2, 3, 4; from T = 1 to 2 the count is one higher, as Stack of one state is a
// single reshape) and checks it is the same at every T: all per-parameter work is outside
// the time loop. The count includes rnn.Unroll's slice of px and Stack's reshape.
func TestNodesPerStep(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell *lstm.Cell
		max  int
	}{
		{"zaremba", lstm.New(3, 4, 2), 20},
		{"peephole", lstm.NewURNNCode(3, 4, 2), 23},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := model.NewStore()
			if err := tc.cell.Init(store.RootScope(), rand.New(rand.NewPCG(1, 1))); err != nil {
				t.Fatal(err)
			}
			nodes := make([]int, 5)
			for T := 2; T < len(nodes); T++ {
				model.MustExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
					out, _ := rnn.Sequence(tc.cell, scope, Zeros(g, shapes.Make(dtypes.Float32, 2, T, 3)))
					nodes[T] = len(g.Nodes())
					return out
				})
			}
			perStep := nodes[3] - nodes[2]
			t.Logf("%s: %d nodes per time step (graph: %d nodes at T=2)", tc.name, perStep, nodes[2])
			if d := nodes[4] - nodes[3]; d != perStep {
				t.Errorf("nodes added by step 4: %d, by step 3: %d; want equal", d, perStep)
			}
			if perStep > tc.max {
				t.Errorf("%d nodes per step, want <= %d", perStep, tc.max)
			}
		})
	}
}
