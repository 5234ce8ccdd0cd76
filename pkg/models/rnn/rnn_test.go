package rnn_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
)

// TestCell runs the shared cell suite on the tanh RNN and the IRNN.
func TestCell(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  func(in, n, out int) *rnn.Simple
	}{
		{"tanh", rnn.NewTanh},
		{"irnn", rnn.NewIRNN},
	} {
		t.Run(tc.name, func(t *testing.T) {
			celltest.Test(t, celltest.Config{
				New: func() rnn.Cell {
					c := tc.new(3, 4, 2)
					c.Type = dtypes.Float64
					return c
				},
				Sizes: rnn.Sizes{In: 3, State: 4, Out: 2},
				// In·N + N² + N + N·Out + Out + N (the doc of NumParams).
				ParamCounts: []celltest.ParamCount{
					{Name: "copy, 80 units", Cell: tc.new(10, 80, 9), Want: 8089},
					{Name: "adding, 128 units", Cell: tc.new(2, 128, 1), Want: 17025},
				},
				Budget: celltest.GraphCost{Forward: 9, Training: 30},
				BadConfigs: []celltest.BadConfig{
					{Name: "zero N", Cell: tc.new(10, 0, 9), Want: "rnn.Simple: N = 0"},
					{Name: "negative In", Cell: tc.new(-1, 4, 2), Want: "rnn.Simple: In = -1"},
					{Name: "zero Out", Cell: tc.new(3, 4, 0), Want: "rnn.Simple: Out = 0"},
					{Name: "Int32 Type", Cell: &rnn.Simple{In: 3, N: 4, Out: 2, Type: dtypes.Int32}, Want: "Type = Int32"},
				},
				Mismatched: []celltest.BadConfig{{Name: "other N", Cell: tc.new(3, 5, 2), Want: "/V has shape"}},
				Initial:    func(_ rnn.Cell, p map[string][]float64) []float64 { return p["h0"] },
				Step:       simpleStep,
			})
		})
	}
}

// simpleStep is h_t = σ(W h_{t−1} + V x_t + b), y_t = U h_t + b_o ([3] eq. 1.1) in plain Go,
// with σ = tanh or ReLU.
func simpleStep(cell rnn.Cell, p map[string][]float64, h, x []float64) (next, y []float64) {
	c := cell.(*rnn.Simple)
	next = make([]float64, c.N)
	for j := range c.N {
		z := p["b"][j]
		for i := range c.N {
			z += h[i] * p["W"][i*c.N+j]
		}
		for i := range c.In {
			z += x[i] * p["V"][i*c.N+j]
		}
		if c.Act == rnn.ReLUAct {
			next[j] = max(z, 0)
		} else {
			next[j] = math.Tanh(z)
		}
	}
	y = slices.Clone(p["bo"])
	for k := range c.Out {
		for j := range c.N {
			y[k] += next[j] * p["U"][j*c.Out+k]
		}
	}
	return next, y
}

// TestIRNNIdentity checks the IRNN's initialisation [2]: W = I exactly.
func TestIRNNIdentity(t *testing.T) {
	store := model.NewStore()
	scope := store.RootScope()
	if err := rnn.NewIRNN(10, 80, 9).Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	W := tensors.MustCopyFlatData[float32](scope.GetVariable("W").MustValue())
	for i := range 80 {
		for j := range 80 {
			want := float32(0)
			if i == j {
				want = 1
			}
			if W[i*80+j] != want {
				t.Fatalf("IRNN W[%d,%d] = %g, want %g", i, j, W[i*80+j], want)
			}
		}
	}
}
