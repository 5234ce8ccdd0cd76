package notebook

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/claims"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// Judge decides claim c for a notebook's runs by pkg/claims, the rules every report of the
// project uses: c.Learn and c.Fail name models, each matching the runs whose Name is the name
// or starts with it and a space ("lt-ornn" matches "lt-ornn 80"); the runs a name matches are
// the seeds of one run (TrainSeeds' replicas). When c has no horizon (Horizon and Seconds 0),
// the runs are judged at the fewest steps any of them was trained for.
func Judge(c claims.Claim, rs ...*Run) claims.Verdict {
	if c.Reference == "" {
		c.Reference = claims.Baseline
	}
	if c.Horizon == 0 && c.Seconds == 0 {
		c.Horizon = math.MaxInt
		for _, r := range rs {
			c.Horizon = min(c.Horizon, r.Trainer.Step)
		}
		c.Horizon = max(c.Horizon, 1)
	}
	byName := map[string]*claims.Run{}
	for _, name := range slices.Concat(c.Learn, c.Fail) {
		for _, r := range rs {
			if r.Name != name && !strings.HasPrefix(r.Name, name+" ") {
				continue
			}
			cr := byName[name]
			if cr == nil {
				cr = &claims.Run{Name: name, Task: r.Task, Baseline: r.Baseline, Plateau: math.NaN(), EvalBatch: r.Trainer.Config.EvalBatch}
				if vc, ok := r.Trainer.Task.(tasks.VariableCopy); ok {
					cr.Plateau = vc.RecallBaseline()
				}
				byName[name] = cr
			}
			cr.Seeds = append(cr.Seeds, claims.Seed{Seed: r.Trainer.Config.Seed, Log: r.Trainer.Log})
		}
	}
	return claims.Judge(c, byName)
}

// SecondsReached returns the seconds of training that each of rs has reached by the judges'
// count: its steps at its measured time per step (runs.StepSeconds, runs.StepsBought), the
// least over rs, rounded down to a tenth of a second (a verdict names it); NaN when a run is
// too short to time. A claim on a budget of seconds judged at no more than this finds every run
// at its horizon: a notebook's runs train a number of steps, which a faster machine goes
// through in less time than a budget set on a slower one.
func SecondsReached(rs ...*Run) float64 {
	reached := math.Inf(1)
	for _, r := range rs {
		reached = math.Min(reached, float64(r.Trainer.Step)*runs.StepSeconds(r.Trainer.Log))
	}
	if len(rs) == 0 {
		return math.NaN()
	}
	return math.Floor(10*reached) / 10
}

// Verdict writes Judge's verdict for a notebook cell: the paper's words, the outcome with its
// reason, and the rule it applied in one line.
func Verdict(c claims.Claim, rs ...*Run) string {
	v := Judge(c, rs...)
	var b strings.Builder
	fmt.Fprintf(&b, "The paper (%s): %s\n", c.Source, c.Quote)
	fmt.Fprintf(&b, "These runs: %s — %s.\n", strings.ToUpper(v.Outcome.Text()), v.Reason)
	fmt.Fprintf(&b, "The rule: %s\n", rule(c))
	return b.String()
}

// rule says in one line what c's test asks (pkg/claims states the rules in full).
func rule(c claims.Claim) string {
	final := fmt.Sprintf("a seed's final loss is the median of its last %d held-out evaluations; a run's, the median over its seeds", claims.FinalK)
	switch c.LearnTest {
	case claims.Solves:
		return "solving means a final under the solved line (a tenth of the baseline on copy, an MSE of 0.01 on adding); " + final + "."
	case claims.Below:
		return fmt.Sprintf("going below the baseline means a final at least %.0f%% under it (more with few seeds or a small held-out set: three standard errors of the median); %s.", 100*claims.MinMargin, final)
	case claims.Faster:
		return fmt.Sprintf("faster means reaching the solved line in fewer steps over the seeds (one-sided rank test, p < %g), the slower side's median at least %g times the faster's.", claims.Alpha, claims.FasterRatio)
	}
	return fmt.Sprintf("the seeds' finals are compared by a one-sided rank test at p < %g; %s.", claims.Alpha, final)
}
