package notebook

import (
	"math"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// fakeRun is a run whose held-out loss was last evaluated as loss (NaN records after it, as
// steps between evaluations have).
func fakeRun(name string, baseline, loss float64) *Run {
	log := []train.Record{{Step: 1, EvalLoss: 9}, {Step: 2, EvalLoss: loss}, {Step: 3, EvalLoss: math.NaN()}}
	return &Run{Name: name, Baseline: baseline, Trainer: &train.Trainer{Log: log, Step: 3}}
}

func TestStanding(t *testing.T) {
	for _, tc := range []struct {
		loss float64
		want string
	}{{0.5, "below"}, {0.975, "below"}, {0.99, "at"}, {1.01, "at"}, {1.03, "above"}, {math.NaN(), "not evaluated"}} {
		r := fakeRun("m", 1, tc.loss)
		if tc.loss != tc.loss {
			r.Trainer.Log = []train.Record{{Step: 1, EvalLoss: math.NaN()}}
		}
		if got := Standing(r); got != tc.want {
			t.Errorf("loss %v against baseline 1: %q, want %q", tc.loss, got, tc.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	claim := Claim{Paper: "A learns, B does not", Learn: []string{"A"}, Fail: []string{"B"}}
	agree := Verdict(claim, fakeRun("A 80", 0.3, 0.1), fakeRun("B", 0.3, 0.31)) // "A" names A of any size
	if !strings.Contains(agree, "These runs (3 steps): agree with the paper") {
		t.Errorf("A below, B at the baseline:\n%s", agree)
	}
	against := Verdict(claim, fakeRun("A", 0.3, 0.5), fakeRun("B", 0.3, 0.1))
	for _, want := range []string{"do not agree",
		"A does not learn (ends at or above the baseline) here (held-out loss 0.5, baseline 0.3), the paper says it learns",
		"B learns (ends below the baseline) here (held-out loss 0.1, baseline 0.3), the paper says it does not learn"} {
		if !strings.Contains(against, want) {
			t.Errorf("A above, B below: no %q in\n%s", want, against)
		}
	}
	solve := Claim{Paper: "A solves it", Learn: []string{"A"}, Fail: []string{"B"}, Solved: true}
	if v := Verdict(solve, fakeRun("A", 0.3, 0.1), fakeRun("B", 0.3, 0.2)); !strings.Contains(v,
		"A does not solve the task here (held-out loss 0.1, baseline 0.3), the paper says it solves the task (ends below 0.03)") {
		t.Errorf("A below the baseline but not below a tenth of it:\n%s", v)
	}
	// On adding, solving is a held-out MSE below 0.01 (runs.SolvedLoss), not a tenth of the baseline.
	adding := func(name string, loss float64) *Run { r := fakeRun(name, 1/6.0, loss); r.Task = "adding"; return r }
	if v := Verdict(solve, adding("A", 0.012), adding("B", 0.2)); !strings.Contains(v,
		"A does not solve the task here (held-out loss 0.012, baseline 0.1667), the paper says it solves the task (ends below 0.01)") {
		t.Errorf("adding: A at 0.012, below a tenth of the baseline but above 0.01:\n%s", v)
	}
	if v := Verdict(solve, fakeRun("A", 0.3, 0.02), fakeRun("B", 0.3, 0.2)); !strings.Contains(v, "agree with the paper") {
		t.Errorf("A solves, B only below the baseline:\n%s", v)
	}
	plateau := Claim{Paper: "A learns", Learn: []string{"A"}, Fail: []string{"B"}, Below: 0.15, BelowName: "the plateau"}
	if v := Verdict(plateau, fakeRun("A", 0.3, 0.1), fakeRun("B", 0.3, 0.2)); !strings.Contains(v, "agree with the paper") {
		t.Errorf("A below the plateau, B below the baseline only:\n%s", v)
	}
	if v := Verdict(plateau, fakeRun("A", 0.3, 0.2), fakeRun("B", 0.3, 0.2)); !strings.Contains(v,
		"A does not learn (ends at or above the plateau, 0.15) here") {
		t.Errorf("A above the plateau:\n%s", v)
	}
	if v := Verdict(claim, fakeRun("A", 0.3, 0.1)); !strings.Contains(v, "no verdict: no run of B") {
		t.Errorf("B missing:\n%s", v)
	}
}
