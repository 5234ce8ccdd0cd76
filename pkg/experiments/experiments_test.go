package experiments

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	gomlxmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/lru"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/s4d"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
	"github.com/urnn-notebooks/longmemory/pkg/models/urnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

func TestPresetsBuild(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Presets() {
		if seen[p.Name] {
			t.Errorf("preset name %q used twice", p.Name)
		}
		seen[p.Name] = true
		if p.Task.Kind == "mnist" || p.Task.Kind == "pmnist" {
			continue // needs the dataset; TestTinyRuns covers the model kinds
		}
		cell, task, err := p.Build()
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if s := cell.Sizes(); s.In != task.NumInputs() || s.Out != task.NumOutputs() {
			t.Errorf("%s: cell sizes %+v do not fit task %s", p.Name, s, task)
		}
	}
	// The papers' settings, spot-checked.
	for _, tc := range []struct {
		name string
		lr   float64
		clip float64
	}{
		{"arjovsky/copy-T100/urnn-128", 1e-3, 0},
		{"arjovsky/copy-T500/lstm-peephole-40", 1e-3, 1},
		{"henaff/copy-T500/lt-ornn-80", 1e-4, 0},
		{"henaff/varcopy-T100/lstm-80", 1e-3, 0},
	} {
		p, err := Lookup(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Train.Optimizer.LR != tc.lr || p.Train.Optimizer.ClipValue != tc.clip {
			t.Errorf("%s: LR %g clip %g, want %g and %g", tc.name, p.Train.Optimizer.LR, p.Train.Optimizer.ClipValue, tc.lr, tc.clip)
		}
	}
	for name, want := range map[string]ltrnn.Sigma{"henaff/adding-T400/lt-irnn-128": ltrnn.ReLU, "henaff/copy-T500/lt-ornn-80": ltrnn.Linear} {
		p, _ := Lookup(name)
		cell, _, err := p.Build()
		if err != nil {
			t.Fatal(err)
		}
		if got := cell.(*ltrnn.Cell).Sigma; got != want {
			t.Errorf("%s: σ = %v, want %v (Henaff §2.1, §3.2.1)", name, got, want)
		}
	}
	// Henaff et al. scale the hidden-state gradients by 1/T in all experiments; Arjovsky et al. do not.
	for _, p := range Presets() {
		if want := strings.HasPrefix(p.Name, "henaff/"); p.Train.ScaleHiddenGrad != want {
			t.Errorf("%s: ScaleHiddenGrad = %v, want %v", p.Name, p.Train.ScaleHiddenGrad, want)
		}
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Lookup(nope): error %v", err)
	}
}

func TestBadModelAndTask(t *testing.T) {
	for _, tc := range []struct {
		m    Model
		want string
	}{
		{Model{Kind: "transformer", Hidden: 8}, "Kind"},
		{Model{Kind: "urnn", Hidden: 0}, "Hidden"},
		{Model{Kind: "lstm", Hidden: 8, Pooling: true}, "Pooling"},
		{Model{Kind: "tanh", Hidden: 8, Init: InitHenaff}, `Model.Init = "henaff" is for lstm, lstm-peephole, lt-ornn, lt-irnn, not "tanh"`},
		{Model{Kind: "lstm", Hidden: 8, Init: InitCode}, `Model.Init = "code" is for urnn, not "lstm"`},
		{Model{Kind: "urnn", Hidden: 8, Init: "glorot"}, `Model.Init = "glorot", want "" (the model's default) or one of "code" (urnn), "henaff" (lstm`},
		{Model{Kind: "lru-deep", Hidden: 8, Init: InitInv}, `Model.Init = "inv" is for s4d, s4d-deep, not "lru-deep"`},
		{Model{Kind: "lstm", Hidden: 8, SplitReLU: true}, `Model.SplitReLU is for urnn, not "lstm"`},
		{Model{Kind: "lstm", Hidden: 8, Sigma: "tanh"}, `Model.Sigma is for lt-ornn, lt-irnn, not "lstm"`},
		{Model{Kind: "scornn", Hidden: 8, LRScaleA: 0.1}, `Model.LRScaleA is for exprnn, not "scornn"`},
		{Model{Kind: "gru", Hidden: 8, ForgetBias: 1}, `Model.ForgetBias is for lstm, lstm-peephole, not "gru"`},
		{Model{Kind: "urnn", Hidden: 8, OutputBias: true}, `Model.OutputBias is for lt-ornn, lt-irnn, not "urnn"`},
		{Model{Kind: "lt-irnn", Hidden: 8, Sigma: "sigmoid"}, `Model.Sigma = "sigmoid", want "" (the task's default), "linear", "relu" or "tanh"`},
		{Model{Kind: "lru", Hidden: 8, RecurrentLR: 0.1}, `Model.RecurrentLR is for lru-deep, s4d-deep, not "lru"`},
		{Model{Kind: "urnn", Hidden: 8, MaxPhase: 1}, `Model.MaxPhase is for lru, lru-deep, not "urnn"`},
		{Model{Kind: "lru", Hidden: 8, BatchNorm: true}, `Model.BatchNorm is for lru-deep, s4d-deep, not "lru"`},
		{Model{Kind: "lru-deep", Hidden: 8, BatchNorm: true, Bidirectional: true}, `Model.BatchNorm is not offered with Seq2Seq or Bidirectional`},
	} {
		if _, _, err := (Preset{Model: tc.m, Task: Task{Kind: "copy", T: 5}}).Build(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %s", tc.m, err, tc.want)
		}
	}
	// Every kind an Init names builds with it, and gets the initialisation it names.
	for init, kinds := range Inits {
		for _, kind := range kinds {
			cell, _, err := (Preset{Model: Model{Kind: kind, Hidden: 8, Init: init}, Task: Task{Kind: "copy", T: 5}}).Build()
			if err != nil {
				t.Fatalf("%s with Init %q: %v", kind, init, err)
			}
			var set bool
			switch c := cell.(type) {
			case *urnn.Cell:
				set = c.CodeBound
			case *lstm.Cell:
				set = c.Gaussian
			case *ltrnn.Cell:
				set = c.Variance == ltrnn.VarianceOneOverSqrtN
			case *s4d.Cell:
				set = c.AInit == s4d.Inv
			case *stack.Cell: // the deep S4D: every block's recurrence
				set = len(c.Layers) > 0
				for _, l := range c.Layers {
					var r *s4d.Cell
					if b, ok := l.(*lru.Block); ok {
						r, _ = b.Recurrence.(*s4d.Cell)
					}
					set = set && r != nil && r.AInit == s4d.Inv
				}
			}
			if !set {
				t.Errorf("%s with Init %q: the cell %T does not draw that initialisation", kind, init, cell)
			}
		}
	}
	// SplitReLU reaches the uRNN, and names it.
	m := Model{Kind: "urnn", Hidden: 8, SplitReLU: true}
	if cell, _, err := (Preset{Model: m, Task: Task{Kind: "copy", T: 5}}).Build(); err != nil || !cell.(*urnn.Cell).SplitReLU {
		t.Errorf("%+v: cell %+v, error %v; want a uRNN with SplitReLU", m, cell, err)
	}
	if got := m.String(); got != "urnn 8 split ReLU" {
		t.Errorf("%+v: String() = %q, want %q", m, got, "urnn 8 split ReLU")
	}
	// Sigma and OutputBias reach the LT-RNN; without Sigma, the task decides (ReLU on adding).
	for _, tc := range []struct {
		m    Model
		task string
		want ltrnn.Sigma
	}{
		{Model{Kind: "lt-irnn", Hidden: 8}, "adding", ltrnn.ReLU}, {Model{Kind: "lt-irnn", Hidden: 8}, "copy", ltrnn.Linear},
		{Model{Kind: "lt-irnn", Hidden: 8, Sigma: "tanh"}, "adding", ltrnn.Tanh}, {Model{Kind: "lt-ornn", Hidden: 8, Sigma: "linear", OutputBias: true}, "adding", ltrnn.Linear},
	} {
		cell, _, err := (Preset{Model: tc.m, Task: Task{Kind: tc.task, T: 5}}).Build()
		if err != nil {
			t.Fatal(err)
		}
		if c := cell.(*ltrnn.Cell); c.Sigma != tc.want || c.OutputBias != tc.m.OutputBias {
			t.Errorf("%v on %s: σ %v, output bias %v; want %v, %v", tc.m, tc.task, c.Sigma, c.OutputBias, tc.want, tc.m.OutputBias)
		}
	}
	// ForgetBias reaches the LSTM; 0 keeps the kind's.
	for _, tc := range []struct {
		m    Model
		want float64
	}{{Model{Kind: "lstm", Hidden: 4}, 0}, {Model{Kind: "lstm", Hidden: 4, ForgetBias: 1}, 1}, {Model{Kind: "lstm-peephole", Hidden: 4}, 1}} {
		cell, _, err := (Preset{Model: tc.m, Task: Task{Kind: "copy", T: 5}}).Build()
		if err != nil || cell.(*lstm.Cell).ForgetBias != tc.want {
			t.Errorf("%v: forget bias %v, %v; want %g", tc.m, cell, err, tc.want)
		}
	}
	// Pool wraps the synthetic tasks in a fixed training set, and nothing else.
	if task, err := (Task{Kind: "copy", T: 5, Pool: 100}).Build(); err != nil || task.String() != "Copy(T=5, K=8, S=10), pool of 100" {
		t.Errorf("copy with Pool 100: %v, %v", task, err)
	}
	for _, tc := range []struct {
		t    Task
		want string
	}{{Task{Kind: "mnist", Pool: 10}, `Task.Pool is for the synthetic tasks, not "mnist"`}, {Task{Kind: "adding", T: 5, Pool: -1}, "Task.Pool = -1, want >= 1"}} {
		if _, err := tc.t.Build(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error containing %q", tc.t, err, tc.want)
		}
	}
	if _, err := (Task{Kind: "copy", T: 0}).Build(); err == nil || !strings.Contains(err.Error(), "T") {
		t.Errorf("copy T=0: error %v", err)
	}
	if _, err := (Task{Kind: "sorting", T: 5}).Build(); err == nil || !strings.Contains(err.Error(), "Kind") {
		t.Errorf("unknown task: error %v", err)
	}
}

// TestTinyRuns trains every model kind for a few steps on a tiny copy task (the same code
// path as the presets, at sizes that run in a second) and checks the loss is finite and the
// log complete.
func TestTinyRuns(t *testing.T) {
	for _, kind := range Kinds {
		t.Run(kind, func(t *testing.T) {
			p := Preset{Model: Model{Kind: kind, Hidden: 8}, Task: Task{Kind: "copy", T: 6, Symbols: 3, Recall: 2},
				Train: train.Config{Steps: 3, Batch: 4, Chunk: 4, EvalEvery: 1, EvalBatch: 4}}
			dir := t.TempDir()
			if strings.HasPrefix(kind, "lt-") {
				p.Model.Pooling = kind == "lt-ornn"
			}
			cell, task, err := p.Build()
			if err != nil {
				t.Fatal(err)
			}
			tr, err := train.New(backend.MustNew(), cell, task, p.Train)
			if err != nil {
				t.Fatal(err)
			}
			tr.CheckpointDir = dir
			if err := tr.Run(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if len(tr.Log) != 3 {
				t.Fatalf("%d log records, want 3", len(tr.Log))
			}
			for _, r := range tr.Log {
				if math.IsNaN(r.Loss) || math.IsNaN(r.EvalLoss) || r.Loss <= 0 {
					t.Errorf("record %+v: want finite positive losses", r)
				}
			}
			// Every kind's variables (the uRNN's int32 permutation included) survive a checkpoint.
			cell2, task2, _ := p.Build()
			again, err := train.New(backend.MustNew(), cell2, task2, p.Train)
			if err != nil {
				t.Fatal(err)
			}
			again.CheckpointDir = dir
			if ok, err := again.Resume(); !ok || err != nil || again.Step != 3 {
				t.Fatalf("Resume: %v, %v at step %d; want the checkpoint of step 3", ok, err, again.Step)
			}
			l1, _, _ := tr.Evaluate()
			l2, _, _ := again.Evaluate()
			if l1 != l2 {
				t.Errorf("held-out loss %g after Resume, %g before saving", l2, l1)
			}
		})
	}
}

// TestSuccessorsBudget checks that the successors/* presets give each model about the uRNN's
// number of free parameters (within 5%), except the ESN (the uRNN's width) and the LSTM (the
// paper's size), as docs/SETTINGS.md says.
func TestSuccessorsBudget(t *testing.T) {
	for _, task := range []string{"copy", "adding"} {
		var budget int
		for _, kind := range SuccessorKinds {
			p, err := Successor(task, kind)
			if err != nil {
				t.Fatal(err)
			}
			if p.Task.Kind != task || p.Model.Kind != kind || !strings.HasPrefix(p.Name, "successors/"+task+"-T") {
				t.Fatalf("Successor(%q, %q) = %s (task %s, model %s)", task, kind, p.Name, p.Task.Kind, p.Model.Kind)
			}
			cell, _, err := p.Build()
			if err != nil {
				t.Fatal(err)
			}
			_, got := rnn.Params(cell)
			switch kind {
			case "urnn":
				budget = got
			case "esn", "lstm-peephole":
			default:
				if math.Abs(float64(got-budget)) > 0.05*float64(budget) {
					t.Errorf("%s: %d free parameters, want the uRNN's %d within 5%%", p.Name, got, budget)
				}
			}
		}
	}
	for _, bad := range [][2]string{{"varcopy", "urnn"}, {"copy", "lt-ornn"}} {
		if p, err := Successor(bad[0], bad[1]); err == nil {
			t.Errorf("Successor(%q, %q) = %s, want an error", bad[0], bad[1], p.Name)
		}
	}
}

// TestTaskDataset: the MNIST tasks read MNIST unless Dataset is "fashion"; another value, or a
// dataset on a synthetic task, is refused with the value named.
func TestTaskDataset(t *testing.T) {
	task, err := Task{Kind: "pmnist"}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if p := task.(tasks.PixelMNIST); p.Fashion || !p.Permuted || p.Seed != 1 {
		t.Errorf("pmnist: %+v, want MNIST permuted with seed 1", p)
	}
	for _, tc := range []struct {
		task Task
		want string
	}{
		{Task{Kind: "mnist", Dataset: "kmnist"}, `Task.Dataset = "kmnist"`},
		{Task{Kind: "copy", T: 10, Dataset: "fashion"}, `is for the MNIST tasks, not "copy"`},
	} {
		if _, err := tc.task.Build(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error containing %q", tc.task, err, tc.want)
		}
	}
}

// TestGatedFeedbackBudget: the gated-feedback claim's three models have the number of free
// parameters their preset's comment states, within 3% of one another.
func TestGatedFeedbackBudget(t *testing.T) {
	want := map[string]int{"chung/adding-T50/tanh-128": 17025, "chung/adding-T50/tanh-49x3": 17347, "chung/adding-T50/gf-rnn-38x3": 17373}
	for name, n := range want {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		cell, _, err := p.Build()
		if err != nil {
			t.Fatal(err)
		}
		if _, got := rnn.Params(cell); got != n || math.Abs(float64(got-17025)) > 0.03*17025 {
			t.Errorf("%s: %d free parameters, want %d (within 3%% of the tanh RNN's 17 025)", name, got, n)
		}
	}
}

// TestDeepLRUBatchNorm checks that Model.BatchNorm reaches every block of both deep kinds.
func TestDeepLRUBatchNorm(t *testing.T) {
	for _, kind := range []string{"lru-deep", "s4d-deep"} {
		for _, on := range []bool{false, true} {
			c, err := Model{Kind: kind, Hidden: 4, Layers: 2, BatchNorm: on}.cell(3, 2, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.(rnn.BatchStatistics).BatchStatistics(); got != on {
				t.Errorf("%s, BatchNorm %t: the stack's BatchStatistics() = %t", kind, on, got)
			}
			for l, layer := range c.(*stack.Cell).Layers {
				if b := layer.(*lru.Block); b.BatchNorm != on {
					t.Errorf("%s, BatchNorm %t: block %d has BatchNorm %t", kind, on, l, b.BatchNorm)
				}
			}
		}
	}
}

// TestDeepLRURecurrentLR checks that Model.RecurrentLR sets the rate of every block's ν, θ and
// γ (the deep S4D's log Δ, log(−Re a) and Im a), and that without it they train at
// lru.PaperRecurrentLR.
func TestDeepLRURecurrentLR(t *testing.T) {
	for _, kind := range []string{"lru-deep", "s4d-deep"} {
		for _, tc := range []struct{ set, want float64 }{{0, lru.PaperRecurrentLR}, {0.05, 0.05}} {
			c, err := Model{Kind: kind, Hidden: 4, Layers: 2, RecurrentLR: tc.set}.cell(3, 2, false)
			if err != nil {
				t.Fatal(err)
			}
			scales := c.(rnn.LRScaled).LRScales()
			if len(scales) != 6 {
				t.Errorf("%s, RecurrentLR %g: scales %v, want the three recurrent variables of two blocks", kind, tc.set, scales)
			}
			first := map[string]string{"lru-deep": "nu_log", "s4d-deep": "log_dt"}[kind]
			found := false
			for name, got := range scales {
				if got != tc.want {
					t.Errorf("%s, RecurrentLR %g: %s at %g× the rate, want %g", kind, tc.set, name, got, tc.want)
				}
				found = found || strings.HasSuffix(name, first)
			}
			if !found {
				t.Errorf("%s: scaled variables %v, want %s among them", kind, scales, first)
			}
		}
	}
}

// TestS4DRing checks that the deep S4D's ring sets the range of |Ā| = exp(−Δ/2) at
// initialisation: every mode of every block within [RMin, RMax], the ends nearly reached.
func TestS4DRing(t *testing.T) {
	const lo, hi = 0.999, 0.9999
	c, err := Model{Kind: "s4d-deep", Hidden: 64, Layers: 2, RMin: lo, RMax: hi}.cell(10, 9, false)
	if err != nil {
		t.Fatal(err)
	}
	store := gomlxmodel.NewStore()
	if err := c.Init(store.RootScope(), rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	var n int
	least, most := 1.0, 0.0
	for v := range store.RootScope().IterVariables() {
		if !strings.HasSuffix(v.Name(), "log_dt") {
			continue
		}
		for _, ld := range tensors.MustCopyFlatData[float32](v.MustValue()) {
			r := math.Exp(-math.Exp(float64(ld)) / 2)
			least, most, n = min(least, r), max(most, r), n+1
		}
	}
	if n != 128 || least < lo-1e-6 || most > hi+1e-6 || least > lo+2e-4 || most < hi-2e-5 {
		t.Errorf("%d modes with |Ā| in [%.6f, %.6f], want 128 spanning [%g, %g]", n, least, most, lo, hi)
	}
}

// TestChunkFor checks ChunkFor's tiers and the chunks the presets get from their models: whole
// sequences up to T = 1000 for the models of small state, two chunks for 8 uRNN 512 replicas
// at once and the whole sequence for one or two (Preset.ForAtOnce).
func TestChunkFor(t *testing.T) {
	for _, c := range []struct{ T, state, atOnce, want int }{
		{500, 1 << 20, 8, 0}, {750, 256, 8, 0}, {1000, 262, 8, 0}, {1000, 263, 8, 500}, {750, 1024, 8, 375}, {784, 1024, 8, 392},
		{1001, 1, 8, 128}, {2020, 160, 8, 128}, {750, 1024, 1, 0}, {784, 1024, 2, 0}, {750, 1024, 3, 375}, {1000, 2097, 1, 0},
		{1000, 2098, 1, 500}, {2020, 160, 1, 128},
	} {
		if got := ChunkFor(c.T, c.state, c.atOnce); got != c.want {
			t.Errorf("ChunkFor(%d, %d, %d) = %d, want %d", c.T, c.state, c.atOnce, got, c.want)
		}
	}
	for _, c := range []struct {
		name         string
		chunk        int // -1: the preset's
		atOnce, want int
	}{
		{"arjovsky/adding-T750/urnn-512", -1, 1, 0}, {"arjovsky/adding-T750/urnn-512", -1, 2, 0},
		{"arjovsky/adding-T750/urnn-512", -1, 8, 375}, {"arjovsky/mnist/urnn-512", -1, 1, 0},
		{"arjovsky/pmnist/urnn-512", -1, 4, 392}, {"arjovsky/adding-T750/urnn-512", 100, 1, 100},
		{"henaff/copy-T2000/lt-ornn-80", -1, 1, 128}, {"arjovsky/adding-T750/lstm-peephole-128", -1, 1, 0},
	} {
		p, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if c.chunk >= 0 {
			p.Train.Chunk = c.chunk
		}
		if got := p.ForAtOnce(c.atOnce).Train.Chunk; got != c.want {
			t.Errorf("%s with Chunk %d: ForAtOnce(%d) chunk %d, want %d", c.name, p.Train.Chunk, c.atOnce, got, c.want)
		}
	}
	for name, want := range map[string]int{
		"arjovsky/adding-T750/urnn-512": 375, "arjovsky/adding-T750/lstm-peephole-128": 0, "arjovsky/adding-T750/tanh-128": 0,
		"arjovsky/mnist/urnn-512": 392, "arjovsky/pmnist/lstm-peephole-128": 0, "henaff/adding-T750/lstm-128": 0,
		"henaff/adding-T750/lt-ornn-128": 0, "henaff/copy-T2000/lt-ornn-80": 128, "arjovsky/adding-T400/urnn-512": 0,
	} {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Train.Chunk != want {
			t.Errorf("%s: Chunk %d, want %d", name, p.Train.Chunk, want)
		}
	}
	if s, err := (Model{Kind: "urnn", Hidden: 512}).State(); err != nil || s != 1024 {
		t.Errorf("the uRNN 512's State() = %d, %v; want 1024 (Re and Im of 512 units)", s, err)
	}
	if _, err := (Model{Kind: "nope", Hidden: 8}).State(); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("State of an unknown kind: %v, want an error naming it", err)
	}
}
