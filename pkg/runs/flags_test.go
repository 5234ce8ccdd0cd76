package runs

import (
	"flag"
	"io"
	"maps"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
)

// TestPresetFlags checks the binding of flags to the preset's fields: FlagNames, derived from
// presetFlags, names each field's flag, and a flag given overrides its field only.
func TestPresetFlags(t *testing.T) {
	want := map[string]string{
		"Model.Kind": "-model", "Model.Hidden": "-hidden", "Model.Pooling": "-pooling", "Model.Init": "-init", "Model.Sigma": "-sigma", "Model.OutputBias": "-output-bias", "Model.LRScaleA": "-lr-scale-a", "Model.Layers": "-layers", "Model.Radius": "-radius", "Model.ForgetBias": "-forget-bias", "Task.Kind": "-task", "Task.T": "-T", "Task.Pool": "-pool", "Task.Dataset": "-dataset",
		"Train.Steps": "-steps", "Train.Batch": "-batch", "Train.Optimizer.LR": "-lr", "Train.Optimizer.Nesterov": "-nesterov", "Train.AdamW.LR": "-adamw-lr", "Train.AdamW.WeightDecay": "-weight-decay", "Train.HessianFree.CGIters": "-hf", "Train.Optimizer.ClipValue": "-clip", "Train.Orthogonality.LR": "-ortho-lr",
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
}
