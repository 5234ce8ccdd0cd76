package lstm_test

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
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
)

// TestCell runs the shared cell suite on the LSTM of Zaremba et al. and on the uRNN code's
// (peephole, forget bias 1).
func TestCell(t *testing.T) {
	for _, tc := range []struct {
		name     string
		new      func(in, n, out int) *lstm.Cell
		peephole bool
		budget   celltest.GraphCost
		counts   [2]int // copy (In 10, N 40, Out 9) and adding (In 2, N 128, Out 1), package doc
	}{
		{"zaremba", lstm.New, false, celltest.GraphCost{Forward: 23, Training: 80}, [2]int{8609, 67457}},
		{"peephole", lstm.NewURNNCode, true, celltest.GraphCost{Forward: 26, Training: 95}, [2]int{10209, 83841}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mismatched := []celltest.BadConfig{{Name: "other N", Cell: tc.new(3, 5, 2), Want: "/V has shape"}}
			if !tc.peephole {
				mismatched = append(mismatched, celltest.BadConfig{Name: "peephole", Cell: lstm.NewURNNCode(3, 4, 2), Want: "/P does not exist"})
			}
			celltest.Test(t, celltest.Config{
				New: func() rnn.Cell {
					c := tc.new(3, 4, 2)
					c.Type = dtypes.Float64
					return c
				},
				Sizes: rnn.Sizes{In: 3, State: 8, Out: 2},
				ParamCounts: []celltest.ParamCount{
					{Name: "copy, 40 units", Cell: tc.new(10, 40, 9), Want: tc.counts[0]},
					{Name: "adding, 128 units", Cell: tc.new(2, 128, 1), Want: tc.counts[1]},
				},
				Budget: tc.budget,
				BadConfigs: []celltest.BadConfig{
					{Name: "zero In", Cell: lstm.New(0, 4, 2), Want: "lstm.Cell: In = 0"},
					{Name: "negative N", Cell: lstm.New(3, -1, 2), Want: "lstm.Cell: N = -1"},
					{Name: "zero Out", Cell: lstm.New(3, 4, 0), Want: "lstm.Cell: Out = 0"},
					{Name: "NaN ForgetBias", Cell: &lstm.Cell{In: 3, N: 4, Out: 2, ForgetBias: math.NaN()}, Want: "ForgetBias = NaN"},
					{Name: "Int32 Type", Cell: &lstm.Cell{In: 3, N: 4, Out: 2, Type: dtypes.Int32}, Want: "Type = Int32"},
				},
				Mismatched: mismatched,
				Initial:    func(_ rnn.Cell, p map[string][]float64) []float64 { return append(slices.Clone(p["h0"]), p["c0"]...) },
				Step:       step,
			})
		})
	}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// step is one step of the LSTM equations of the package doc in plain Go, for one example
// with the variables p (flat, row-major, shapes as documented): the state is [h | c].
func step(cell rnn.Cell, p map[string][]float64, state, x []float64) (next, y []float64) {
	c := cell.(*lstm.Cell)
	n, in, out := c.N, c.In, c.Out
	h, mem := state[:n], state[n:]
	pre := func(k, j int) float64 { // gate k, unit j: V_k x + W_k h + b_k
		z := p["b"][k*n+j]
		for i := range in {
			z += x[i] * p["V"][k*in*n+i*n+j]
		}
		for m := range n {
			z += h[m] * p["W"][k*n*n+m*n+j]
		}
		return z
	}
	newC := make([]float64, n)
	for j := range n {
		i, f, g := sigmoid(pre(lstm.GateI, j)), sigmoid(pre(lstm.GateF, j)), math.Tanh(pre(lstm.GateG, j))
		newC[j] = f*mem[j] + i*g
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
	y = slices.Clone(p["bo"])
	for q := range out {
		for j := range n {
			y[q] += newH[j] * p["U"][j*out+q]
		}
	}
	return append(newH, newC...), y
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
}

// TestGaussianInit: with Gaussian, V, W, P and U are drawn from N(0, 1/√n), n each matrix's
// fan-in (Henaff et al. §4.1 read literally): their sample standard deviations are n^(−1/4).
func TestGaussianInit(t *testing.T) {
	c := &lstm.Cell{In: 10, N: 100, Out: 9, Peephole: true, Gaussian: true}
	scope := model.NewStore().RootScope()
	if err := c.Init(scope, rand.New(rand.NewPCG(9, 9))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		fanIn int
	}{{"V", c.In}, {"W", c.N}, {"P", c.N}, {"U", c.N}} {
		v := tensors.MustCopyFlatData[float32](scope.GetVariable(tc.name).MustValue())
		var sum2 float64
		for _, x := range v {
			sum2 += float64(x) * float64(x)
		}
		std, want := math.Sqrt(sum2/float64(len(v))), math.Pow(float64(tc.fanIn), -0.25)
		if math.Abs(std/want-1) > 0.06 { // 900 values or more: the estimate's relative error is below 2.4%
			t.Errorf("%s: standard deviation %.4f, want %d^(−1/4) = %.4f", tc.name, std, tc.fanIn, want)
		}
	}
}
