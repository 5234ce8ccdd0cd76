package train

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/exprnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// newIn returns New's trainer (on the default backend) with its checkpoints in dir.
func newIn(dir string, cell rnn.Cell, task tasks.Task, cfg Config) (*Trainer, error) {
	tr, err := New(backend.MustNew(), cell, task, cfg)
	if err == nil {
		tr.CheckpointDir = dir
	}
	return tr, err
}

func TestTrainingLowersAddingLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("300 training steps")
	}
	task := tasks.Adding{T: 8}
	tr, err := New(backend.MustNew(), rnn.NewTanh(2, 16, 1), task, Config{Steps: 300, Batch: 20, Seed: 1, Chunk: 3,
		Optimizer: RMSProp{LR: 1e-2, ClipValue: 1}})
	if err != nil {
		t.Fatal(err)
	}
	before, _, err := tr.Evaluate()
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	after := tr.Log[len(tr.Log)-1].EvalLoss
	t.Logf("adding T=8, tanh RNN 16: held-out MSE %.4f → %.4f (baseline %.4f)", before, after, task.Baseline())
	if !(after < 0.5*task.Baseline()) {
		t.Errorf("held-out MSE after 300 steps = %.4f, want < half the baseline %.4f", after, task.Baseline())
	}
}

func TestResumeGivesTheSameRun(t *testing.T) {
	task := tasks.Copy{T: 5, Symbols: 4, Recall: 3}
	cfg, dir := Config{Steps: 8, Batch: 4, Seed: 7, Chunk: 4, EvalEvery: 2, CheckpointEvery: 3}, t.TempDir()
	cell := func() rnn.Cell { return rnn.NewTanh(6, 8, 5) }

	whole, err := New(backend.MustNew(), cell(), task, Config{Steps: 8, Batch: 4, Seed: 7, Chunk: 4, EvalEvery: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := whole.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}

	// Interrupt after 4 steps (a checkpoint is written on cancellation), then resume in a new Trainer.
	first, err := newIn(dir, cell(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = first.Run(ctx, func(r Record) {
		if r.Step == 4 {
			cancel()
		}
	})
	if err != context.Canceled {
		t.Fatalf("interrupted Run returned %v, want context.Canceled", err)
	}
	second, err := newIn(dir, cell(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := second.Resume()
	if err != nil || !ok || second.Step != 4 {
		t.Fatalf("Resume = %v, %v at step %d; want a checkpoint at step 4", ok, err, second.Step)
	}
	if err := second.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(second.Log) != len(whole.Log) {
		t.Fatalf("resumed log has %d records, uninterrupted %d", len(second.Log), len(whole.Log))
	}
	for i := range whole.Log {
		a, b := whole.Log[i], second.Log[i]
		if a.Loss != b.Loss || a.GradNorm != b.GradNorm || !(a.EvalLoss == b.EvalLoss || math.IsNaN(a.EvalLoss) && math.IsNaN(b.EvalLoss)) {
			t.Errorf("step %d: resumed %+v, uninterrupted %+v", a.Step, b, a)
		}
	}
}

func TestNaNStopsTheRun(t *testing.T) {
	tr, err := New(backend.MustNew(), rnn.NewTanh(2, 4, 1), tasks.Adding{T: 5}, Config{Steps: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	w := tr.Store.GetVariable("/model/W")
	vals := tensors.MustCopyFlatData[float32](w.MustValue())
	vals[0] = float32(math.NaN())
	w.MustSetValue(tensors.FromFlatDataAndDimensions(vals, 4, 4))
	err = tr.Run(context.Background(), nil)
	if err == nil {
		t.Fatal("Run with a NaN weight: no error")
	}
	for _, want := range []string{"step 1", "rnn.Simple", "NaN", "last good checkpoint: none"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if tr.Step != 0 {
		t.Errorf("Step = %d after the failed step, want 0", tr.Step)
	}
}

func TestResumeRefusesBadCheckpoints(t *testing.T) {
	dir := t.TempDir()
	task := tasks.Adding{T: 5}
	tr, err := newIn(dir, rnn.NewTanh(2, 4, 1), task, Config{Steps: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cell rnn.Cell
		task tasks.Task
		seed uint64
		want string
	}{
		{"other size", rnn.NewTanh(2, 5, 1), task, 1, "model"},
		{"other task", rnn.NewTanh(2, 4, 1), tasks.Adding{T: 6}, 1, "task"},
		{"other seed", rnn.NewTanh(2, 4, 1), task, 2, "seed"},
	} {
		other, err := newIn(dir, tc.cell, tc.task, Config{Steps: 2, Seed: tc.seed})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Resume(); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: Resume error %v, want one naming the %s and the file", tc.name, err, tc.want)
		}
	}
	// A corrupted checkpoint is refused and left as it is.
	files, _ := checkpoints(dir)
	last := files[len(files)-1]
	if err := os.WriteFile(last, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, _ := newIn(dir, rnn.NewTanh(2, 4, 1), task, Config{Steps: 2, Seed: 1})
	if _, err := again.Resume(); err == nil || !strings.Contains(err.Error(), "corrupted") {
		t.Errorf("Resume of a corrupted file: error %v, want one saying it is corrupted", err)
	}
	if b, _ := os.ReadFile(last); string(b) != "garbage" {
		t.Error("Resume changed the corrupted file")
	}
	// An unwritable checkpoint directory is an error, not a crash.
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	bad, _ := newIn(filepath.Join(blocker, "sub"), rnn.NewTanh(2, 4, 1), task, Config{Steps: 1, Seed: 1})
	if err := bad.Run(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "checkpoint directory") {
		t.Errorf("Run with an unwritable checkpoint directory: error %v", err)
	}
}

// TestRMSPropStep checks one update against the formula, with both kinds of clipping.
func TestRMSPropStep(t *testing.T) {
	store := model.NewStore()
	if err := rnn.NewVariable(store.Scope(ModelScope), "w", dtypes.Float64, []float64{1, 2, 3}, 3); err != nil {
		t.Fatal(err)
	}
	vars := []*model.Variable{store.GetVariable("/model/w")}
	opt := RMSProp{LR: 0.1, Decay: 0.9, AccInit: 1e-3, ClipValue: 2, ClipNorm: 1}
	u, err := newUpdater(backend.MustNew(), store, vars, make([]bool, len(vars)), nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	g := []float64{3, -4, 0.5}
	norm, err := u.apply([]*tensors.Tensor{tensors.FromFlatDataAndDimensions(g, 3)})
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Sqrt(9 + 16 + 0.25); math.Abs(norm-want) > 1e-12 {
		t.Errorf("gradient norm %g, want %g", norm, want)
	}
	clipped := []float64{2, -2, 0.5} // element-wise at 2
	n := math.Sqrt(4 + 4 + 0.25)
	theta := tensors.MustCopyFlatData[float64](vars[0].MustValue())
	for i, w0 := range []float64{1, 2, 3} {
		gi := clipped[i] / n // then global norm 1
		acc := 0.9*1e-3 + 0.1*gi*gi
		want := w0 - 0.1*gi/math.Sqrt(acc)
		if math.Abs(theta[i]-want) > 1e-12 {
			t.Errorf("w[%d] = %.15g, want %.15g", i, theta[i], want)
		}
	}
	if _, err := (RMSProp{Decay: 1.5}).withDefaults(); err == nil || !strings.Contains(err.Error(), "Decay") {
		t.Errorf("RMSProp{Decay: 1.5}: error %v, want one naming Decay", err)
	}
}

// TestOrthogonalityStep checks Henaff's soft orthogonality step: starting from 1.3·V (not
// orthogonal), the penalty falls as training goes on; a cell without a transition matrix is
// refused, and the tanh RNN's is W.
func TestOrthogonalityStep(t *testing.T) {
	// trainFrom13V trains a pooled LT-ORNN 8 for steps with o, from 1.3 times its orthogonal V,
	// and returns its log and its V after.
	trainFrom13V := func(o Orthogonality, steps int) ([]Record, []float32) {
		cell := ltrnn.NewORNN(2, 8, 1)
		cell.Pooling = true
		tr, err := New(backend.MustNew(), cell, tasks.Adding{T: 5}, Config{Steps: steps, Batch: 4, Seed: 3,
			Optimizer: RMSProp{LR: 1e-4}, Orthogonality: o})
		if err != nil {
			t.Fatal(err)
		}
		v := tr.Store.GetVariable(ModelScope + "/V")
		vals := tensors.MustCopyFlatData[float32](v.MustValue())
		for i := range vals {
			vals[i] *= 1.3
		}
		v.MustSetValue(tensors.FromFlatDataAndDimensions(vals, 8, 8))
		if err := tr.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		return tr.Log, tensors.MustCopyFlatData[float32](v.MustValue())
	}
	// The squared form (the presets') and the norm (-ortho-norm), whose gradient at these
	// residuals is about a third of the squared form's: a larger step for a like drop.
	for _, o := range []Orthogonality{{Points: 50, LR: 0.05}, {Points: 50, LR: 0.15, Norm: true}} {
		log, _ := trainFrom13V(o, 40)
		first, last := log[0].Penalty, log[len(log)-1].Penalty
		t.Logf("%+v: penalty %.4f → %.4f", o, first, last)
		if !(last < 0.1*first) {
			t.Errorf("%+v: soft orthogonality penalty %.4f after 40 steps, started at %.4f: want a tenfold drop", o, last, first)
		}
	}
	// At one step size the two forms log the same penalty (the squared form's, before the step)
	// and move V differently.
	logSq, vSq := trainFrom13V(Orthogonality{Points: 50, LR: 0.05}, 1)
	logNorm, vNorm := trainFrom13V(Orthogonality{Points: 50, LR: 0.05, Norm: true}, 1)
	if logSq[0].Penalty != logNorm[0].Penalty || slices.Equal(vSq, vNorm) {
		t.Errorf("one step with and without Norm: penalties %g and %g (want equal), V equal after it: %v (want not)",
			logSq[0].Penalty, logNorm[0].Penalty, slices.Equal(vSq, vNorm))
	}
	if _, err := New(backend.MustNew(), ltrnn.NewORNN(2, 8, 1), tasks.Adding{T: 5}, Config{Steps: 1, Orthogonality: Orthogonality{Norm: true}}); err == nil || !strings.Contains(err.Error(), "Norm with Points = 0") {
		t.Errorf("Orthogonality.Norm without points: error %v, want one saying the penalty is off", err)
	}
	if _, err := New(backend.MustNew(), &lstm.Cell{In: 2, N: 4, Out: 1}, tasks.Adding{T: 5}, Config{Steps: 1, Orthogonality: Orthogonality{Points: 5}}); err == nil || !strings.Contains(err.Error(), "*lstm.Cell has none") {
		t.Errorf("Orthogonality on an LSTM: error %v, want one saying *lstm.Cell has no transition matrix", err)
	}
	// The tanh RNN's transition matrix is W (its V is the input matrix).
	tanh, err := New(backend.MustNew(), rnn.NewTanh(2, 4, 1), tasks.Adding{T: 5}, Config{Steps: 1, Orthogonality: Orthogonality{Points: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tanh.ortho.v.Path(); got != ModelScope+"/W" {
		t.Errorf("Orthogonality on a tanh RNN constrains %s, want %s/W", got, ModelScope)
	}
}

// TestPoolHeldOutIsFresh: with a fixed training set (tasks.Pool), every training batch holds
// only the set's sequences while the held-out batch is drawn fresh from the underlying task.
func TestPoolHeldOutIsFresh(t *testing.T) {
	pool := tasks.Pool{Task: tasks.Adding{T: 5}, N: 1, Seed: 3}
	tr, err := New(backend.MustNew(), rnn.NewTanh(2, 4, 1), pool, Config{Steps: 1, Batch: 4, Seed: 1, EvalBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	only, err := pool.Sequence(0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.Batch(0)
	if err != nil {
		t.Fatal(err)
	}
	for i, y := range b.Y {
		if y != only.Y[0] {
			t.Fatalf("training batch row %d: target %g, want the set's only sequence's %g", i, y, only.Y[0])
		}
	}
	fresh := 0
	for _, y := range tr.eval.Y {
		if y != only.Y[0] {
			fresh++
		}
	}
	if fresh == 0 {
		t.Errorf("the held-out batch holds only the training set's sequence")
	}
}

// TestLRScaledVariables: a cell that trains a variable at its own rate (rnn.LRScaled: the
// expRNN's A at a tenth) moves it by that fraction of the step it gets at one rate, the other
// variables alike; a scale that is not > 0 is an error naming it.
func TestLRScaledVariables(t *testing.T) {
	task := tasks.Copy{T: 3, Symbols: 2, Recall: 2}
	deltas := map[float64]map[string][]float64{}
	for _, scale := range []float64{0, 0.1} {
		cell := &exprnn.Cell{In: task.NumInputs(), N: 4, Out: task.NumOutputs(), LRScaleA: scale, Type: dtypes.Float64}
		tr, err := New(backend.MustNew(), cell, task, Config{Steps: 1, Batch: 2, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		scope := tr.Store.Scope(ModelScope)
		before := map[string][]float64{}
		for _, name := range []string{"A", "V", "U"} {
			before[name], _ = rnn.VariableValues(scope, name)
		}
		if err := tr.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		deltas[scale] = map[string][]float64{}
		for name, b := range before {
			after, _ := rnn.VariableValues(scope, name)
			for i := range b {
				deltas[scale][name] = append(deltas[scale][name], after[i]-b[i])
			}
		}
	}
	for name, one := range deltas[0] {
		want := 1.0
		if name == "A" {
			want = 0.1
		}
		for i, d := range one {
			if got := deltas[0.1][name][i]; math.Abs(got-want*d) > 1e-12+1e-9*math.Abs(d) || d == 0 {
				t.Fatalf("%s[%d]: moved %g with A at a tenth, %g at one rate; want %g× (and a step that moves)", name, i, got, d, want)
			}
		}
	}
	bad := &exprnn.Cell{In: task.NumInputs(), N: 4, Out: task.NumOutputs(), LRScaleA: -1}
	if _, err := New(backend.MustNew(), bad, task, Config{Steps: 1}); err == nil || !strings.Contains(err.Error(), "LRScaleA = -1") {
		t.Errorf("LRScaleA -1: %v", err)
	}
}

// TestNesterovStep: with Nesterov = μ the updater moves the look-ahead parameters Θ = θ + μv
// so that θ follows Sutskever et al. 2013's accelerated gradient, v ← μv − η∇f(θ + μv),
// θ ← θ + v, computed here in plain Go on f(θ) = ½ Σ c_i θ_i² over five steps.
func TestNesterovStep(t *testing.T) {
	store := model.NewStore()
	w0 := []float64{1, -2, 3}
	c := []float64{1, 0.5, 2}
	if err := rnn.NewVariable(store.Scope(ModelScope), "w", dtypes.Float64, w0, 3); err != nil {
		t.Fatal(err)
	}
	vars := []*model.Variable{store.GetVariable("/model/w")}
	const mu, eta = 0.9, 0.1
	u, err := newUpdater(backend.MustNew(), store, vars, make([]bool, 1), nil, RMSProp{LR: eta, Nesterov: mu})
	if err != nil {
		t.Fatal(err)
	}
	theta := append([]float64{}, w0...) // the plain form's θ; v starts at 0, so Θ = θ at first
	v := make([]float64, 3)
	for step := range 5 {
		held := tensors.MustCopyFlatData[float64](vars[0].MustValue()) // Θ
		g := make([]float64, 3)
		for i := range g {
			g[i] = c[i] * held[i]
		}
		if _, err := u.apply([]*tensors.Tensor{tensors.FromFlatDataAndDimensions(g, 3)}); err != nil {
			t.Fatal(err)
		}
		for i := range theta {
			look := theta[i] + mu*v[i]
			v[i] = mu*v[i] - eta*c[i]*look
			theta[i] += v[i]
		}
		got := tensors.MustCopyFlatData[float64](vars[0].MustValue())
		for i := range got {
			if want := theta[i] + mu*v[i]; math.Abs(got[i]-want) > 1e-12 {
				t.Fatalf("step %d: Θ[%d] = %.15g, want θ + μv = %.15g", step+1, i, got[i], want)
			}
		}
	}
	if _, err := (RMSProp{Nesterov: 1}).withDefaults(); err == nil || !strings.Contains(err.Error(), "Nesterov") {
		t.Errorf("Nesterov 1: %v, want an error naming it", err)
	}
}

// TestEvaluateBatchSlices checks that EvaluateBatch, which evaluates in slices of Config.Batch
// sequences, gives the loss and accuracy of one forward pass over the whole batch: seven
// sequences in slices of 3, 3 and 1, on a classification and a regression task.
func TestEvaluateBatchSlices(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell rnn.Cell
		task tasks.Task
	}{
		{"copy", ltrnn.NewIRNN(10, 4, 9), tasks.Copy{T: 5}},
		{"adding", rnn.NewTanh(2, 4, 1), tasks.Adding{T: 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := New(backend.MustNew(), tc.cell, tc.task, Config{Steps: 1, Batch: 3, Seed: 2, EvalBatch: 7})
			if err != nil {
				t.Fatal(err)
			}
			b, err := tc.task.Sample(rand.New(rand.NewPCG(5, 6)), 7)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := tr.Runner.Forward(b)
			if err != nil {
				t.Fatal(err)
			}
			loss, acc, err := tr.EvaluateBatch(b)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(loss-whole.Loss) > 1e-6*math.Abs(whole.Loss) {
				t.Errorf("EvaluateBatch loss = %.9g, want %.9g (one pass over the batch)", loss, whole.Loss)
			}
			wantAcc := math.NaN()
			if b.Labels != nil {
				wantAcc = whole.Correct / whole.Masked
			}
			if !(acc == wantAcc || math.IsNaN(acc) && math.IsNaN(wantAcc)) {
				t.Errorf("EvaluateBatch accuracy = %g, want %g", acc, wantAcc)
			}
		})
	}
}
