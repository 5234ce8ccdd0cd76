package analysis_test

import (
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/gru"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/memory"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/urnn"
)

// TestNodesPerStep prints the per-step graph size of every model (the cost that matters
// on the Go backend, ~10–20 µs per node) and fails if one grows beyond its budget.
func TestNodesPerStep(t *testing.T) {
	pooled := ltrnn.NewORNN(10, 8, 9)
	pooled.Pooling = true
	for _, tc := range []struct {
		name   string
		cell   rnn.Cell
		budget analysis.GraphCost
	}{
		{"tanh RNN", rnn.NewTanh(10, 8, 9), analysis.GraphCost{Forward: 8, Training: 30}},
		{"IRNN", rnn.NewIRNN(10, 8, 9), analysis.GraphCost{Forward: 8, Training: 30}},
		{"LSTM", lstm.New(10, 8, 9), analysis.GraphCost{Forward: 24, Training: 80}},
		{"LSTM (peephole)", lstm.NewURNNCode(10, 8, 9), analysis.GraphCost{Forward: 28, Training: 95}},
		{"GRU", gru.New(10, 8, 9), analysis.GraphCost{Forward: 20, Training: 70}},
		{"uRNN", urnn.New(10, 8, 9), analysis.GraphCost{Forward: 36, Training: 140}},
		{"LT-ORNN (clipping)", ltrnn.NewORNN(10, 8, 9), analysis.GraphCost{Forward: 16, Training: 60}},
		{"LT-ORNN (pooling)", pooled, analysis.GraphCost{Forward: 16, Training: 60}},
		{"gated memory", memory.New(10), analysis.GraphCost{Forward: 16, Training: 50}},
	} {
		got, err := analysis.NodesPerStep(backend.MustNew(), tc.cell)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		t.Logf("%-20s %3d nodes per step forward, %3d with the gradient", tc.name, got.Forward, got.Training)
		if got.Forward > tc.budget.Forward || got.Training > tc.budget.Training {
			t.Errorf("%s: %+v nodes per step, budget %+v", tc.name, got, tc.budget)
		}
	}
}
