package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// Outcome is a verdict's decision.
type Outcome string

const (
	Reproduced    Outcome = "reproduced"
	NotReproduced Outcome = "not_reproduced"
	Open          Outcome = "open"
	NotRun        Outcome = "not_run"
)

// Outcomes lists the outcomes in the order tallies give them.
var Outcomes = []Outcome{Reproduced, NotReproduced, Open, NotRun}

// Text is the outcome in words: "reproduced", "not reproduced", "open", "not run".
func (o Outcome) Text() string { return strings.ReplaceAll(string(o), "_", " ") }

// Verdict is a claim judged: its outcome, the statistics of each run and the reason in words.
type Verdict struct {
	Claim   Claim
	Outcome Outcome
	Reason  string
	Runs    []RunStats
	// HoursToGo is the training an open or not-run claim's runs still need to reach the
	// horizon, one run after another, each at its measured speed with its replicas at once; a
	// run not started needs the whole budget of a horizon in seconds (NaN when a run is too new
	// to time, or not started on a horizon in steps; 0 when decided, or when what is left is
	// scoring runs on the test split).
	HoursToGo float64
	// ToTrain names the runs still short of the horizon, not run, or at the horizon and not
	// scored on the test split (ToScore), in the claim's order: those that `longmemory sweep
	// -only` must train or score to decide it (empty when decided).
	ToTrain []string
	// ToScore names the runs at the horizon of an accuracy claim not yet scored on the whole
	// test split there (rule 6).
	ToScore []string
}

// RunStats is what the judge measured of one run.
type RunStats struct {
	Name                            string
	Fail                            bool // the run is on the side the claim says fails
	Test                            Test // the test this run must pass (for the fail side of a comparison: None)
	Seeds                           int
	StepsJudged                     int       // the horizon in steps (with a budget of seconds: the steps it buys)
	Steps                           int       // the fewest steps a seed has at or before the horizon (not counting seeds that diverged)
	Finals                          []float64 // per seed, rule 2 (+Inf: diverged)
	Accuracies                      []float64 // per seed, rule 2, or on the test split when TestSplit (NaN: not a classifier, or not scored)
	TestSplit                       bool      // the claim compares accuracies: Accuracies are on the test split (rule 6)
	Unscored                        int       // with TestSplit, seeds at the horizon not scored on the whole test split there
	PastHorizon                     int       // of the Unscored, seeds trained past the horizon: their kept checkpoint is later
	FinalMedian, FinalMin, FinalMax float64
	Line                            float64 // the line of the run's test: the solved loss, or the reference (with Margin)
	Reference                       float64 // the baseline or the plateau
	Margin                          float64 // rule 3's margin (levels)
	StepsToLine                     []int   // per seed, rule 5: -1 when not reached by the horizon (censored)
	Reached                         int     // seeds that reached the solved line
	Falling                         int     // seeds still falling (rule 7)
	Diverged                        int
	Short                           bool    // a seed has neither reached the horizon nor diverged
	StepSeconds                     float64 // the run's measured time per step, replicas at once
	Hosts                           []string
	Pass                            bool // the run passed its side of the test (for comparisons: every comparison)
	Comparisons                     []Comparison
}

// Comparison is one rank test of a run against a run of the other side.
type Comparison struct {
	Against string
	Test    string // what was compared, in words
	U, P    float64
	// Ratio is, for speed, the other run's median steps to the line over this one's: +Inf when
	// the other's median seed has not reached it, 0 when only this one's has not.
	Ratio float64
	// Medians are the two runs' medians of what was compared, in words (for speed: the median
	// steps to the line, "not reached" when censored).
	Medians [2]string
}

// Judge decides claim c from its runs (by name; a name missing from runs has not been run).
// It reads nothing but its arguments.
func Judge(c Claim, byName map[string]*Run) Verdict {
	v := Verdict{Claim: c}
	var missing, short, unscored []string
	untimed := false
	hours := 0.0
	grid := 1 // speed comparisons time every run on the coarsest run's evaluation steps
	if c.LearnTest == Faster {
		for _, name := range slices.Concat(c.Learn, c.Fail) {
			if r := byName[name]; r != nil {
				grid = max(grid, evalSpacing(r))
			}
		}
	}
	for side, names := range [][]string{c.Learn, c.Fail} {
		for _, name := range names {
			r := byName[name]
			if r == nil {
				missing = append(missing, name)
				v.ToTrain = append(v.ToTrain, name)
				if c.Seconds > 0 {
					hours += c.Seconds / 3600
				} else {
					untimed = true
				}
				continue
			}
			test := c.LearnTest
			if side == 1 {
				test = c.FailTest
			}
			s := measure(c, r, test, side == 1, grid)
			v.Runs = append(v.Runs, s)
			if s.Short {
				short = append(short, fmt.Sprintf("%s (%d of %d steps)", name, s.Steps, s.StepsJudged))
				v.ToTrain = append(v.ToTrain, name)
				switch h := s.StepSeconds * float64(s.StepsJudged-s.Steps) / 3600; {
				case !math.IsNaN(h) && s.StepsJudged > 0:
					hours += h
				case c.Seconds > 0: // too new to time: what is left of the budget
					hours += max(0, c.Seconds-r.trainedSeconds()) / 3600
				default:
					untimed = true
				}
			}
			if s.Unscored > 0 {
				text := fmt.Sprintf("%s (%d of %d seeds", name, s.Unscored, s.Seeds)
				if s.PastHorizon > 0 {
					text += fmt.Sprintf("; %d trained past the horizon, whose kept checkpoint is later: score one of the horizon", s.PastHorizon)
				}
				unscored = append(unscored, text+")")
				if !s.Short {
					v.ToTrain, v.ToScore = append(v.ToTrain, name), append(v.ToScore, name)
				}
			}
		}
	}
	v.HoursToGo = hours
	if untimed {
		v.HoursToGo = math.NaN()
	}
	var hosts []string
	for _, s := range v.Runs {
		hosts = union(hosts, s.Hosts)
	}
	timed := ""
	if c.Seconds > 0 && len(hosts) > 0 {
		timed = "; timed on " + strings.Join(hosts, " and ")
	}
	switch {
	case len(missing) > 0:
		v.Outcome = NotRun
		v.Reason = "not run yet: " + strings.Join(missing, ", ")
		if !untimed {
			v.Reason += "; " + HoursText(v.HoursToGo)
		}
		return v
	case len(short) > 0 || len(unscored) > 0:
		var pending []string
		if len(short) > 0 {
			pending = append(pending, fmt.Sprintf("short of the horizon of %s: %s", c.HorizonText(), strings.Join(short, ", ")))
		}
		if len(unscored) > 0 {
			pending = append(pending, "not scored on the test split at the horizon (longmemory eval -save): "+strings.Join(unscored, ", "))
		}
		if failed := failedAtHorizon(c, v.Runs); len(failed) > 0 {
			v.Outcome, v.HoursToGo, v.ToTrain, v.ToScore = NotReproduced, 0, nil, nil
			rest := "the runs short of the horizon do: " + strings.Join(short, ", ")
			if len(unscored) > 0 {
				rest = "the runs still pending do: " + strings.Join(pending, "; ")
			}
			v.Reason = fmt.Sprintf("at %s: %s (decided whatever %s)%s", c.HorizonText(), strings.Join(failed, "; "), rest, timed)
			return v
		}
		v.Outcome = Open
		v.Reason = strings.Join(pending, "; ")
		if len(short) > 0 {
			v.Reason += "; " + HoursText(v.HoursToGo)
		}
		return v
	}
	// Comparisons: each run of the learn side against each of the fail side timed on its
	// machine (mixed: the pairs that were not).
	var mixed []string
	if c.LearnTest.comparative() {
		for i := range v.Runs {
			if v.Runs[i].Fail {
				continue
			}
			for j := range v.Runs {
				if !v.Runs[j].Fail {
					continue
				}
				if c.twoMachines(v.Runs[i], v.Runs[j]) {
					mixed = append(mixed, fmt.Sprintf("%s on %s against %s on %s", v.Runs[i].Name, strings.Join(v.Runs[i].Hosts, " and "), v.Runs[j].Name, strings.Join(v.Runs[j].Hosts, " and ")))
					continue
				}
				v.Runs[i].Comparisons = append(v.Runs[i].Comparisons, compare(c.LearnTest, v.Runs[i], v.Runs[j]))
			}
		}
	}
	var failed, passed []string
	for i := range v.Runs {
		s := &v.Runs[i]
		s.Pass = pass(*s)
		if s.Test == None {
			continue
		}
		if s.Pass {
			passed = append(passed, s.describe())
		} else {
			failed = append(failed, s.describe())
		}
	}
	switch {
	case len(failed) == 0 && len(mixed) > 0:
		v.Outcome, v.HoursToGo = Open, math.NaN()
		v.Reason = fmt.Sprintf("at %s, comparisons of runs timed on two machines, which seconds cannot decide: %s; train them on one", c.HorizonText(), strings.Join(mixed, "; "))
		return v
	case len(failed) == 0:
		v.Outcome = Reproduced
		v.Reason = "at " + c.HorizonText() + ": " + strings.Join(passed, "; ")
	default:
		v.Outcome = NotReproduced
		v.Reason = "at " + c.HorizonText() + ": " + strings.Join(failed, "; ")
	}
	v.Reason += timed
	return v
}

// failedAtHorizon returns, described, the runs at the horizon that fail their side whatever the
// runs still short of it do, and marks them failed in rs: a run that fails its own test, or, on a
// comparison, one that fails a comparison with a run of the other side that is at the horizon
// too and timed on its machine (a comparative side passes only when every comparison does, and
// a comparison of two runs at the horizon is final). The comparisons are kept only in the runs
// that fail.
func failedAtHorizon(c Claim, rs []RunStats) []string {
	var failed []string
	for i := range rs {
		s := rs[i]
		if s.pending() || s.Test == None {
			continue
		}
		if !c.LearnTest.comparative() {
			rs[i].Pass = pass(s)
			if !rs[i].Pass {
				failed = append(failed, s.describe())
			}
			continue
		}
		s.Comparisons = nil
		for _, o := range rs {
			if o.Fail && !o.pending() && !c.twoMachines(s, o) {
				s.Comparisons = append(s.Comparisons, compare(c.LearnTest, s, o))
			}
		}
		if s.Pass = pass(s); !s.Pass {
			rs[i] = s
			failed = append(failed, s.describe())
		} else {
			rs[i].Pass = true // its comparisons so far are not kept: the others may add to them
		}
	}
	return failed
}

// pending reports whether a run's side cannot be decided yet: it is short of the horizon, or
// not scored on the test split there (rule 6).
func (s RunStats) pending() bool { return s.Short || s.Unscored > 0 }

// twoMachines reports whether c compares in seconds runs a and b that were not both timed on
// one machine (rule 1).
func (c Claim) twoMachines(a, b RunStats) bool {
	return c.Seconds > 0 && len(union(a.Hosts, b.Hosts)) > 1
}

// union returns a with the elements of b it lacks appended.
func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}

// measure reads r at c's horizon for test, timing steps to the line on multiples of grid.
func measure(c Claim, r *Run, test Test, fail bool, grid int) RunStats {
	s := RunStats{Name: r.Name, Fail: fail, Test: test, Seeds: len(r.Seeds), StepSeconds: r.StepSeconds(), Hosts: r.Hosts,
		TestSplit: c.LearnTest == MoreAccurate}
	if fail && c.LearnTest.comparative() {
		s.Test = None
	}
	s.StepsJudged = c.Horizon
	if c.Seconds > 0 {
		s.StepsJudged = runs.StepsBought(c.Seconds, s.StepSeconds)
	}
	s.Reference = r.Baseline
	if c.Reference == Plateau {
		s.Reference = r.Plateau
	}
	solved := runs.SolvedLoss(r.Task, s.Reference)
	s.Margin = Margin(r.Task, r.EvalBatch, len(r.Seeds))
	s.Line = solved
	if test == Below || test == NotBelow || test == Above {
		s.Line = s.Reference
	}
	s.Steps = math.MaxInt
	for _, seed := range r.Seeds {
		h := s.StepsJudged
		if h == 0 {
			h = math.MaxInt
		}
		e := cut(seed.Log, h)
		loss, acc := e.final()
		if s.TestSplit && !e.diverged { // rule 6: the accuracy on the test split, scored at the seed's final step
			acc = math.NaN()
			switch t := seed.Test; {
			case t != nil && t.Step == e.last && t.Split > 0 && t.Examples == t.Split && t.Accuracy != nil:
				acc = *t.Accuracy
			case e.last >= s.StepsJudged && s.StepsJudged > 0:
				s.Unscored++
				if n := len(seed.Log); n > 0 && seed.Log[n-1].Step > e.last {
					s.PastHorizon++
				}
			}
		}
		s.Finals, s.Accuracies = append(s.Finals, loss), append(s.Accuracies, acc)
		if e.diverged {
			s.Diverged++
		} else {
			s.Steps = min(s.Steps, e.last)
			if e.last < s.StepsJudged || s.StepsJudged == 0 {
				s.Short = true // a seed at the horizon with no evaluation is not short: its final is NaN
			}
		}
		at := e.stepsTo(solved, grid)
		s.StepsToLine = append(s.StepsToLine, at)
		if at >= 0 {
			s.Reached++
		}
		if e.falling(s.StepsJudged) && !(loss < solved) { // a solved seed's last decimals are not learning
			s.Falling++
		}
	}
	if s.Steps == math.MaxInt {
		s.Steps = s.StepsJudged // every seed diverged
	}
	if len(r.Seeds) == 0 {
		s.Short, s.Steps = true, 0
	}
	s.FinalMedian = runs.Median(s.Finals)
	s.FinalMin, s.FinalMax = math.NaN(), math.NaN()
	if evaluated := slices.DeleteFunc(slices.Clone(s.Finals), math.IsNaN); len(evaluated) > 0 {
		// A seed stopped before its first evaluation has no final; the range, like the
		// median, is over the seeds that have one.
		s.FinalMin, s.FinalMax = slices.Min(evaluated), slices.Max(evaluated)
	}
	return s
}

// pass decides a run's side of the test (rules 3–6).
func pass(s RunStats) bool {
	switch s.Test {
	case Solves:
		return s.FinalMedian < s.Line
	case NoSolve:
		return s.Reached == 0
	case Below:
		return s.FinalMedian < (1-s.Margin)*s.Line
	case NotBelow:
		return !(s.FinalMedian < (1-s.Margin)*s.Line)
	case Above:
		return s.FinalMedian > (1+s.Margin)*s.Line
	case Faster, Lower, MoreAccurate:
		if s.Test == Faster && 2*s.Reached < s.Seeds {
			return false
		}
		for _, c := range s.Comparisons {
			if !(c.P < Alpha) || s.Test == Faster && !(c.Ratio >= FasterRatio) {
				return false
			}
		}
		return true
	}
	return true
}

// compare runs rule 5 or 6's one-sided test of a (the learn side) against b.
func compare(t Test, a, b RunStats) Comparison {
	var x, y []float64
	var what string
	switch t {
	case Faster:
		times := func(s RunStats) (v []float64) {
			for _, n := range s.StepsToLine {
				if n < 0 {
					v = append(v, math.Inf(1))
				} else {
					v = append(v, float64(n))
				}
			}
			return v
		}
		x, y, what = times(a), times(b), "steps to the solved line, censored at the horizon (one-sided Mann–Whitney, Gehan)"
	case Lower:
		x, y, what = a.Finals, b.Finals, "final losses (one-sided Mann–Whitney)"
	case MoreAccurate:
		for _, v := range a.Accuracies {
			x = append(x, -v)
		}
		for _, v := range b.Accuracies {
			y = append(y, -v)
		}
		what = "final accuracies (one-sided Mann–Whitney)"
		if a.TestSplit {
			what = "accuracies on the test split (one-sided Mann–Whitney)"
		}
	}
	u, p := MannWhitney(x, y)
	c := Comparison{Against: b.Name, Test: what, U: u, P: p}
	switch t {
	case Faster:
		c.Medians = [2]string{medianSteps(a.StepsToLine), medianSteps(b.StepsToLine)}
		switch slow, fast := runs.Median(y), runs.Median(x); {
		case math.IsInf(slow, 1): // the slow run's median seed has not reached the line
			c.Ratio = math.Inf(1)
		case math.IsInf(fast, 1):
			c.Ratio = 0
		default:
			c.Ratio = slow / fast
		}
	case Lower:
		c.Medians = [2]string{fmt.Sprintf("%.4f", a.FinalMedian), fmt.Sprintf("%.4f", b.FinalMedian)}
	case MoreAccurate:
		c.Medians = [2]string{fmt.Sprintf("%.1f%%", 100*runs.Median(a.Accuracies)), fmt.Sprintf("%.1f%%", 100*runs.Median(b.Accuracies))}
	}
	return c
}

// describe says in words how a run fared on its test.
func (s RunStats) describe() string {
	var b strings.Builder
	verb := map[bool]string{true: "passes", false: "fails"}[s.Pass]
	switch s.Test {
	case Solves:
		fmt.Fprintf(&b, "%s %s \"solves\": final %s against the solved line %.4f", s.Name, verb, s.finalText(), s.Line)
	case NoSolve:
		fmt.Fprintf(&b, "%s %s \"does not solve\": %d of %d seeds reach the solved line %.4f (final %s)", s.Name, verb, s.Reached, s.Seeds, s.Line, s.finalText())
	case Below:
		fmt.Fprintf(&b, "%s %s \"below\": final %s against %.4f, %.0f%% under the line %.4f", s.Name, verb, s.finalText(), (1-s.Margin)*s.Line, 100*s.Margin, s.Line)
	case NotBelow:
		fmt.Fprintf(&b, "%s %s \"not below\": final %s against %.4f, %.0f%% under the line %.4f", s.Name, verb, s.finalText(), (1-s.Margin)*s.Line, 100*s.Margin, s.Line)
	case Above:
		fmt.Fprintf(&b, "%s %s \"above\" (blows up): final %s against %.4f, %.0f%% over the line %.4f", s.Name, verb, s.finalText(), (1+s.Margin)*s.Line, 100*s.Margin, s.Line)
	case Faster, Lower, MoreAccurate:
		fmt.Fprintf(&b, "%s %s \"%s\"", s.Name, verb, s.Test)
		if s.Test == Faster {
			fmt.Fprintf(&b, " (%d of %d seeds reach the solved line %.4f, median step %s)", s.Reached, s.Seeds, s.Line, medianSteps(s.StepsToLine))
		}
		for _, c := range s.Comparisons {
			ratio := ""
			if s.Test == Faster && !math.IsNaN(c.Ratio) && !math.IsInf(c.Ratio, 0) {
				ratio = fmt.Sprintf(", %.1f times as many where at least %g are asked", c.Ratio, FasterRatio)
			}
			fmt.Fprintf(&b, ", against %s (median %s against %s%s, %s)", c.Against, c.Medians[0], c.Medians[1], ratio, pText(c.P))
		}
	}
	if s.Falling > 0 {
		fmt.Fprintf(&b, "; still falling in %d of %d seeds", s.Falling, s.Seeds)
	}
	if s.Diverged > 0 {
		fmt.Fprintf(&b, "; %d of %d diverged", s.Diverged, s.Seeds)
	}
	return b.String()
}

// pText writes a p-value to three decimals, and one that rounds to zero as "p < 0.001".
func pText(p float64) string {
	if p < 0.0005 {
		return "p < 0.001"
	}
	return fmt.Sprintf("p = %.3f", p)
}

func (s RunStats) finalText() string {
	return fmt.Sprintf("%.4f [%.4f–%.4f]", s.FinalMedian, s.FinalMin, s.FinalMax)
}

// medianSteps is the median of steps-to-line with the censored ones after every other ("—"
// when the median is censored).
func medianSteps(v []int) string {
	f := make([]float64, len(v))
	for i, n := range v {
		f[i] = float64(n)
		if n < 0 {
			f[i] = math.Inf(1)
		}
	}
	m := runs.Median(f)
	if math.IsInf(m, 1) || math.IsNaN(m) {
		return "not reached"
	}
	return fmt.Sprintf("%.0f", m)
}

// trainedSeconds is the wall time run r has trained (runs.TrainedSeconds).
func (r *Run) trainedSeconds() float64 {
	logs := make([][]train.Record, len(r.Seeds))
	for i, sd := range r.Seeds {
		logs[i] = sd.Log
	}
	return runs.TrainedSeconds(logs...)
}

// HoursText writes the training time an open or not-run claim still needs.
func HoursText(h float64) string {
	switch {
	case math.IsNaN(h):
		return "a time not measured yet (too few steps logged to time a run)"
	case h < 1:
		return fmt.Sprintf("%.0f min more of training here", 60*h)
	}
	return fmt.Sprintf("%.1f h more of training here", h)
}
