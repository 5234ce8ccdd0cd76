package notebook

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// Claim is what a paper says about a set of runs on one task: which models learn it (their
// held-out loss ends below the memoryless baseline) and which do not. A model is named by
// its kind ("lt-ornn", "urnn", …: any size) or as Run.Name names it ("lt-ornn 80").
type Claim struct {
	Paper string   // the statement, with its source (e.g. "Henaff et al. 2016 §4: …")
	Learn []string // models the paper says learn the task
	Fail  []string // models the paper says stay at or above the baseline
	// Solved makes "learn" mean "solve", for a task the paper shows solved (loss near 0): end
	// below runs.SolvedLoss, a tenth of the baseline on copy and an MSE of 0.01 on adding, as
	// docs/VERDICTS.md counts it. False means ending below the baseline.
	Solved bool
	// Below, if > 0, makes "learn" mean ending below this loss instead of the baseline, e.g.
	// the variable-length copy's timing plateau; BelowName names it in the text.
	Below     float64
	BelowName string
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
	for _, name := range slices.Concat(c.Learn, c.Fail) {
		i := slices.IndexFunc(runs, func(r *Run) bool { return r.Name == name || strings.HasPrefix(r.Name, name+" ") })
		if i < 0 {
			missing = append(missing, name)
			continue
		}
		r := runs[i]
		learns := c.learned(r)
		if paper := slices.Contains(c.Learn, name); paper != learns {
			agree = false
			against = append(against, fmt.Sprintf("%s %s here (held-out loss %.4g, baseline %.4g), the paper says it %s",
				name, c.says(r, learns), lastEval(r), r.Baseline, c.says(r, paper)))
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

// learned reports whether r counts as having learnt the task under c.
func (c Claim) learned(r *Run) bool {
	if c.Below > 0 {
		return lastEval(r) < c.Below
	}
	if c.Solved {
		return lastEval(r) < runs.SolvedLoss(r.Task, r.Baseline)
	}
	return Standing(r) == "below"
}

// says is what run r's model does under c: it learns or not (ends below the baseline), or,
// with Solved set, it solves or not (ends below runs.SolvedLoss).
func (c Claim) says(r *Run, learns bool) string {
	switch {
	case c.Below > 0 && learns:
		return fmt.Sprintf("learns (ends below %s, %.4g)", c.BelowName, c.Below)
	case c.Below > 0:
		return fmt.Sprintf("does not learn (ends at or above %s, %.4g)", c.BelowName, c.Below)
	case c.Solved && learns:
		return fmt.Sprintf("solves the task (ends below %.4g)", runs.SolvedLoss(r.Task, r.Baseline))
	case c.Solved:
		return "does not solve the task"
	case learns:
		return "learns (ends below the baseline)"
	}
	return "does not learn (ends at or above the baseline)"
}

func maxStep(runs []*Run) int {
	n := 0
	for _, r := range runs {
		n = max(n, r.Trainer.Step)
	}
	return n
}
