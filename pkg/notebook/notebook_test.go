package notebook

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

func TestPick(t *testing.T) {
	t.Setenv(QuickEnv, "")
	if Pick(100, 3) != 100 {
		t.Error("Pick outside quick mode did not return the full value")
	}
	t.Setenv(QuickEnv, "1")
	if Pick(100, 3) != 3 {
		t.Error("Pick in quick mode did not return the quick value")
	}
}

func TestTrainResumesAndCharts(t *testing.T) {
	t.Setenv(QuickEnv, "")
	t.Setenv("LONGMEMORY_ROOT", t.TempDir())
	p := experiments.Preset{Name: "test/tiny", Model: experiments.Model{Kind: "tanh", Hidden: 4},
		Task:  experiments.Task{Kind: "adding", T: 5},
		Train: train.Config{Steps: 4, Batch: 3, EvalEvery: 2, EvalBatch: 5, CheckpointEvery: 2, Seed: 2}}
	first, err := Train(p)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Train(p)
	if err != nil {
		t.Fatal(err)
	}
	if second.Trainer.LastCheckpoint == "" || len(second.Trainer.Log) != 4 {
		t.Fatalf("second Train did not reload the finished run: checkpoint %q, %d records", second.Trainer.LastCheckpoint, len(second.Trainer.Log))
	}
	for i, r := range first.Trainer.Log {
		if s := second.Trainer.Log[i]; s.Loss != r.Loss {
			t.Errorf("step %d: reloaded loss %g, trained %g", r.Step, s.Loss, r.Loss)
		}
	}
	// A changed configuration does not resume the old checkpoint.
	p.Model.Hidden = 5
	third, err := Train(p)
	if err != nil {
		t.Fatal(err)
	}
	if third.Trainer.Log[0].Loss == first.Trainer.Log[0].Loss {
		t.Error("a run with another hidden size reused the old log")
	}
	svg := LossChart("adding", 0.167, false, first, third).SVG()
	if strings.Count(svg, "<polyline") != 3 || !strings.Contains(svg, "baseline") {
		t.Errorf("LossChart: want two runs and the baseline:\n%s", svg)
	}
}

func TestSizedAndSummary(t *testing.T) {
	p, err := experiments.Lookup("arjovsky/copy-T100/urnn-128")
	if err != nil {
		t.Fatal(err)
	}
	q := Sized(p, 30, 7)
	if q.Task.T != 30 || q.Train.Steps != 7 || q.Name == p.Name || p.Task.T != 100 || q.Train.EvalEvery != 1 {
		t.Errorf("Sized: %+v (original %+v)", q, p)
	}
	if q := Sized(p, 30, 400); q.Train.EvalEvery != 20 {
		t.Errorf("Sized(400 steps).Train.EvalEvery = %d, want 20 (20 evaluations)", q.Train.EvalEvery)
	}
	p.Train.EvalEvery = 3
	if q := Sized(p, 30, 400); q.Train.EvalEvery != 3 {
		t.Errorf("Sized kept EvalEvery = %d, want the preset's 3", q.Train.EvalEvery)
	}
	t.Setenv(QuickEnv, "1")
	small := Sized(experiments.Preset{Name: "test/sum", Model: experiments.Model{Kind: "tanh", Hidden: 4},
		Task: experiments.Task{Kind: "copy", T: 3, Symbols: 2, Recall: 2}, Train: train.Config{Batch: 2, EvalEvery: 1, EvalBatch: 3}}, 0, 2)
	runs, err := TrainAll(small)
	if err != nil {
		t.Fatal(err)
	}
	if s := Summary(runs...); !strings.Contains(s, "accuracy") || !strings.Contains(s, "after 2 steps") {
		t.Errorf("Summary = %q", s)
	}
}

// TestCheckpointDir: the same settings share a directory, any changed setting gets its own.
func TestCheckpointDir(t *testing.T) {
	p, err := experiments.Lookup("henaff/adding-T400/lt-irnn-128")
	if err != nil {
		t.Fatal(err)
	}
	dir := CheckpointDir(p)
	if !strings.HasPrefix(filepath.Base(dir), "henaff_adding-T400_lt-irnn-128-") || filepath.Dir(dir) != RunsDir() {
		t.Errorf("CheckpointDir = %s", dir)
	}
	q := p
	q.Train.CheckpointDir = "elsewhere"
	if CheckpointDir(q) != dir {
		t.Errorf("CheckpointDir depends on Train.CheckpointDir")
	}
	for _, change := range []func(*experiments.Preset){
		func(p *experiments.Preset) { p.Train.ScaleHiddenGrad = false },
		func(p *experiments.Preset) { p.Train.Optimizer.LR = 1e-3 },
		func(p *experiments.Preset) { p.Model.Hidden = 64 },
		func(p *experiments.Preset) { p.Task.T = 50 },
	} {
		q := p
		change(&q)
		if CheckpointDir(q) == dir {
			t.Errorf("a changed setting (%+v) keeps the directory %s", q, dir)
		}
	}
}
