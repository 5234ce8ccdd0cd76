package main

import (
	"bufio"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// verdictTolerance is the relative margin around the baseline within which a loss counts as
// "at the baseline" (as notebook.Tolerance).
const verdictTolerance = 0.02

// groupResult is what a run (one directory, single or multi-seed) shows at its end.
type groupResult struct {
	name           string
	seeds, steps   int
	seconds        float64   // the replicas' training times added
	slowest        float64   // the longest training time of a replica: the run's wall time when its replicas train at once (train -seeds' default)
	stepSeconds    float64   // the run's time per step: the median over its replicas of runs.StepSeconds (pauses left out), its replicas at once
	budgetSteps    int       // with a budget of seconds: the steps it buys at stepSeconds, where the logs were cut
	finals         []float64 // last held-out loss of each replica
	task           string    // experiments.Task.Kind, from the replicas' run.json
	reached        int       // replicas whose best held-out loss (runs.HeldOut) is below the threshold
	bestMedian     float64   // the median over the replicas of their best held-out loss (+Inf for one not scored yet)
	bestBelow      bool      // bestMedian is below the threshold
	baseline       float64
	status         string // "learns", "still falling", "flat" or notScored
	falling        int    // the replicas still falling (lost more than flatDrop over the second half)
	median, lo, hi float64
	accs           []float64 // last held-out accuracy of each replica (NaN for regression)
	diverged       int       // replicas whose log ends in a divergence (final loss +Inf)
	unscored       []string  // replicas with no held-out loss yet, left out
	hosts          []string  // the machines that trained its replicas (runs.Span.Host), in order of appearance
}

// A replica is flat when it lost at most flatDrop of its held-out loss over the second half
// of its training, measured by secondHalfDrop over windows of up to runs.EvalWindow evaluations.
const flatDrop = 0.05

// secondHalfDrop returns the share of its held-out loss a replica lost over the second half of
// its training, (a − b)/a: b is the median of the last k evaluations and a that of the k that
// end at the middle step, k the evaluations after the middle, at most runs.EvalWindow. A median,
// because one evaluation (a batch of 100 held-out sequences) is noisy: a single spike
// at the middle would otherwise read as a fall.
func secondHalfDrop(steps, loss []float64) float64 {
	mid := 0 // the last evaluation at or before the middle step
	for i, s := range steps {
		if s <= steps[len(steps)-1]/2 {
			mid = i
		}
	}
	k := max(1, min(runs.EvalWindow, len(loss)-1-mid))
	a, b := runs.Median(loss[max(0, mid+1-k):mid+1]), runs.Median(loss[len(loss)-k:])
	return (a - b) / a
}

// notScored is the status of a run none of whose replicas has a held-out loss yet (its
// steps are those its replicas have logged, 0 before the first log).
const notScored = "no held-out loss yet"

// readGroup reads the replicas of dir (or dir itself) and classifies the run against
// threshold (a loss): "learns" if the median final held-out loss is below it; otherwise
// "still falling" if any replica lost more than flatDrop of its loss over the second half of
// its training (secondHalfDrop), else "flat" (every replica flat: issue #12's evidence that a
// longer run would not learn); notScored if no replica has a held-out loss yet. A replica whose
// log ends in a divergence (held-out loss +Inf: train.Record) counts with a final loss of
// +Inf and is done: its steps do not hold the run short of its horizon (a run all of whose
// replicas diverged is "flat"). A replica with no held-out loss yet is left out of the loss
// (named), and its steps hold the run short of its horizon.
//
// With budget > 0 (seconds of training) every replica's log is first cut after the steps
// that budget buys at the run's speed (the median over its replicas of runs.StepSeconds, its
// replicas trained at once; the median, as a replica that diverged early logs a few steps
// of another pace), so that runs of different models compare at equal training time. With
// stepBudget > 0 (a budget of steps) it is cut after that step, so that a run trained on
// beyond the budget is judged at it.
func readGroup(dir string, threshold func(task string, baseline float64) float64, budget float64, stepBudget int) (groupResult, error) {
	g := groupResult{name: filepath.Base(dir), steps: math.MaxInt}
	type replica struct {
		name string
		meta runs.Meta
		log  []train.Record // nil for a replica just starting: no run.json or log.csv yet
	}
	var reps []replica
	var speeds []float64
	for _, rep := range runs.RunDirs(dir) {
		meta, log, err := runs.Read(rep)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return g, err
		}
		reps = append(reps, replica{filepath.Base(rep), meta, log})
		speeds = append(speeds, runs.StepSeconds(log))
		spans := meta.Spans
		if len(spans) == 0 && len(log) > 0 { // a run.json older than spans
			spans = []runs.Span{{}}
		}
		for _, sp := range spans {
			h := cmp.Or(sp.Host, "a machine not recorded")
			if !slices.Contains(g.hosts, h) {
				g.hosts = append(g.hosts, h)
			}
		}
	}
	if g.stepSeconds = runs.Median(speeds); math.IsNaN(g.stepSeconds) {
		g.stepSeconds = 0
	}
	cut := stepBudget
	if budget > 0 && g.stepSeconds > 0 {
		g.budgetSteps = max(1, int(budget/g.stepSeconds))
		cut = g.budgetSteps
	}
	if cut > 0 {
		for i, r := range reps {
			n := 0
			for n < len(r.log) && r.log[n].Step <= cut {
				n++
			}
			reps[i].log = r.log[:n]
		}
	}
	var drops, bests []float64
	lastDiverged, unscoredSteps := 0, math.MaxInt
	for _, r := range reps {
		g.task = cmp.Or(g.task, r.meta.Preset.Task.Kind)
		steps, loss := runs.LossCurve(r.log, false)
		if len(loss) == 0 {
			g.unscored = append(g.unscored, r.name)
			logged := 0
			if n := len(r.log); n > 0 {
				logged = r.log[n-1].Step
			}
			unscoredSteps = min(unscoredSteps, logged)
			continue
		}
		g.seeds++
		g.baseline = r.meta.Baseline
		last := r.log[len(r.log)-1]
		g.seconds, g.slowest = g.seconds+last.Seconds, max(g.slowest, last.Seconds)
		final := loss[len(loss)-1]
		_, best, acc := runs.HeldOut(r.log)
		g.finals, g.accs, bests = append(g.finals, final), append(g.accs, acc), append(bests, best)
		if math.IsInf(final, 1) {
			g.accs[len(g.accs)-1] = 0 // a classifier that diverged gets nothing right
			g.diverged++
			lastDiverged = max(lastDiverged, last.Step)
			continue
		}
		g.steps = min(g.steps, last.Step)
		drops = append(drops, secondHalfDrop(steps, loss))
	}
	if g.seeds == 0 { // just started, or trained again from step 0 (train -restart): nothing to judge yet
		g.status, g.steps = notScored, 0
		g.median, g.lo, g.hi = math.NaN(), math.NaN(), math.NaN()
		for _, r := range reps {
			g.baseline = cmp.Or(g.baseline, r.meta.Baseline)
			if n := len(r.log); n > 0 {
				g.steps = max(g.steps, r.log[n-1].Step)
			}
		}
		return g, nil
	}
	if g.steps == math.MaxInt { // every replica diverged
		g.steps = lastDiverged
	}
	g.steps = min(g.steps, unscoredSteps) // a replica not scored yet holds the run short of its horizon
	g.median, g.lo, g.hi = runs.Median(g.finals), slices.Min(g.finals), slices.Max(g.finals)
	for range g.unscored { // not scored yet: not below anything yet
		bests = append(bests, math.Inf(1))
	}
	g.bestMedian = runs.Median(bests)
	g.bestBelow = g.bestMedian < threshold(g.task, g.baseline)
	for _, b := range bests {
		if b < threshold(g.task, g.baseline) {
			g.reached++
		}
	}
	for _, d := range drops {
		if d > flatDrop {
			g.falling++
		}
	}
	switch {
	case g.median < threshold(g.task, g.baseline):
		g.status = "learns"
	case g.falling > 0:
		g.status = "still falling"
	default:
		g.status = "flat"
	}
	return g, nil
}

// trainingTime adds the hours the runs of a claim still need (hoursTo), counting apart the
// runs whose logs are too short to time.
type trainingTime struct {
	hours   float64
	untimed int
}

func (t *trainingTime) add(h float64) {
	if math.IsNaN(h) {
		t.untimed++
	} else {
		t.hours += h
	}
}

func (t trainingTime) String() string {
	switch {
	case t.untimed == 0:
		return hours(t.hours) + " more of training here"
	case t.hours == 0:
		return "a time not measured yet (too few steps logged to time it)"
	}
	return fmt.Sprintf("%s more of training here, and a time not measured yet for %d run(s) with too few steps logged to time", hours(t.hours), t.untimed)
}

// oneAfterAnother says how an open verdict's hours are counted: the training time every run of
// the claim short of its horizon still needs, added (the run scripts train one run at a time),
// each at its measured speed with its replicas at once.
const oneAfterAnother = "the claim's runs one after another, each with its replicas at once, at its median speed so far"

// hoursTo returns the training time, in hours, g needs from its steps to horizon at its
// measured speed (its replicas at once); 0 when it is there, NaN when its log is too short to
// time (trainingTime counts those apart).
func (g groupResult) hoursTo(horizon int) float64 {
	if horizon <= g.steps {
		return 0
	}
	if g.stepSeconds <= 0 { // too few records to time
		return math.NaN()
	}
	return g.stepSeconds * float64(horizon-g.steps) / 3600
}

// statusText is g.status, with the replicas still falling when not all are, and those that
// diverged, if any.
func (g groupResult) statusText() string {
	text := g.status
	if g.status == "still falling" && g.falling < g.seeds {
		text = fmt.Sprintf("still falling in %d of %d seeds", g.falling, g.seeds)
	}
	if g.diverged > 0 {
		text += fmt.Sprintf("; %d of %d diverged", g.diverged, g.seeds)
	}
	return text
}

// describe says what g is made of, for the runs column.
func (g groupResult) describe() string {
	if g.status == notScored {
		return fmt.Sprintf("%s: %d seed(s), none with a held-out loss yet (%d steps logged)", g.name, len(g.unscored), g.steps)
	}
	text := fmt.Sprintf("%s: %d seeds × %d steps, %.0f s of training for the slowest replica (%.0f s the replicas' times added)", g.name, g.seeds, g.steps, g.slowest, g.seconds)
	if g.budgetSteps > 0 {
		text += fmt.Sprintf("; the budget buys %d steps at %.2f s a step", g.budgetSteps, g.stepSeconds)
		if len(g.hosts) > 0 {
			text += ", timed on " + strings.Join(g.hosts, " and ")
		}
	}
	if len(g.unscored) > 0 {
		text += fmt.Sprintf("; not yet scored, left out: %s", strings.Join(g.unscored, ", "))
	}
	return text
}

// verdictCmd prints docs/RESULTS.md's verdict table from a claims file and the run
// directories it names. Each line of the claims file (tab-separated; # starts a comment):
//
//	statement	learn-dirs	fail-dirs	criterion	[horizon]
//
// statement is the paper's claim, quoted; learn-dirs and fail-dirs are comma-separated run
// directories (relative to -runs) of the models the paper says learn and do not; criterion
// is "baseline" (learning means ending below the baseline) or "solved" (below runs.SolvedLoss);
// horizon, optional, is the number of steps a run gets to decide the claim (the paper's iterations where it states them:
// a run still falling there asks for a longer one), a budget of steps written with " steps" ("3000 steps": each run is judged
// at that step, and a run that should learn and has not by then does not reproduce the claim), or a budget of seconds of
// training written with an s ("1500s"): each run is then judged at the steps that budget buys at its own speed (readGroup),
// and, as with a budget of steps, a run that should learn and has not when the budget is spent does not reproduce the claim.
// The hours a run still needs are at its measured speed (the median of its replicas' runs.StepSeconds, its replicas at once);
// an open claim's hours add those of all its runs short of their horizons, which the run scripts train one after another;
// when its learn-runs are all at their horizon and one is still falling, those of as many steps again for each of its runs.
// A claim is reproduced when every learn-run learns and no fail-run does; not reproduced when
// a learn-run is flat (every replica lost at most 5% of its loss over the second half of
// training, readGroup) at its horizon or a fail-run learns (under "solved", also a fail-run for
// which the median over its seeds of the best loss each held over runs.EvalWindow evaluations running
// (runs.HeldOut) is below the solved loss, whatever it ends at: the claims of this kind say such a
// model never finds the solution, or only after a very long time); open otherwise (a learn-run still falling,
// or flat before its horizon: the verdict gives the steps to the horizon and the hours they
// take at the runs' measured speed; or a fail-run that has not learned or solved it but is short of its
// horizon); not run when a run directory does not exist yet. Criterion "outperforms" compares
// classifiers instead (pixel MNIST): the claim is that every learn-run ends with a higher
// median held-out accuracy than every fail-run (see outperforms). Under the table: the tally of
// the verdicts, and a list of the open claims whose machine time (the training their runs have had, one
// after another, and the training their verdict names) is at most maxClaimHours.
func verdictCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verdict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runsDir := fs.String("runs", "docs/runs", "directory holding the run directories the claims file names")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("verdict: give one claims file (statement, learn-dirs, fail-dirs, criterion; tab-separated)")
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("verdict: %w", err)
	}
	defer f.Close()
	fmt.Fprintln(stdout, "| claim | runs | result: median final held-out loss [min–max] over seeds | verdict |")
	fmt.Fprintln(stdout, "|---|---|---|---|")
	var tally [4]int    // reproduced, not reproduced, open, not run: the verdicts' first words
	var within []string // the open claims whose machine time (their runs' training had and still named) is at most maxClaimHours
	count := func(verdict string) {
		for i, kind := range []string{"**reproduced**", "**not reproduced**", "**open**", "**not run**"} {
			if strings.HasPrefix(verdict, kind) {
				tally[i]++
			}
		}
	}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Split(text, "\t")
		if len(cols) != 4 && len(cols) != 5 {
			return fmt.Errorf("verdict: %s:%d: %d tab-separated fields, want 4 or 5 (statement, learn-dirs, fail-dirs, criterion[, horizon])", fs.Arg(0), line, len(cols))
		}
		horizon, budget, stepBudget := 0, 0.0, false // steps (a budget of them, if stepBudget), or seconds of training
		if len(cols) == 5 {
			var err error
			if horizon, budget, stepBudget, err = parseHorizon(cols[4]); err != nil {
				return fmt.Errorf("verdict: %s:%d: %w", fs.Arg(0), line, err)
			}
		}
		if cols[3] == "outperforms" {
			if budget > 0 || stepBudget {
				return fmt.Errorf("verdict: %s:%d: horizon %q: criterion outperforms takes a number of steps", fs.Arg(0), line, cols[4])
			}
			runsText, results, verdict, cost, err := outperforms(*runsDir, cols[1], cols[2], horizon)
			if err != nil {
				return fmt.Errorf("verdict: %s:%d: %w", fs.Arg(0), line, err)
			}
			if strings.HasPrefix(verdict, "**open**") && cost.untimed == 0 && cost.hours <= maxClaimHours {
				within = append(within, fmt.Sprintf("%s (%s)", claimLabel(cols[0]), hours(cost.hours)))
			}
			fmt.Fprintf(stdout, "| %s | %s | %s | %s |\n", cols[0], runsText, results, verdict)
			count(verdict)
			continue
		}
		threshold := map[string]func(string, float64) float64{
			"baseline": func(_ string, b float64) float64 { return (1 - verdictTolerance) * b },
			"solved":   runs.SolvedLoss,
		}[cols[3]]
		if threshold == nil {
			return fmt.Errorf("verdict: %s:%d: criterion %q, want baseline, solved or outperforms", fs.Arg(0), line, cols[3])
		}
		// foundIt: under "solved", a run the claim says does not solve the task (never, or only after
		// a very long time) refutes it once the median over its seeds of the best loss each held
		// (runs.HeldOut) is below the solved loss, whatever it ends at.
		foundIt := func(g groupResult) bool { return cols[3] == "solved" && g.bestBelow }
		var results, runsText, missing []string
		reproduced, refuted := true, false
		spent := 0.0                          // seconds: the training the claim's runs have had, one after another, each with its replicas at once
		var unfinished []string               // runs that should not learn, short of their horizon
		var toGo trainingTime                 // the training the claim's runs still need: each run short of its horizon, one after another
		var again trainingTime                // the runs at their horizon, not decided: as many steps again, one after another
		falling := 0                          // the steps of the learn-runs that have not learned yet (the most)
		shortest := math.MaxInt               // the steps of the learn-runs short of their horizon, not learned yet (the fewest)
		fallingAt := false                    // a learn-run is at its horizon, still falling
		learnPending := false                 // a learn-run has not learned yet
		var budgetShort, budgetSpent []string // with a budget of seconds: learn-runs short of it; with a budget of seconds or steps: at it, not learned
		for i, list := range cols[1:3] {
			learn := i == 0
			for _, name := range strings.Split(list, ",") {
				if name = strings.TrimSpace(name); name == "" {
					continue
				}
				dir := filepath.Join(*runsDir, name)
				if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
					missing = append(missing, name)
					continue
				}
				cut := 0
				if stepBudget {
					cut = horizon
				}
				g, err := readGroup(dir, threshold, budget, cut)
				if err != nil {
					return fmt.Errorf("verdict: %s:%d: %w", fs.Arg(0), line, err)
				}
				if cols[3] == "solved" && g.task == "" && g.status != notScored {
					return fmt.Errorf("verdict: %s:%d: %s: its run.json names no task (Preset.Task.Kind), which criterion solved needs", fs.Arg(0), line, dir)
				}
				h := horizon // this run's horizon in steps: with a budget of seconds, the steps it buys at its speed
				if budget > 0 {
					h = g.budgetSteps
					if h == 0 { // too few records to measure a speed: short, by an unknown amount
						h = g.steps + 1
					}
				}
				runsText = append(runsText, g.describe())
				spent += g.stepSeconds * float64(g.steps) // at the pace hoursTo assumes: pauses and compilations left out
				if g.status == notScored {
					results = append(results, fmt.Sprintf("%s: %s (baseline %.4f)", g.name, notScored, g.baseline))
				} else {
					status := g.statusText()
					if !learn && foundIt(g) && g.status != "learns" {
						status += fmt.Sprintf("; its best (a median of %d evaluations running) below the solved loss in %d of %d seeds, median %.4f",
							runs.EvalWindow, g.reached, g.seeds+len(g.unscored), g.bestMedian)
					}
					results = append(results, fmt.Sprintf("%s **%.4f** [%.4f–%.4f] (%s; baseline %.4f)", g.name, g.median, g.lo, g.hi, status, g.baseline))
				}
				// stopped before its horizon (a flat curve decides nothing yet), or no held-out loss yet
				// (within the budget of seconds, if it has trained through it: that decides)
				short := h > g.steps || (g.status == notScored && !(budget > 0 && g.budgetSteps > 0 && g.steps >= h))
				switch {
				case learn && g.status == "flat" && !short, !learn && (g.status == "learns" || foundIt(g)):
					refuted, reproduced = true, false
				case !learn && short:
					reproduced = false // not learning yet decides nothing before its horizon
					if h > g.steps {
						unfinished = append(unfinished, fmt.Sprintf("%s (%d of %d steps)", g.name, g.steps, h))
						toGo.add(g.hoursTo(h))
					} else { // no horizon: waits for its first held-out loss
						unfinished = append(unfinished, fmt.Sprintf("%s (%s)", g.name, notScored))
					}
				case learn && g.status != "learns":
					reproduced, learnPending = false, true
					falling = max(falling, g.steps)
					if short {
						toGo.add(g.hoursTo(h))
						shortest = min(shortest, g.steps)
					} else if !stepBudget { // still falling at its horizon: the next stretch as long as the horizon
						again.add(g.hoursTo(g.steps + h))
						fallingAt = true
					}
					switch {
					case stepBudget && !short:
						budgetSpent = append(budgetSpent, fmt.Sprintf("%s (at step %d)", g.name, h))
					case budget > 0 && g.budgetSteps == 0:
						budgetShort = append(budgetShort, fmt.Sprintf("%s (%d steps, too few to measure its speed)", g.name, g.steps))
					case budget > 0 && short:
						budgetShort = append(budgetShort, fmt.Sprintf("%s (%d of the %d steps the budget buys at its speed)", g.name, g.steps, h))
					case budget > 0 && g.status == notScored:
						budgetSpent = append(budgetSpent, fmt.Sprintf("%s (%d steps at its speed, no held-out loss within them)", g.name, h))
					case budget > 0:
						budgetSpent = append(budgetSpent, fmt.Sprintf("%s (%d steps at its speed)", g.name, h))
					}
				case !learn: // at its horizon, not learned: trained on as long as the others (equal steps)
					again.add(g.hoursTo(g.steps + h))
				}
			}
		}
		verdict := "**open**: a run that should learn is still falling; longer runs decide"
		need := toGo // the training the open verdict names
		if horizon == 0 && budget == 0 {
			need.untimed++ // no horizon: no hours to name
		}
		switch {
		case !learnPending && len(unfinished) > 0:
			verdict = fmt.Sprintf("**open**: runs that should not learn have not reached their horizon: %s; %s (%s)", strings.Join(unfinished, ", "), toGo, oneAfterAnother)
		case len(budgetSpent) > 0: // one learn-run has failed within the budget, whatever the others do
			spentText := fmt.Sprintf("%.0f s", budget)
			if stepBudget {
				spentText = fmt.Sprintf("%d steps", horizon)
			}
			verdict = fmt.Sprintf("**not reproduced** within the budget of %s: still falling when it is spent, %s", spentText, strings.Join(budgetSpent, ", "))
		case len(budgetShort) > 0:
			verdict = fmt.Sprintf("**open**: a run that should learn has not yet, short of the budget of %.0f s: %s; %s (%s)", budget, strings.Join(budgetShort, ", "), toGo, oneAfterAnother)
		case shortest < math.MaxInt:
			verdict = fmt.Sprintf("**open**: a run that should learn has not yet after %d steps; the horizon of %d steps would take %s (%s)", shortest, horizon, toGo, oneAfterAnother)
			if fallingAt { // and one at it is still falling: as many steps again for each run at it
				verdict += fmt.Sprintf("; a run that should learn is still falling at it: another %d steps of each run at it would take %s", horizon, again)
				need.hours, need.untimed = need.hours+again.hours, need.untimed+again.untimed
			}
		case horizon > 0:
			again.hours, again.untimed = again.hours+toGo.hours, again.untimed+toGo.untimed // and the runs short of it, to it
			need = again
			verdict = fmt.Sprintf("**open**: a run that should learn is still falling after %d steps, its horizon of %d; longer runs decide: another %d steps of each run would take %s (%s)", falling, horizon, horizon, again, oneAfterAnother)
		}
		switch {
		case len(missing) > 0:
			verdict = "**not run** yet (" + strings.Join(missing, ", ") + ")"
		case refuted:
			verdict = "**not reproduced** at these lengths"
		case reproduced:
			verdict = "**reproduced**"
		}
		fmt.Fprintf(stdout, "| %s | %s | %s | %s |\n", cols[0], strings.Join(runsText, "; "), strings.Join(results, "; "), verdict)
		count(verdict)
		if cost := need.hours + spent/3600; strings.HasPrefix(verdict, "**open**") && need.untimed == 0 && cost <= maxClaimHours {
			within = append(within, fmt.Sprintf("%s (%s)", claimLabel(cols[0]), hours(cost)))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	total := 0
	for _, n := range tally {
		total += n
	}
	fmt.Fprintf(stdout, "\nOf %d claims: %d reproduced, %d not reproduced, %d open, %d not run.\n", total, tally[0], tally[1], tally[2], tally[3])
	fmt.Fprintf(stdout, "Open claims whose runs take at most %g h of machine time here, per claim: the training they have had and the training the verdict names, at their measured pace (the project trains those to a verdict, by docs/run_*.sh, and leaves the others open; claims that share runs share hours):",
		float64(maxClaimHours))
	if len(within) == 0 {
		fmt.Fprintln(stdout, " none.")
		return nil
	}
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout)
	for _, w := range within {
		fmt.Fprintf(stdout, "- %s\n", w)
	}
	return nil
}

// maxClaimHours is issue #12's line between a claim that must be trained to its verdict and one
// that may stay open with the hours it would take: the machine time of the claim's runs.
const maxClaimHours = 3

// claimLabel is a claim's statement up to its first colon outside brackets and quotes (its
// source: "Henaff §4.3 (copy, T = 500, Fig. 4)"), or all of it.
func claimLabel(statement string) string {
	depth, quoted := 0, false
	for i, r := range statement {
		switch {
		case r == '"':
			quoted = !quoted
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ':' && depth == 0 && !quoted:
			return strings.TrimSpace(statement[:i])
		}
	}
	return strings.TrimSpace(statement)
}

// outperforms decides a claim that the classifiers of learn (comma-separated run
// directories under runsDir) end more accurate than those of fail: reproduced when, with
// every run at its horizon, the lowest median final held-out accuracy of the learn-runs is
// above the highest of the fail-runs; not reproduced when it is not; open while a run is
// short of its horizon (with the hours the runs short of it still need, one after another).
// cost is the claim's machine time: the training its runs have had and those hours.
func outperforms(runsDir, learn, fail string, horizon int) (runsText, results, verdict string, cost trainingTime, err error) {
	var texts, res, missing []string
	lowLearn, highFail := math.Inf(1), math.Inf(-1)
	var short []string
	var toGo trainingTime
	for i, list := range []string{learn, fail} {
		for _, name := range strings.Split(list, ",") {
			if name = strings.TrimSpace(name); name == "" {
				continue
			}
			dir := filepath.Join(runsDir, name)
			if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
				missing = append(missing, name)
				continue
			}
			g, err := readGroup(dir, func(_ string, b float64) float64 { return b }, 0, 0)
			if err != nil {
				return "", "", "", cost, err
			}
			texts = append(texts, g.describe())
			cost.hours += g.slowest / 3600
			if g.status == notScored {
				res = append(res, fmt.Sprintf("%s: %s (chance %.4f)", g.name, notScored, g.baseline))
				if horizon > g.steps {
					short = append(short, fmt.Sprintf("%s (%d of %d steps)", g.name, g.steps, horizon))
					toGo.add(g.hoursTo(horizon))
				} else {
					short = append(short, fmt.Sprintf("%s (%s)", g.name, notScored))
				}
				continue
			}
			acc := runs.Median(g.accs)
			if math.IsNaN(acc) {
				return "", "", "", cost, fmt.Errorf("%s: no held-out accuracy in its log (outperforms compares classifiers)", name)
			}
			if i == 0 {
				lowLearn = min(lowLearn, acc)
			} else {
				highFail = max(highFail, acc)
			}
			diverged := ""
			if g.diverged > 0 {
				diverged = fmt.Sprintf("; %d of %d diverged, counted as 0%%", g.diverged, g.seeds)
			}
			res = append(res, fmt.Sprintf("%s **%.1f%%** [%.1f–%.1f%%] held-out accuracy (loss %.4f; chance %.4f%s)", g.name, 100*acc, 100*slices.Min(g.accs), 100*slices.Max(g.accs), g.median, g.baseline, diverged))
			if horizon > g.steps {
				short = append(short, fmt.Sprintf("%s (%d of %d steps)", g.name, g.steps, horizon))
				toGo.add(g.hoursTo(horizon))
			}
		}
	}
	ahead := lowLearn > highFail
	switch {
	case len(missing) > 0:
		verdict = "**not run** yet (" + strings.Join(missing, ", ") + ")"
	case len(short) > 0:
		order := "behind so far"
		switch {
		case math.IsInf(lowLearn, 1) || math.IsInf(highFail, -1):
			order = "not comparable yet (a side has no held-out accuracy)"
		case ahead:
			order = "ahead so far"
		}
		verdict = fmt.Sprintf("**open**: the runs said to be more accurate are %s; short of the horizon: %s, %s (%s)", order, strings.Join(short, ", "), toGo, oneAfterAnother)
	case ahead:
		verdict = "**reproduced**"
	default:
		verdict = "**not reproduced** at these lengths"
	}
	cost.hours, cost.untimed = cost.hours+toGo.hours, toGo.untimed
	return strings.Join(texts, "; "), strings.Join(res, "; "), verdict, cost, nil
}

// parseHorizon reads a claims file's horizon: a number of steps ("3000"), a budget of steps
// ("3000 steps", stepBudget), or seconds of training ("1800s"), each run's replicas at once: a
// budget that runs of different speeds share.
func parseHorizon(text string) (steps int, seconds float64, stepBudget bool, err error) {
	bad := fmt.Errorf("horizon %q, want a number of steps >= 1, alone or followed by \" steps\" (a budget of steps), or of seconds > 0 followed by s", text)
	if num, ok := strings.CutSuffix(text, " steps"); ok {
		if steps, err = strconv.Atoi(num); err != nil || steps < 1 {
			return 0, 0, false, bad
		}
		return steps, 0, true, nil
	}
	if num, ok := strings.CutSuffix(text, "s"); ok {
		if seconds, err = strconv.ParseFloat(num, 64); err != nil || !(seconds > 0) || math.IsInf(seconds, 0) {
			return 0, 0, false, bad
		}
		return 0, seconds, false, nil
	}
	if steps, err = strconv.Atoi(text); err != nil || steps < 1 {
		return 0, 0, false, bad
	}
	return steps, 0, false, nil
}

// hours writes a training time given in hours: in minutes below one hour.
func hours(h float64) string {
	if h < 1 {
		return fmt.Sprintf("%.0f min", 60*h)
	}
	return fmt.Sprintf("%.1f h", h)
}
