package notebook

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Claim is what a paper says about a set of runs on one task: which models learn it (their
// held-out loss ends below the memoryless baseline) and which do not. Models are named as
// Run.Name names them ("lt-ornn 80", "urnn 128", …).
type Claim struct {
	Paper string   // the statement, with its source (e.g. "Henaff et al. 2016 §4: …")
	Learn []string // models the paper says learn the task
	Fail  []string // models the paper says stay at or above the baseline
}

// Tolerance is the relative margin around the baseline within which a final held-out loss
// counts as "at the baseline": below (1 − Tolerance)·baseline is "below", above
// (1 + Tolerance)·baseline is "above".
const Tolerance = 0.02

// Standing says where a run's last held-out loss lies against its baseline: "below", "at"
// or "above" (see Tolerance), or "not evaluated".
func Standing(r *Run) string {
	loss := lastEval(r)
	switch {
	case math.IsNaN(loss):
		return "not evaluated"
	case loss < (1-Tolerance)*r.Baseline:
		return "below"
	case loss > (1+Tolerance)*r.Baseline:
		return "above"
	}
	return "at"
}

// lastEval is the run's last held-out loss (NaN if it was never evaluated).
func lastEval(r *Run) float64 {
	for i := len(r.Trainer.Log) - 1; i >= 0; i-- {
		if v := r.Trainer.Log[i].EvalLoss; !math.IsNaN(v) {
			return v
		}
	}
	return math.NaN()
}

// Verdict compares runs with claim c and says, in a few lines of plain text, whether these
// runs agree: every model of c.Learn ends below its baseline and no model of c.Fail does.
// Models of the claim without a run are named as missing; runs the claim does not name are
// listed without a verdict. The text is computed from the runs, so a notebook's saved
// output and its re-runs always say what the figure above them shows.
func Verdict(c Claim, runs ...*Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The paper: %s\n", c.Paper)
	agree, missing := true, []string{}
	var against []string
	byName := map[string]*Run{}
	for _, r := range runs {
		byName[r.Name] = r
	}
	for _, name := range slices.Concat(c.Learn, c.Fail) {
		r, ok := byName[name]
		if !ok {
			missing = append(missing, name)
			continue
		}
		want := "below"
		if slices.Contains(c.Fail, name) {
			want = "not below"
		}
		got := Standing(r)
		if (want == "below") != (got == "below") {
			agree = false
			against = append(against, fmt.Sprintf("%s ends %s the baseline (%.4g against %.4g), the paper says %s",
				name, got, lastEval(r), r.Baseline, want))
		}
	}
	fmt.Fprintf(&b, "These runs (%d steps): ", maxStep(runs))
	switch {
	case len(missing) > 0:
		fmt.Fprintf(&b, "no verdict: no run of %s.\n", strings.Join(missing, ", "))
	case agree:
		b.WriteString("agree with the paper.\n")
	default:
		fmt.Fprintf(&b, "do not agree with the paper: %s.\n", strings.Join(against, "; "))
	}
	for _, r := range runs {
		fmt.Fprintf(&b, "  %-18s held-out loss %.4g, %s the baseline %.4g\n", r.Name, lastEval(r), Standing(r), r.Baseline)
	}
	return b.String()
}

func maxStep(runs []*Run) int {
	n := 0
	for _, r := range runs {
		n = max(n, r.Trainer.Step)
	}
	return n
}
