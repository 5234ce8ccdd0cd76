package notebook

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/claims"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// seedLog is a seed's log: a held-out evaluation every 10 steps at level(step), NaN between.
func seedLog(steps int, level func(step int) float64) []train.Record {
	var log []train.Record
	for s := 1; s <= steps; s++ {
		v := math.NaN()
		if s%10 == 0 {
			v = level(s)
		}
		log = append(log, train.Record{Step: s, Loss: 1, EvalLoss: v, EvalAccuracy: math.NaN(), Seconds: 0.01 * float64(s), Penalty: math.NaN()})
	}
	return log
}

// fakeRuns are n seeds of a model on adding T = 10 at level(seed, step).
func fakeRuns(name string, n int, level func(seed, step int) float64) []*Run {
	var out []*Run
	for s := range n {
		out = append(out, &Run{Name: name, Task: "adding", Baseline: 1.0 / 6, Trainer: &train.Trainer{
			Config: train.Config{Seed: uint64(s), EvalBatch: 100}, Task: tasks.Adding{T: 10}, Step: 500,
			Log: seedLog(500, func(step int) float64 { return level(s, step) })}})
	}
	return out
}

// TestJudgeAsReports: a notebook's runs get the verdict pkg/claims gives the same logs read
// from run directories, as the reports read them.
func TestJudgeAsReports(t *testing.T) {
	learn := fakeRuns("urnn 8", 8, func(seed, step int) float64 { return 0.17 * math.Exp(-float64(step)/100) * (1 + 0.01*float64(seed)) })
	fail := fakeRuns("tanh 8", 8, func(seed, step int) float64 { return 0.163 + 0.001*float64(seed) })
	c := claims.Claim{ID: "t", Source: "s", Quote: "q", LearnTest: claims.Below, Learn: []string{"urnn"}, FailTest: claims.NotBelow, Fail: []string{"tanh"}, Horizon: 500, Reference: claims.Baseline}
	nb := Judge(c, append(learn, fail...)...)
	dir := t.TempDir()
	for _, group := range [][]*Run{learn, fail} {
		for _, r := range group {
			name := map[bool]string{true: "urnn", false: "tanh"}[strings.HasPrefix(r.Name, "urnn")]
			rep := runs.ReplicaDir(filepath.Join(dir, name), r.Trainer.Config.Seed)
			if err := os.MkdirAll(rep, 0o755); err != nil {
				t.Fatal(err)
			}
			meta := fmt.Sprintf(`{"Preset": {"Task": {"Kind": "adding", "T": 10}, "Train": {"EvalBatch": 100}}, "Baseline": %v}`, 1.0/6)
			if err := os.WriteFile(filepath.Join(rep, runs.MetaFile), []byte(meta), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := runs.WriteLog(filepath.Join(rep, runs.LogFile), r.Trainer.Log); err != nil {
				t.Fatal(err)
			}
		}
	}
	byName, err := claims.LoadAll(dir, []claims.Claim{c})
	if err != nil {
		t.Fatal(err)
	}
	report := claims.Judge(c, byName)
	if nb.Outcome != claims.Reproduced || nb.Outcome != report.Outcome || nb.Reason != report.Reason {
		t.Errorf("notebook: %s (%s)\nreport: %s (%s)\nwant both reproduced, with the same reason", nb.Outcome, nb.Reason, report.Outcome, report.Reason)
	}
}

// TestSecondsReached: a claim on a budget of seconds that one run's steps do not reach is open;
// judged at the seconds every run reached (SecondsReached: the slower run's steps at its time
// per step), it is decided, at that run's last step.
func TestSecondsReached(t *testing.T) {
	fast := fakeRuns("urnn 8", 1, func(seed, step int) float64 { return 0.17 * math.Exp(-float64(step)/100) })
	slow := fakeRuns("tanh 8", 1, func(seed, step int) float64 { return 0.165 })
	for i := range slow[0].Trainer.Log {
		slow[0].Trainer.Log[i].Seconds *= 3 // 0.03 s a step: its 500 steps take 15 s, the fast run's 5 s
	}
	c := claims.Claim{ID: "t", Source: "s", Quote: "q", LearnTest: claims.Below, Learn: []string{"urnn"}, FailTest: claims.NotBelow, Fail: []string{"tanh"}, Seconds: 10}
	rs := append(fast, slow...)
	if v := Judge(c, rs...); v.Outcome != claims.Open {
		t.Errorf("at 10 s, past the fast run's 5 s: %s (%s), want open", v.Outcome, v.Reason)
	}
	got := SecondsReached(rs...)
	if !(got > 4.85 && got <= 5) || math.Abs(10*got-math.Round(10*got)) > 1e-9 {
		t.Fatalf("SecondsReached = %g, want 5 (500 steps at 0.01 s) rounded down to a tenth of a second", got)
	}
	c.Seconds = got
	v := Judge(c, rs...)
	if v.Outcome != claims.Reproduced {
		t.Errorf("at SecondsReached: %s (%s), want reproduced", v.Outcome, v.Reason)
	}
	for _, s := range v.Runs {
		if s.StepsJudged > s.Steps {
			t.Errorf("%s judged at step %d of its %d", s.Name, s.StepsJudged, s.Steps)
		}
	}
	if !math.IsNaN(SecondsReached()) {
		t.Errorf("SecondsReached() of no run = %g, want NaN", SecondsReached())
	}
}

// TestVerdictMargin: a few percent under the baseline (the tanh runs above end 1–3% under it)
// is not "below" it; the verdict names the claim's words, the outcome and the rule.
func TestVerdictMargin(t *testing.T) {
	rs := fakeRuns("tanh 8", 8, func(seed, step int) float64 { return (0.97 - 0.002*float64(seed)) / 6 })
	c := claims.Claim{ID: "t", Source: "Arjovsky §4.2", Quote: "go well below the baseline", LearnTest: claims.Below, Learn: []string{"tanh"}, FailTest: claims.None}
	v := Verdict(c, rs...)
	for _, want := range []string{"go well below the baseline", "NOT REPRODUCED", "at 500 steps", "The rule: going below the baseline"} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict:\n%s\nwant it to contain %q", v, want)
		}
	}
	if v := Judge(c); v.Outcome != claims.NotRun {
		t.Errorf("no runs: %s, want not run", v.Outcome)
	}
	// The rule line of a speed comparison states both of its conditions (claims.Alpha and
	// claims.FasterRatio), so that a p-value under the level with too small a ratio reads right.
	if r := rule(claims.Claim{LearnTest: claims.Faster}); !strings.Contains(r, "p < 0.05") || !strings.Contains(r, "at least 2 times") {
		t.Errorf("the rule of faster: %q, want the rank test's level and the ratio", r)
	}
}

// TestRecordedVerdicts: the recorded runs' verdicts as the report gives them, read from
// $LONGMEMORY_ROOT/docs.
func TestRecordedVerdicts(t *testing.T) {
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	for s := range 4 {
		rep := filepath.Join(docs, "runs", "r", fmt.Sprintf("seed-%d", s))
		if err := os.MkdirAll(rep, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(rep, runs.MetaFile), []byte(`{"Preset": {"Task": {"Kind": "copy", "T": 5}, "Train": {"EvalBatch": 100}}, "Baseline": 1}`), 0o644)
		if err := runs.WriteLog(filepath.Join(rep, runs.LogFile), seedLog(100, func(int) float64 { return 0.01 })); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(docs, "claims.tsv"), []byte("c1\tPaper §1\tq\tsolves\tr\t-\t-\t100\tbaseline\nc2\tPaper §2\tq\tsolves\tr\t-\t-\t200\tbaseline\n"), 0o644)
	t.Setenv("LONGMEMORY_ROOT", root)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	err = RecordedVerdicts("claims.tsv", "c1", "c2")
	w.Close()
	os.Stdout = stdout
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	for _, want := range []string{"c1 (Paper §1): REPRODUCED — at 100 steps: r passes", "c2 (Paper §2): OPEN — short of the horizon of 200 steps"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("RecordedVerdicts printed:\n%s\nwant a line containing %q", out, want)
		}
	}
	if err := RecordedVerdicts("claims.tsv", "nope"); err == nil || !strings.Contains(err.Error(), `no claim "nope"`) {
		t.Errorf("an unknown claim: %v", err)
	}
}
