package runs

import (
	"flag"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
)

// TestPresetFlags checks the binding of flags to the preset's fields: FlagNames, derived from
// presetFlags, names each field's flag, and a flag given overrides its field only.
func TestPresetFlags(t *testing.T) {
	want := map[string]string{
		"Model.Kind": "-model", "Model.Hidden": "-hidden", "Model.Pooling": "-pooling", "Model.Init": "-init", "Model.Sigma": "-sigma", "Model.OutputBias": "-output-bias", "Model.LRScaleA": "-lr-scale-a", "Model.Layers": "-layers", "Model.Radius": "-radius", "Model.ForgetBias": "-forget-bias",
		"Model.Dropout": "-dropout", "Model.RecurrentDropout": "-recurrent-dropout", "Model.Bidirectional": "-bidirectional", "Model.Seq2Seq": "-seq2seq", "Model.RMin": "-r-min", "Model.RMax": "-r-max", "Model.MaxPhase": "-max-phase", "Model.NoGamma": "-no-gamma", "Model.RecurrentLR": "-recurrent-lr", "Model.SplitReLU": "-split-relu", "Model.BatchNorm": "-batch-norm", "Task.Reverse": "-reverse", "Task.Kind": "-task", "Task.T": "-T", "Task.Pool": "-pool", "Task.Dataset": "-dataset",
		"Train.Steps": "-steps", "Train.Batch": "-batch", "Train.Optimizer.LR": "-lr", "Train.Optimizer.Nesterov": "-nesterov", "Train.AdamW.LR": "-adamw-lr", "Train.AdamW.WeightDecay": "-weight-decay", "Train.HessianFree.CGIters": "-hf", "Train.Optimizer.ClipValue": "-clip", "Train.Orthogonality.LR": "-ortho-lr", "Train.Orthogonality.Norm": "-ortho-norm",
		"Train.Chunk": "-chunk", "Train.Seed": "-seed", "Train.Scan": "-scan", "Train.EvalEvery": "-eval-every", "Train.EvalBatch": "-eval-batch", "Train.CheckpointEvery": "-checkpoint-every",
		"Train.ScaleHiddenGrad": "-scale-hidden-grad",
	}
	if !maps.Equal(FlagNames, want) {
		t.Errorf("FlagNames = %v, want %v", FlagNames, want)
	}
	p, err := experiments.Lookup("henaff/copy-T500/lt-ornn-80")
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	apply := BindFlags(fs)
	if err := fs.Parse([]string{"-lr", "0.5", "-T", "7", "-scale-hidden-grad=false"}); err != nil {
		t.Fatal(err)
	}
	got, wantP := p, p
	wantP.Train.Optimizer.LR, wantP.Task.T, wantP.Train.ScaleHiddenGrad = 0.5, 7, false
	if err := apply(&got); err != nil || got != wantP {
		t.Errorf("-lr 0.5 -T 7 -scale-hidden-grad=false on %s: %v, %+v; want %+v", p.Name, err, got, wantP)
	}
	// Barber's and Galvan's models from the command line: the flags give the presets' models.
	for _, tc := range []struct {
		preset string
		args   []string
		from   string
	}{
		{"dropout/adding-T100/lstm-peephole-128-dropout-0.1", []string{"-dropout", "0.1"}, "dropout/adding-T100/lstm-peephole-128"},
		{"dropout/adding-T100/lstm-peephole-128-recurrent-dropout-0.1", []string{"-recurrent-dropout", "0.1"}, "dropout/adding-T100/lstm-peephole-128"},
		{"barber/bothsides-T20/lstm-32-bidirectional", []string{"-bidirectional"}, "barber/bothsides-T20/lstm-32"},
		{"barber/translate-T8/lstm-32-seq2seq-reversed", []string{"-reverse"}, "barber/translate-T8/lstm-32-seq2seq"},
	} {
		want, err := experiments.Lookup(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		got, err := experiments.Lookup(tc.from)
		if err != nil {
			t.Fatal(err)
		}
		if err := ApplyOverrides(&got, tc.args); err != nil || got.Model != want.Model || got.Task != want.Task {
			t.Errorf("%s %v: %v, model %+v task %+v; want %s's %+v, %+v", tc.from, tc.args, err, got.Model, got.Task, tc.preset, want.Model, want.Task)
		}
	}
	for _, bad := range [][]string{{"-dropout", "1"}, {"-recurrent-dropout", "-0.1"}} {
		q := p
		if err := ApplyOverrides(&q, bad); err == nil || !strings.Contains(err.Error(), "want a number in [0, 1)") {
			t.Errorf("%v: %v, want an error naming the range [0, 1)", bad, err)
		}
	}
}
