package notebook

import (
	"bytes"
	"encoding/base64"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/janpfeifer/gonb/gonbui/protocol"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/plots"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
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
	for v, want := range map[string]bool{"true": true, "TRUE": true, "0": false, "false": false, "": false} {
		t.Setenv(QuickEnv, v)
		if Quick() != want {
			t.Errorf("%s=%q: Quick() = %v, want %v", QuickEnv, v, !want, want)
		}
	}
	t.Setenv(QuickEnv, "yes please")
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, `LONGMEMORY_QUICK="yes please", want 1 or true`) {
			t.Errorf("an undocumented value: panic %q", msg)
		}
	}()
	Quick()
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
	c := LossChart("adding", 0.167, false, first, third)
	if len(c.Series) != 3 || len(c.Series[0].Y) != 2 || c.Series[2].Name != "baseline" || !c.Series[2].Dashed {
		t.Errorf("LossChart: want two runs (two evaluations each) and the baseline, got %+v", c.Series)
	}
	if svg := c.SVG(); !strings.Contains(svg, ">baseline<") {
		t.Error("LossChart: no baseline in the legend")
	}
	if line := runLine("tiny", third, 4); line != fmt.Sprintf("tiny: step 4/4, held-out loss %.4f (baseline %.4f)", third.Trainer.Log[3].EvalLoss, third.Baseline) {
		t.Errorf("runLine = %q", line)
	}
}

// TestBundle: Show sends one output with the figure as PNG (shown at the figure's size) and
// as SVG; the live plot inlines the PNG.
func TestBundle(t *testing.T) {
	fig := plots.Chart{Width: 300, Height: 200, Series: []plots.Series{{Y: []float64{1, 2}}}}
	data, meta, err := bundle(fig)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := data[protocol.MIMEImagePNG].([]byte)
	if !ok {
		t.Fatalf("image/png is %T, want []byte", data[protocol.MIMEImagePNG])
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil || img.Bounds().Dx() != 300*plots.PNGScale {
		t.Errorf("PNG: %v, %v", err, img.Bounds())
	}
	if svg, _ := data[protocol.MIMEImageSVG].(string); !strings.Contains(svg, "<svg") || len(data) != 2 {
		t.Errorf("want image/png and image/svg+xml only, got %d entries", len(data))
	}
	if size, _ := meta[string(protocol.MIMEImagePNG)].(map[string]int); size["width"] != 300 || size["height"] != 200 {
		t.Errorf("metadata %v, want the PNG shown at 300×200", meta)
	}
	// Through GoNB's pipe (gob) and into the kernel's message (JSON): the PNG becomes base64,
	// the metadata {"width": 300, "height": 200}.
	var pipe bytes.Buffer
	if err := gob.NewEncoder(&pipe).Encode(&protocol.DisplayData{Data: data, Metadata: meta}); err != nil {
		t.Fatalf("gob: %v", err)
	}
	var got protocol.DisplayData
	if err := gob.NewDecoder(&pipe).Decode(&got); err != nil {
		t.Fatalf("gob: %v", err)
	}
	msg, err := json.Marshal(map[string]any{"data": got.Data, "metadata": got.Metadata})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`"image/png":%q`, base64.StdEncoding.EncodeToString(b))
	if !strings.Contains(string(msg), want) || !strings.Contains(string(msg), `"metadata":{"image/png":{"height":200,"width":300},"longmemory":{"data_points":`) {
		t.Errorf("display_data message: %.300s…", msg)
	}
	tag := imgTag(fig)
	if !strings.HasPrefix(tag, `<img src="data:image/png;base64,`) || !strings.HasSuffix(tag, `" width="300" height="200">`) {
		t.Errorf("imgTag = %.80s…", tag)
	}
	if enc := strings.TrimSuffix(strings.TrimPrefix(tag, `<img src="data:image/png;base64,`), `" width="300" height="200">`); enc != base64.StdEncoding.EncodeToString(b) {
		t.Error("imgTag does not inline the figure's PNG")
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

// TestRunDir: the same settings share a directory, any changed setting gets its own; where
// the checkpoints live does not count.
func TestRunDir(t *testing.T) {
	p, err := experiments.Lookup("henaff/adding-T400/lt-irnn-128")
	if err != nil {
		t.Fatal(err)
	}
	dir := RunDir(p)
	if !strings.HasPrefix(filepath.Base(dir), "henaff_adding-T400_lt-irnn-128-") || filepath.Dir(dir) != RunsDir() {
		t.Errorf("RunDir = %s", dir)
	}
	// The names runs of this preset have had since its chunk became the whole sequence
	// (experiments.ChunkFor) and the chunk left the key (runs.Key): names do not change with
	// train.Config fields that do not change what is trained (CheckpointDir, Chunk).
	if got := filepath.Base(dir); got != "henaff_adding-T400_lt-irnn-128-675daed9" {
		t.Errorf("RunDir = %s, want the name runs of this preset already have", got)
	}
	if r := filepath.Base(RunDir(tinyPreset("test/legacy"))); r != "test_legacy-7f2567a3" {
		t.Errorf("RunDir of tinyPreset = %s; want the name such runs already have", r)
	}
	for _, change := range []func(*experiments.Preset){
		func(p *experiments.Preset) { p.Train.ScaleHiddenGrad = false },
		func(p *experiments.Preset) { p.Train.Optimizer.LR = 1e-3 },
		func(p *experiments.Preset) { p.Model.Hidden = 64 },
		func(p *experiments.Preset) { p.Task.T = 50 },
	} {
		q := p
		change(&q)
		if RunDir(q) == dir {
			t.Errorf("a changed setting (%+v) keeps the directory %s", q, dir)
		}
	}
}

// tinyPreset is a run of a few milliseconds.
func tinyPreset(name string) experiments.Preset {
	return experiments.Preset{Name: name, Model: experiments.Model{Kind: "tanh", Hidden: 4},
		Task:  experiments.Task{Kind: "adding", T: 5},
		Train: train.Config{Steps: 2, Batch: 3, EvalEvery: 1, EvalBatch: 5, CheckpointEvery: 1, Seed: 2}}
}

// TestTrainKeepsUnreadableCheckpoints checks that checkpoints Train cannot resume from are
// moved aside, never deleted, and that training then starts afresh.
func TestTrainKeepsUnreadableCheckpoints(t *testing.T) {
	t.Setenv(QuickEnv, "")
	t.Setenv("LONGMEMORY_ROOT", t.TempDir())
	p := tinyPreset("test/unreadable")
	dir := runs.CheckpointDir(RunDir(p))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	junk := []byte("not a checkpoint")
	if err := os.WriteFile(filepath.Join(dir, "ckpt-000000001.gob"), junk, 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := Train(p)
	if err != nil {
		t.Fatal(err)
	}
	if run.Trainer.Step != 2 {
		t.Errorf("trained to step %d, want 2", run.Trainer.Step)
	}
	aside, _ := filepath.Glob(filepath.Join(RunDir(p), "unreadable-*"))
	if len(aside) != 1 {
		t.Fatalf("moved-aside directories %v, want one", aside)
	}
	if got, err := os.ReadFile(filepath.Join(aside[0], runs.Checkpoints, "ckpt-000000001.gob")); err != nil || !bytes.Equal(got, junk) {
		t.Errorf("the unreadable checkpoint was not kept: %q, %v", got, err)
	}
}

// TestRunDirReadByCLI: a notebook run's directory holds run.json and log.gz as `longmemory
// train` writes them, read by the same reader as `longmemory plot`, `summary` and `eval`
// (package runs), with every field of every record.
func TestRunDirReadByCLI(t *testing.T) {
	t.Setenv(QuickEnv, "")
	t.Setenv("LONGMEMORY_ROOT", t.TempDir())
	p := tinyPreset("test/readable")
	run, err := Train(p)
	if err != nil {
		t.Fatal(err)
	}
	meta, log, err := runs.Read(run.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Preset.Name != p.Name || meta.Task != run.Trainer.Task.String() || meta.Baseline != run.Baseline ||
		len(meta.Spans) != 1 || meta.Preset.Train.Steps != 2 {
		t.Errorf("run.json: %+v", meta)
	}
	if len(log) != len(run.Trainer.Log) {
		t.Fatalf("the log has %d records, the run %d", len(log), len(run.Trainer.Log))
	}
	for i, r := range run.Trainer.Log {
		got := log[i]
		if math.Abs(got.Seconds-r.Seconds) > 0.005+1e-9 { // log.gz keeps wall time to 1/100 s
			t.Errorf("record %d: seconds %v in the log, %v in the run", i, got.Seconds, r.Seconds)
		}
		got.Seconds = r.Seconds
		if fmt.Sprint(got) != fmt.Sprint(r) {
			t.Errorf("record %d: log %+v, run %+v", i, log[i], r)
		}
	}
	var table strings.Builder
	if err := runs.Summary(&table, run.Dir); err != nil || !strings.Contains(table.String(), "| tanh 4 | Adding(T=5) | 2 |") {
		t.Errorf("runs.Summary: %v\n%s", err, table.String())
	}
	if c, err := runs.Chart([]string{run.Dir}, runs.HeldOutLoss); err != nil || len(c.Series) != 2 || len(c.Series[0].Y) != 2 {
		t.Errorf("runs.Chart: %v, %+v", err, c.Series)
	}
	// Re-running the cell reloads the finished run and keeps the directory as it was.
	again, err := Train(p)
	if err != nil || again.Trainer.Step != 2 || again.Dir != run.Dir {
		t.Fatalf("reload: %v", err)
	}
	if _, log2, _ := runs.Read(run.Dir); fmt.Sprint(log2) != fmt.Sprint(log) {
		t.Errorf("reloading changed the log")
	}
}

// TestTrainSeeds checks that replicas get consecutive seeds and checkpoints of their own, and
// that SeedsChart draws their median with the min–max band.
func TestTrainSeeds(t *testing.T) {
	t.Setenv(QuickEnv, "")
	t.Setenv("LONGMEMORY_ROOT", t.TempDir())
	p := experiments.Preset{Name: "test/seeds", Model: experiments.Model{Kind: "tanh", Hidden: 4},
		Task:  experiments.Task{Kind: "adding", T: 5},
		Train: train.Config{Steps: 2, Batch: 3, EvalEvery: 1, EvalBatch: 5, CheckpointEvery: 1, Seed: 5}}
	runs, err := TrainSeeds(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for i, r := range runs {
		if r.Trainer.Config.Seed != 5+uint64(i) {
			t.Errorf("replica %d: seed %d, want %d", i, r.Trainer.Config.Seed, 5+i)
		}
		dirs[r.Trainer.CheckpointDir] = true
	}
	if len(dirs) != 3 {
		t.Errorf("replicas share checkpoint directories: %v", dirs)
	}
	// Trained at once, each replica is the single run of its seed.
	q := p
	q.Name, q.Train.Seed = "test/seed-6-alone", 6
	alone, err := Train(q)
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range alone.Trainer.Log {
		if got := runs[1].Trainer.Log[i]; got.Loss != rec.Loss || got.EvalLoss != rec.EvalLoss {
			t.Errorf("step %d: replica seed 6 loss %v / %v, alone %v / %v", rec.Step, got.Loss, got.EvalLoss, rec.Loss, rec.EvalLoss)
		}
	}
	c := SeedsChart("t", runs[0].Baseline, runs)
	s := c.Series[0]
	if len(c.Series) != 2 || s.Name != "tanh 4, 3 seeds" || len(s.Y) != 2 || len(s.Lo) != 2 {
		t.Fatalf("SeedsChart: %+v", c.Series)
	}
	for i := range s.Y {
		var vals []float64
		for _, r := range runs {
			vals = append(vals, r.Trainer.Log[i].EvalLoss)
		}
		slices.Sort(vals)
		if s.Y[i] != vals[1] || s.Lo[i] != vals[0] || s.Hi[i] != vals[2] {
			t.Errorf("step %d: median %v [%v, %v], want %v", i+1, s.Y[i], s.Lo[i], s.Hi[i], vals)
		}
	}
	if _, err := TrainSeeds(p, 0); err == nil || !strings.Contains(err.Error(), "n = 0") {
		t.Errorf("TrainSeeds(p, 0): %v", err)
	}
}
