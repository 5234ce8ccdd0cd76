package bidir_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/bidir"
	"github.com/urnn-notebooks/longmemory/pkg/models/dropout"
	"github.com/urnn-notebooks/longmemory/pkg/models/fcurnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// tanh and lstm64 are small float64 cells for the suite and the finite-difference checks.
var (
	tanh   = celltest.Tanh64
	lstm64 = celltest.LSTM64
)

// TestCell runs the shared cell suite on a tanh RNN forward and an LSTM backward. (Its
// Chunking check does not apply: see TestChunksRefused; TestEquations checks the equations.)
func TestCell(t *testing.T) {
	celltest.Test(t, celltest.Config{
		New:   func() rnn.Cell { return bidir.New(tanh(3, 4, 2), lstm64(3, 3, 2)) },
		Sizes: rnn.Sizes{In: 3, State: 4 + 3, Out: 2},
		ParamCounts: []celltest.ParamCount{
			{Name: "2 × tanh 32, both sides", Cell: bidir.New(rnn.NewTanh(4, 32, 16), rnn.NewTanh(4, 32, 16)),
				Want: 2 * rnn.NewTanh(4, 32, 16).NumParams()},
		},
		Budget: celltest.GraphCost{Forward: 45, Training: 130},
		BadConfigs: []celltest.BadConfig{
			{Name: "no backward cell", Cell: &bidir.Cell{Forward: tanh(3, 4, 2)}, Want: "backward cell is nil"},
			{Name: "other inputs", Cell: bidir.New(tanh(3, 4, 2), tanh(4, 4, 2)), Want: "forward cell has 3 inputs and 2 outputs, backward 4 and 2"},
			{Name: "dtypes", Cell: bidir.New(tanh(3, 4, 2), rnn.NewTanh(3, 4, 2)), Want: "forward cell is Float64, backward Float32"},
			{Name: "bad cell", Cell: bidir.New(tanh(3, 4, 2), tanh(3, 0, 2)), Want: "backward cell: rnn.Simple: N = 0"},
			{Name: "constrained", Cell: bidir.New(&fcurnn.Cell{In: 3, N: 4, Out: 2, Type: dtypes.Float64}, tanh(3, 4, 2)), Want: "rnn.Constrained"},
			{Name: "nested", Cell: bidir.New(bidir.New(tanh(3, 4, 2), tanh(3, 4, 2)), tanh(3, 4, 2)), Want: "backwards already"},
		},
		Mismatched: []celltest.BadConfig{
			{Name: "other width", Cell: bidir.New(tanh(3, 4, 2), lstm64(3, 5, 2)), Want: "has shape"},
		},
	})
}

// TestEquations: the outputs are the forward cell's readout of its states over x_1 … x_T plus
// the backward cell's readout of its states over x_T … x_1 put back in order, each cell run
// alone (rnn.Sequence) with the same variables; the output at t changes with a later input.
func TestEquations(t *testing.T) {
	const batch, T, in = 2, 6, 3
	fwd, bwd := tanh(in, 4, 2), lstm64(in, 3, 2)
	cell := bidir.New(fwd, bwd)
	store := model.NewStore()
	scope := store.Scope("/b")
	if err := cell.Init(scope, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	rnn.RandomizeVariables(scope, rand.New(rand.NewPCG(3, 4)), -1, 1)
	x := rnn.Uniform(rand.New(rand.NewPCG(5, 6)), batch*T*in, -1, 1)
	reverse := func(v []float64, width int) []float64 { // steps in reverse order, per example
		out := make([]float64, len(v))
		for b := range batch {
			for s := range T {
				copy(out[(b*T+s)*width:(b*T+s+1)*width], v[(b*T+T-1-s)*width:(b*T+T-s)*width])
			}
		}
		return out
	}
	run := func(c rnn.Cell, scope *model.Scope, x []float64) []float64 {
		exec := model.MustNewExec(backend.MustNew(), store, func(_ *model.Scope, x *Node) *Node {
			rnn.LiveVariables(store, x.Graph())
			out, _ := rnn.Sequence(c, scope, x)
			return out
		})
		return tensors.MustCopyFlatData[float64](exec.MustCall(tensors.FromFlatDataAndDimensions(x, batch, T, in))[0])
	}
	got := run(cell, scope, x)
	f := run(fwd, scope.At("forward"), x)
	b := reverse(run(bwd, scope.At("backward"), reverse(x, in)), 2)
	for i := range got {
		if want := f[i] + b[i]; math.Abs(got[i]-want) > 1e-12*max(1, math.Abs(want)) {
			t.Fatalf("output %d = %.15g, forward + backward alone %.15g", i, got[i], want)
		}
	}
	// The first step's output depends on the last step's input.
	x2 := append([]float64(nil), x...)
	x2[(T-1)*in] += 0.5
	if changed := run(cell, scope, x2); changed[0] == got[0] {
		t.Error("changing x_T left y_1 as it was: the backward direction does not reach it")
	}
}

// TestChunksRefused: the trainer and the walker refuse a chunk shorter than the sequence and
// accept 0 (the whole sequence) or one at least as long; a stack and dropout refuse a
// bidirectional RNN inside them.
func TestChunksRefused(t *testing.T) {
	task := tasks.BothSides{T: 8}
	cell := func() rnn.Cell { return bidir.New(rnn.NewTanh(4, 6, 16), rnn.NewTanh(4, 6, 16)) }
	for _, chunk := range []int{0, 8, 20} {
		if _, err := train.New(backend.MustNew(), cell(), task, train.Config{Steps: 1, Chunk: chunk}); err != nil {
			t.Errorf("Chunk %d: %v", chunk, err)
		}
	}
	for _, chunk := range []int{1, 4, 7} {
		_, err := train.New(backend.MustNew(), cell(), task, train.Config{Steps: 1, Chunk: chunk})
		if err == nil || !strings.Contains(err.Error(), "rnn.WholeSequence") || !strings.Contains(err.Error(), "want Chunk 0") {
			t.Errorf("Chunk %d: %v, want a refusal naming rnn.WholeSequence", chunk, err)
		}
	}
	// A walker built by hand (as the analyses do) refuses at its first batch.
	store := model.NewStore()
	c := cell()
	if err := c.Init(store.Scope("/m"), rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	w, err := seq.NewWalker(backend.MustNew(), store.Scope("/m"), c, 3, seq.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := task.Sample(rand.New(rand.NewPCG(1, 1)), 2)
	if _, err := w.Forward(t.Context(), b, nil); err == nil || !strings.Contains(err.Error(), "rnn.WholeSequence") {
		t.Errorf("a walker in chunks of 3: %v, want a refusal", err)
	}
	for _, wrapped := range []rnn.Cell{stack.New(cell()), dropout.New(cell(), 0.1)} {
		if err := wrapped.Init(model.NewStore().Scope("/m"), rand.New(rand.NewPCG(1, 1))); err == nil || !strings.Contains(err.Error(), "rnn.WholeSequence") {
			t.Errorf("%T of a bidirectional RNN: %v, want a refusal", wrapped, err)
		}
	}
}
