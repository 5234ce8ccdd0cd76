package memory_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/memory"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
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

// TestCell runs the shared cell suite on a memory of width 3.
func TestCell(t *testing.T) {
	celltest.Test(t, celltest.Config{
		New:         func() rnn.Cell { return &memory.Cell{In: 3, Type: dtypes.Float64} },
		Sizes:       rnn.Sizes{In: 3, State: 7, Out: 3},
		ParamCounts: []celltest.ParamCount{{Name: "In 10", Cell: memory.New(10), Want: 11}}, // In + 1
		Budget:      celltest.GraphCost{Forward: 16, Training: 59},
		BadConfigs: []celltest.BadConfig{
			{Name: "zero In", Cell: &memory.Cell{In: 0}, Want: "In = 0"},
			{Name: "negative In", Cell: &memory.Cell{In: -3}, Want: "In = -3"},
			{Name: "Int64 Type", Cell: &memory.Cell{In: 2, Type: dtypes.Int64}, Want: "Type = Int64"},
		},
		Mismatched: []celltest.BadConfig{{Name: "other In", Cell: memory.New(4), Want: "/Win has shape"}},
		Step:       step,
	})
}

// step is one step of the equations of [1] in plain Go: α = σ(W_in·x + B_in),
// m_t = α x + (1 − α) m_{t−1}, y_t = α m_{t−1}, on the state [m_t | m_{t−1} | α_t].
func step(cell rnn.Cell, p map[string][]float64, state, x []float64) (next, y []float64) {
	n := cell.(*memory.Cell).In
	z := p["Bin"][0]
	for k := range n {
		z += p["Win"][k] * x[k]
	}
	alpha := 1 / (1 + math.Exp(-z))
	m := state[:n]
	next = make([]float64, 2*n+1)
	y = make([]float64, n)
	for k := range n {
		next[k] = alpha*x[k] + (1-alpha)*m[k]
		next[n+k] = m[k]
		y[k] = alpha * m[k]
	}
	next[2*n] = alpha
	return next, y
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

// TestInit checks the Glorot bound of W_in, √(6/(In + 1)), and the Float32 default.
func TestInit(t *testing.T) {
	store := model.NewStore()
	scope := store.RootScope()
	if err := memory.New(10).Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
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
}
