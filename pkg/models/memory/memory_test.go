package memory_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/memory"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// newMemory returns a Float64 memory of width in with W_in and B_in set.
func newMemory(t *testing.T, win []float64, bin float64) (*memory.Cell, *model.Store) {
	t.Helper()
	cell := &memory.Cell{In: len(win), Type: dtypes.Float64}
	store := model.NewStore()
	scope := store.RootScope()
	if err := cell.Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	scope.GetVariable("Win").MustSetValue(tensors.FromFlatDataAndDimensions(win, len(win)))
	scope.GetVariable("Bin").MustSetValue(tensors.FromScalar(bin))
	return cell, store
}

// sequence returns the outputs [batch, T, In] and states [batch, T, 2·In + 1], flattened.
func sequence(store *model.Store, cell *memory.Cell, x [][][]float64) (out, states []float64) {
	res := model.MustExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
		o, s := rnn.Sequence(cell, scope, Const(g, x))
		return []*Node{o, s}
	})
	return tensors.MustCopyFlatData[float64](res[0]), tensors.MustCopyFlatData[float64](res[1])
}

// TestStepByHand compares the graph with the equations of [1] in plain Go:
// α = σ(W_in·x + B_in), m_t = α x + (1 − α) m_{t−1}, y_t = α m_{t−1}, state [m_t | m_{t−1} | α].
func TestStepByHand(t *testing.T) {
	win, bin := []float64{0.8, -1.5, 0.3}, 0.2
	cell, store := newMemory(t, win, bin)
	x := [][][]float64{
		{{1, 0.5, -1}, {-0.3, 0.2, 0.9}, {0.7, -0.8, 0.1}},
		{{0.1, 0.1, 0.1}, {2, -1, 0}, {-0.5, 0.4, 1.5}},
	}
	out, states := sequence(store, cell, x)
	const n, T, S = 3, 3, 7
	for b := range x {
		m := make([]float64, n)
		for s, xt := range x[b] {
			z := bin
			for k := range n {
				z += win[k] * xt[k]
			}
			alpha := 1 / (1 + math.Exp(-z))
			want := make([]float64, S)
			for k := range n {
				want[n+k] = m[k]
				want[2*n] = alpha
				if got, y := out[(b*T+s)*n+k], alpha*m[k]; math.Abs(got-y) > 1e-14 {
					t.Errorf("y[b=%d, t=%d, %d] = %.16g, want %.16g", b, s+1, k, got, y)
				}
				m[k] = alpha*xt[k] + (1-alpha)*m[k]
				want[k] = m[k]
			}
			for j := range S {
				if got := states[(b*T+s)*S+j]; math.Abs(got-want[j]) > 1e-14 {
					t.Errorf("state[b=%d, t=%d, %d] = %.16g, want %.16g", b, s+1, j, got, want[j])
				}
			}
		}
	}
}

// TestSaturatedGate checks the two limits of [1]: α = 1 replaces the memory with x_t
// (so y_t = x_{t−1}, a one-step copy), α = 0 holds it; and Barber's demo ("Simple Memory
// Storage"): store x_t whenever x_1 or x_2 is 1 and output the previous memory then.
func TestSaturatedGate(t *testing.T) {
	x := [][][]float64{{{0.5, -0.25, 0.75}, {-1, 0.125, 0.5}, {0.25, 1.5, -0.5}}}
	const n, T = 3, 3
	t.Run("alpha=1 copies", func(t *testing.T) {
		cell, store := newMemory(t, []float64{0, 0, 0}, 60) // σ(60) = 1 in float64
		out, states := sequence(store, cell, x)
		for s := range T {
			for k := range n {
				wantY := 0.0
				if s > 0 {
					wantY = x[0][s-1][k]
				}
				if got := out[s*n+k]; got != wantY {
					t.Errorf("y[t=%d, %d] = %g, want x[t=%d] = %g", s+1, k, got, s, wantY)
				}
				if got := states[s*(2*n+1)+k]; got != x[0][s][k] {
					t.Errorf("m[t=%d, %d] = %g, want x = %g", s+1, k, got, x[0][s][k])
				}
			}
		}
	})
	t.Run("alpha=0 holds", func(t *testing.T) {
		cell, store := newMemory(t, []float64{0, 0, 0}, -800) // σ(−800) = 0 in float64
		m0 := []float64{0.375, -2, 1.25}
		res := model.MustExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
			step := cell.Build(scope, g)
			h0 := Const(g, [][]float64{append(append([]float64(nil), m0...), 0, 0, 0, 0)})
			states := rnn.Unroll(step, Const(g, x), h0)
			return []*Node{step.Readout(states), states}
		})
		out, states := tensors.MustCopyFlatData[float64](res[0]), tensors.MustCopyFlatData[float64](res[1])
		for i := range out {
			if out[i] != 0 {
				t.Fatalf("y[%d] = %g, want 0 (α = 0)", i, out[i])
			}
		}
		for s := range T {
			for k := range n {
				if got := states[s*(2*n+1)+k]; got != m0[k] {
					t.Errorf("m[t=%d, %d] = %g, want m_0 = %g held", s+1, k, got, m0[k])
				}
			}
		}
	})
	t.Run("Barber demo", func(t *testing.T) {
		const gain = 100 // logit +50 when x_1 or x_2 is 1, −50 otherwise
		cell, store := newMemory(t, []float64{gain, gain, 0}, -gain/2)
		seq := [][]float64{{1, 0, 0.3}, {0, 0, 0.7}, {0, 0, -0.9}, {0, 1, 0.2}, {0, 0, 0.4}}
		out, _ := sequence(store, cell, [][][]float64{seq})
		want := [][]float64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {1, 0, 0.3}, {0, 0, 0}}
		for s := range want {
			for k := range n {
				if got := out[s*n+k]; math.Abs(got-want[s][k]) > 1e-9 {
					t.Errorf("y[t=%d, %d] = %.12g, want %g", s+1, k, got, want[s][k])
				}
			}
		}
	})
}

// TestGradients checks ∂L/∂W_in and ∂L/∂B_in against central differences.
func TestGradients(t *testing.T) {
	const in, batch, T = 3, 2, 6
	cell := &memory.Cell{In: in, Type: dtypes.Float64}
	store := model.NewStore()
	scope := store.RootScope()
	if err := cell.Init(scope, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	scope.GetVariable("Bin").MustSetValue(tensors.FromScalar(0.3))
	rng := rand.New(rand.NewPCG(3, 3))
	x, wy := rnn.Uniform(rng, batch*T*in, -1, 1), rnn.Uniform(rng, batch*T*in, -1, 1)
	loss := func(scope *model.Scope, g *Graph) *Node {
		o, _ := rnn.Sequence(cell, scope, Reshape(Const(g, x), batch, T, in))
		return ReduceAllSum(Mul(o, Reshape(Const(g, wy), batch, T, in)))
	}
	if err := analysis.CheckGradient(backend.MustNew(), store, loss, analysis.FD{}); err != nil {
		t.Error(err)
	}
}

// TestInitAndSizes checks the shapes, the parameter count In + 1, the Glorot bound of
// W_in, the Float32 default, and the errors for bad configurations.
func TestInitAndSizes(t *testing.T) {
	cell := memory.New(10)
	if got, want := cell.Sizes(), (rnn.Sizes{In: 10, State: 21, Out: 10}); got != want {
		t.Errorf("Sizes() = %+v, want %+v", got, want)
	}
	store := model.NewStore()
	scope := store.RootScope()
	if err := cell.Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	counted := 0
	for v := range scope.IterVariables() {
		if v.Trainable {
			counted += v.Shape().Size()
		}
	}
	t.Logf("memory (In 10): %d parameters", counted)
	if counted != 11 || cell.NumParams() != 11 {
		t.Errorf("variables hold %d parameters, NumParams() = %d, want In + 1 = 11", counted, cell.NumParams())
	}
	win := scope.GetVariable("Win").MustValue()
	if win.DType() != dtypes.Float32 {
		t.Errorf("Win dtype %s, want Float32", win.DType())
	}
	bound := math.Sqrt(6.0 / 11)
	for i, v := range tensors.MustCopyFlatData[float32](win) {
		if math.Abs(float64(v)) > bound {
			t.Errorf("Win[%d] = %g, want |W_in| <= √(6/11) = %g", i, v, bound)
		}
	}
	for _, tc := range []struct {
		name string
		cell memory.Cell
		want string
	}{
		{"zero In", memory.Cell{In: 0}, "In = 0"},
		{"negative In", memory.Cell{In: -3}, "In = -3"},
		{"Int64 Type", memory.Cell{In: 2, Type: dtypes.Int64}, "Type = "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cell.Init(model.NewStore().RootScope(), rand.New(rand.NewPCG(1, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Init error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestNodesPerStep measures the graph nodes one time step adds (T = 2 minus T = 1).
func TestNodesPerStep(t *testing.T) {
	count := func(T int) int {
		cell := memory.New(3)
		store := model.NewStore()
		if err := cell.Init(store.RootScope(), rand.New(rand.NewPCG(1, 1))); err != nil {
			t.Fatal(err)
		}
		g := NewGraph(backend.MustNew(), "count")
		rnn.Sequence(cell, store.RootScope(), Zeros(g, shapes.Make(dtypes.Float32, 2, T, 3)))
		return len(g.Nodes())
	}
	perStep := count(2) - count(1)
	t.Logf("memory: %d graph nodes per time step", perStep)
	if perStep < 5 || perStep > 14 {
		t.Errorf("%d nodes per time step, want between 5 and 14", perStep)
	}
}
