package notebook

import (
	"math"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// TestSeedsTable: two seeds that solve adding (MSE 0.001 from step 200 on, fakeRuns' 0.01 s a
// step) against two that stay on the baseline.
func TestSeedsTable(t *testing.T) {
	solving := fakeRuns("good 8", 2, func(seed, step int) float64 {
		if step >= 200 {
			return 0.001
		}
		return 1.0 / 6
	})
	flat := fakeRuns("flat 8", 2, func(seed, step int) float64 { return 1.0/6 + 0.01*float64(seed) })
	got := SeedsTable([][]*Run{solving, flat})
	for _, want := range []string{
		"| good 8 | 0 | 0.0010 [0.0010–0.0010] | 2 of 2 | 2 of 2 | 200, 2 s | 500 | 5 s | 10 ms |",
		"| flat 8 | 0 | 0.1717 [0.1667–0.1767] | 0 of 2 | 0 of 2 | – | 500 | 5 s | 10 ms |",
		"baseline 0.1667; solve: a final held-out loss below 0.0100;",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("SeedsTable has no line %q:\n%s", want, got)
		}
	}
	if got := SeedsTable(nil); !strings.Contains(got, "no runs") {
		t.Errorf("SeedsTable(nil) = %q", got)
	}
}

// TestTrainingTime: 2 seeds trained at once at 0.01 s a step on adding T = 10 stand for the
// preset's adding T = 400 (40 times the steps' length), 10 000 steps, 8 seeds.
func TestTrainingTime(t *testing.T) {
	full, err := experiments.Successor("adding", "scrn")
	if err != nil {
		t.Fatal(err)
	}
	if full.Task.T != 400 || full.Train.Steps != 10000 {
		t.Fatalf("%s: T = %d, %d steps; the test assumes 400 and 10 000", full.Name, full.Task.T, full.Train.Steps)
	}
	g := fakeRuns("scrn 80", 2, func(seed, step int) float64 { return 0.1 })
	got, err := TrainingTime([][]*Run{g}, []experiments.Preset{full}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.01 * 40 * 10000 * 8 / 2; math.Abs(got-want) > 1e-6*want {
		t.Errorf("TrainingTime = %g s, want %g", got, want)
	}
	if _, err := TrainingTime([][]*Run{g, g}, []experiments.Preset{full}, 8); err == nil {
		t.Error("TrainingTime of 2 groups and 1 preset: no error")
	}
}

// TestUntrainedAndReadoutTable trains a tiny echo state network for a few steps from two seeds
// and checks that Untrained gives each seed's starting model, and that ReadoutTable fits the
// readouts in closed form and sets them beside the trained ones.
func TestUntrainedAndReadoutTable(t *testing.T) {
	t.Setenv(QuickEnv, "")
	t.Setenv("LONGMEMORY_ROOT", t.TempDir())
	p := experiments.Preset{Name: "test/esn", Model: experiments.Model{Kind: "esn", Hidden: 16},
		Task:  experiments.Task{Kind: "adding", T: 6},
		Train: train.Config{Steps: 4, Batch: 4, EvalEvery: 1, EvalBatch: 8, CheckpointEvery: 4, Seed: 3}}
	rs, err := TrainSeeds(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	loss := func(p experiments.Preset) float64 {
		tr, err := Untrained(p)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Step != 0 {
			t.Errorf("Untrained: step %d, want 0", tr.Step)
		}
		l, _, err := tr.Evaluate()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	start, again := loss(p), loss(p)
	if start != again {
		t.Errorf("Untrained twice: held-out loss %v, then %v", start, again)
	}
	trained, _, err := rs[0].Trainer.Evaluate()
	if err != nil {
		t.Fatal(err)
	}
	if trained == start {
		t.Errorf("Untrained: held-out loss %v, the same as the trained run's", start)
	}
	q := p
	q.Train.Seed++
	if other := loss(q); other == start {
		t.Errorf("Untrained of seeds 3 and 4: the same held-out loss %v", other)
	}
	table, err := ReadoutTable(rs, 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(table, "| esn 16 |"); n != 2 {
		t.Errorf("ReadoutTable: %d rows of esn 16, want 2:\n%s", n, table)
	}
	for _, want := range []string{"| esn 16 | 3 |", "| esn 16 | 4 |", "50 sequences, β = 1"} {
		if !strings.Contains(table, want) {
			t.Errorf("ReadoutTable has no %q:\n%s", want, table)
		}
	}
	if _, err := ReadoutTable(rs, 0, 1); err == nil {
		t.Error("ReadoutTable with 0 sequences: no error")
	}
}
