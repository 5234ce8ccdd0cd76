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
	agree := Verdict(claim, fakeRun("A", 0.3, 0.1), fakeRun("B", 0.3, 0.31))
	if !strings.Contains(agree, "These runs (3 steps): agree with the paper") {
		t.Errorf("A below, B at the baseline:\n%s", agree)
	}
	against := Verdict(claim, fakeRun("A", 0.3, 0.5), fakeRun("B", 0.3, 0.1))
	for _, want := range []string{"do not agree", "A ends above the baseline (0.5 against 0.3), the paper says below",
		"B ends below the baseline (0.1 against 0.3), the paper says not below"} {
		if !strings.Contains(against, want) {
			t.Errorf("A above, B below: no %q in\n%s", want, against)
		}
	}
	if v := Verdict(claim, fakeRun("A", 0.3, 0.1)); !strings.Contains(v, "no verdict: no run of B") {
		t.Errorf("B missing:\n%s", v)
	}
}
