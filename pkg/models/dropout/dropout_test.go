package dropout_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/dropout"
	"github.com/urnn-notebooks/longmemory/pkg/models/fcurnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// tanh and lstm64 are small float64 cells for the suite and the finite-difference checks.
var (
	tanh   = celltest.Tanh64
	lstm64 = celltest.LSTM64
)

// noisy randomises the variables as the suite does and turns the noise on with a fixed key,
// so that the suite's Gradient check (finite differences) and Chunking check run with the
// masks of training, fixed.
func noisy(scope *model.Scope, rng *rand.Rand) {
	rnn.RandomizeVariables(scope, rng, -1, 1)
	if n, err := rnn.SetNoise(scope, 0x5eed); err != nil || n != 1 {
		panic("dropout_test: SetNoise")
	}
}

// TestCell runs the shared cell suite with dropout on every connection, in training (a fixed
// noise key): the finite-difference gradients are those of the network thinned by fixed
// masks, and chunks of the sequence draw the masks of the whole sequence.
func TestCell(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inner  func() rnn.Cell
		state  int
		budget celltest.GraphCost // the inner cell's and about 20 nodes for each of the 3 masks
	}{
		{"tanh", func() rnn.Cell { return tanh(3, 4, 2) }, 4, celltest.GraphCost{Forward: 100, Training: 130}},
		{"lstm", func() rnn.Cell { return lstm64(3, 4, 2) }, 8, celltest.GraphCost{Forward: 115, Training: 170}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			celltest.Test(t, celltest.Config{
				New:   func() rnn.Cell { return &dropout.Cell{Inner: tc.inner(), Input: 0.3, Output: 0.4, Recurrent: 0.2} },
				Sizes: rnn.Sizes{In: 3, State: tc.state + 1, Out: 2},
				ParamCounts: []celltest.ParamCount{
					{Name: "LSTM 40 on copy", Cell: dropout.New(lstm.New(10, 40, 9), 0.5), Want: lstm.New(10, 40, 9).NumParams()},
				},
				Randomize: noisy,
				Budget:    tc.budget,
				BadConfigs: []celltest.BadConfig{
					{Name: "no inner cell", Cell: &dropout.Cell{Input: 0.1}, Want: "Inner is nil"},
					{Name: "rate 1", Cell: &dropout.Cell{Inner: tanh(3, 4, 2), Output: 1}, Want: "Output = 1, want a rate in [0, 1)"},
					{Name: "negative rate", Cell: &dropout.Cell{Inner: tanh(3, 4, 2), Recurrent: -0.1}, Want: "Recurrent = -0.1"},
					{Name: "NaN rate", Cell: &dropout.Cell{Inner: tanh(3, 4, 2), Input: math.NaN()}, Want: "Input = NaN"},
					{Name: "bad inner", Cell: dropout.New(tanh(3, 0, 2), 0.1), Want: "rnn.Simple: N = 0"},
					{Name: "constrained", Cell: dropout.New(&fcurnn.Cell{In: 3, N: 4, Out: 2, Type: dtypes.Float64}, 0.1), Want: "rnn.Constrained"},
				},
				Mismatched: []celltest.BadConfig{
					{Name: "other width", Cell: dropout.New(tanh(3, 5, 2), 0.1), Want: "has shape"},
				},
			})
		})
	}
}

// run returns the outputs of fn on x in a graph of store.
func run(t *testing.T, store *model.Store, x *tensors.Tensor, fn func(x *Node) *Node) []float64 {
	t.Helper()
	exec := model.MustNewExec(backend.MustNew(), store, func(_ *model.Scope, x *Node) *Node {
		rnn.LiveVariables(store, x.Graph())
		return fn(x)
	})
	return tensors.MustCopyFlatData[float64](exec.MustCall(x)[0])
}

// TestEvaluationDropsNothing: with the noise off (the trainer's state outside a training
// pass) the wrapped cell's outputs are the inner cell's, to the bit, whatever the rates; with
// it on they are not.
func TestEvaluationDropsNothing(t *testing.T) {
	const batch, T, in = 3, 6, 3
	inner := lstm64(in, 4, 2)
	cell := &dropout.Cell{Inner: inner, Input: 0.5, Output: 0.5, Recurrent: 0.5}
	store := model.NewStore()
	scope := store.Scope("/m")
	if err := cell.Init(scope, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	rnn.RandomizeVariables(scope, rand.New(rand.NewPCG(3, 4)), -1, 1)
	x := tensors.FromFlatDataAndDimensions(rnn.Uniform(rand.New(rand.NewPCG(5, 6)), batch*T*in, -1, 1), batch, T, in)
	wrapped := func(x *Node) *Node { out, _ := rnn.Sequence(cell, scope, x); return out }
	want := run(t, store, x, func(x *Node) *Node { out, _ := rnn.Sequence(inner, scope, x); return out })
	got := run(t, store, x, wrapped)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("noise off: output %d = %v, the inner cell's %v", i, got[i], want[i])
		}
	}
	if _, err := rnn.SetNoise(scope, 42); err != nil {
		t.Fatal(err)
	}
	differ := 0
	for i, v := range run(t, store, x, wrapped) {
		if v != want[i] {
			differ++
		}
	}
	if differ < len(want)/2 {
		t.Errorf("noise on: %d of %d outputs differ from the inner cell's, want most", differ, len(want))
	}
}

// TestTraining: through train.Trainer, a run with dropout is a function of its seed (the same
// seed twice gives the same log; another seed another), leaves the noise off after each step
// (the held-out loss is the un-dropped network's), and resumes from a checkpoint to the step
// and the bit of an uninterrupted run, chunked or not.
func TestTraining(t *testing.T) {
	task := tasks.Copy{T: 5, Symbols: 4, Recall: 3}
	cell := func() rnn.Cell {
		return &dropout.Cell{Inner: rnn.NewTanh(6, 8, 5), Input: 0.2, Output: 0.3, Recurrent: 0.1}
	}
	cfg := train.Config{Steps: 6, Batch: 4, Seed: 7, Chunk: 4, EvalEvery: 2, CheckpointEvery: 3}
	trainer := func(cfg train.Config, dir string) *train.Trainer {
		tr, err := train.New(backend.MustNew(), cell(), task, cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr.CheckpointDir = dir
		return tr
	}
	whole := trainer(cfg, "")
	if err := whole.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	again := trainer(cfg, "")
	if err := again.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.Seed = 8
	reseeded := trainer(other, "")
	if err := reseeded.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for i, r := range whole.Log {
		if r.Loss != again.Log[i].Loss || r.GradNorm != again.Log[i].GradNorm {
			t.Errorf("step %d: seed 7 gave loss %v, then %v", r.Step, r.Loss, again.Log[i].Loss)
		}
	}
	if whole.Log[0].Loss == reseeded.Log[0].Loss {
		t.Errorf("seeds 7 and 8 gave the same first loss %v", whole.Log[0].Loss)
	}

	// Off after training: the last held-out loss is the model's without noise, and stays so.
	v := whole.Store.GetVariable(train.ModelScope + "/" + rnn.NoiseKey)
	if k := tensors.MustCopyFlatData[int32](v.MustValue()); k[0] != 0 || k[1] != 0 {
		t.Errorf("noise key after Run = %v, want 0, 0 (off)", k)
	}
	loss, _, err := whole.Evaluate()
	if err != nil {
		t.Fatal(err)
	}
	if last := whole.Log[len(whole.Log)-1].EvalLoss; loss != last {
		t.Errorf("held-out loss after Run %v, logged %v: evaluation is not deterministic", loss, last)
	}

	// Interrupted after 4 steps and resumed in a new trainer.
	dir := t.TempDir()
	first := trainer(cfg, dir)
	ctx, cancel := context.WithCancel(context.Background())
	if err := first.Run(ctx, func(r train.Record) {
		if r.Step == 4 {
			cancel()
		}
	}); err != context.Canceled {
		t.Fatalf("interrupted Run returned %v, want context.Canceled", err)
	}
	second := trainer(cfg, dir)
	if ok, err := second.Resume(); err != nil || !ok || second.Step != 4 {
		t.Fatalf("Resume = %v, %v at step %d; want a checkpoint at step 4", ok, err, second.Step)
	}
	if err := second.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for i, a := range whole.Log {
		b := second.Log[i]
		if a.Loss != b.Loss || a.GradNorm != b.GradNorm || !(a.EvalLoss == b.EvalLoss || math.IsNaN(a.EvalLoss) && math.IsNaN(b.EvalLoss)) {
			t.Errorf("step %d: resumed %+v, uninterrupted %+v", a.Step, b, a)
		}
	}
}

// TestChunkedGradient: with the noise on, the gradient of a batch computed in chunks of 1, 2
// and 3 steps is that of the whole sequence in one graph (the masks do not depend on the
// chunking), and differs from the gradient without noise.
func TestChunkedGradient(t *testing.T) {
	task := tasks.Copy{T: 4, Symbols: 3, Recall: 2}
	cell := &dropout.Cell{Inner: lstm64(5, 4, 4), Input: 0.3, Output: 0.3, Recurrent: 0.3}
	store := model.NewStore()
	scope := store.Scope(train.ModelScope)
	if err := cell.Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	b, err := task.Sample(rand.New(rand.NewPCG(2, 2)), 3)
	if err != nil {
		t.Fatal(err)
	}
	grads := func(chunk int) []float64 {
		r, err := train.NewRunner(backend.MustNew(), store, cell, chunk)
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Gradients(b)
		if err != nil {
			t.Fatal(err)
		}
		var all []float64
		for _, g := range res.Grads {
			all = append(all, tensors.MustCopyFlatData[float64](g)...)
		}
		return all
	}
	clean := grads(0)
	if _, err := rnn.SetNoise(scope, 99); err != nil {
		t.Fatal(err)
	}
	want := grads(0)
	same := true
	for i := range want {
		same = same && want[i] == clean[i]
	}
	if same {
		t.Error("the gradient with the noise on is the gradient without it")
	}
	for _, chunk := range []int{1, 2, 3} {
		got := grads(chunk)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12*max(1, math.Abs(want[i])) {
				t.Fatalf("chunks of %d: gradient element %d = %.15g, whole sequence %.15g", chunk, i, got[i], want[i])
			}
		}
	}
}
