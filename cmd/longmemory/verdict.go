package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// verdictTolerance is the relative margin around the baseline within which a loss counts as
// "at the baseline" (as notebook.Tolerance).
const verdictTolerance = 0.02

// groupResult is what a run (one directory, single or multi-seed) shows at its end.
type groupResult struct {
	name           string
	seeds, steps   int
	seconds        float64   // wall time of all replicas together (trained one after the other)
	finals         []float64 // last held-out loss of each replica
	baseline       float64
	status         string // "learns", "still falling" or "flat"
	median, lo, hi float64
}

// readGroup reads the replicas of dir (or dir itself) and classifies the run against
// threshold (a loss): "learns" if the median final held-out loss is below it; otherwise
// "still falling" if the median replica lost more than 5% of its loss over the second half
// of training, else "flat".
func readGroup(dir string, threshold func(baseline float64) float64) (groupResult, error) {
	reps := runs.RunDirs(dir)
	g := groupResult{name: filepath.Base(dir), seeds: len(reps), steps: math.MaxInt}
	var drops []float64
	for _, rep := range reps {
		meta, log, err := runs.Read(rep)
		if err != nil {
			return g, err
		}
		steps, loss := runs.LossCurve(log, false)
		if len(loss) == 0 {
			return g, fmt.Errorf("%s: no held-out loss in its log", rep)
		}
		g.baseline = meta.Baseline
		last := log[len(log)-1]
		g.steps, g.seconds = min(g.steps, last.Step), g.seconds+last.Seconds
		final := loss[len(loss)-1]
		half := loss[0]
		for i, s := range steps {
			if s <= steps[len(steps)-1]/2 {
				half = loss[i]
			}
		}
		g.finals = append(g.finals, final)
		drops = append(drops, (half-final)/half)
	}
	g.median, g.lo, g.hi = runs.Median(g.finals), slices.Min(g.finals), slices.Max(g.finals)
	switch {
	case g.median < threshold(g.baseline):
		g.status = "learns"
	case runs.Median(drops) > 0.05:
		g.status = "still falling"
	default:
		g.status = "flat"
	}
	return g, nil
}

// verdictCmd prints docs/RESULTS.md's verdict table from a claims file and the run
// directories it names. Each line of the claims file (tab-separated; # starts a comment):
//
//	statement	learn-dirs	fail-dirs	criterion	[horizon]
//
// statement is the paper's claim, quoted; learn-dirs and fail-dirs are comma-separated run
// directories (relative to -runs) of the models the paper says learn and do not; criterion
// is "baseline" (learning means ending below the baseline) or "solved" (below a tenth of it);
// horizon, optional, is the number of steps a run gets to decide the claim (the paper's iterations where it states them).
// A claim is reproduced when every learn-run learns and no fail-run does; not reproduced when
// a learn-run is flat (its median replica lost less than 5% of its loss over the second half
// of training) at its horizon or a fail-run learns; open otherwise (a learn-run still falling,
// or flat before its horizon: the verdict gives the steps to the horizon and the hours they
// take at the runs' measured speed; or a fail-run that has not learned but is short of its
// horizon); not run when a run directory does not exist yet.
func verdictCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verdict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runs := fs.String("runs", "docs/runs", "directory holding the run directories the claims file names")
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
		horizon := 0
		if len(cols) == 5 {
			if _, err := fmt.Sscan(cols[4], &horizon); err != nil || horizon < 1 {
				return fmt.Errorf("verdict: %s:%d: horizon %q, want a number of steps >= 1", fs.Arg(0), line, cols[4])
			}
		}
		threshold := map[string]func(float64) float64{
			"baseline": func(b float64) float64 { return (1 - verdictTolerance) * b },
			"solved":   func(b float64) float64 { return 0.1 * b },
		}[cols[3]]
		if threshold == nil {
			return fmt.Errorf("verdict: %s:%d: criterion %q, want baseline or solved", fs.Arg(0), line, cols[3])
		}
		var results, runsText, missing []string
		reproduced, refuted := true, false
		var unfinished []string // runs that should not learn, short of their horizon
		var toGo float64        // hours to the horizon of the slowest still-falling learn-run
		falling := 0
		for i, list := range cols[1:3] {
			learn := i == 0
			for _, name := range strings.Split(list, ",") {
				if name = strings.TrimSpace(name); name == "" {
					continue
				}
				dir := filepath.Join(*runs, name)
				if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
					missing = append(missing, name)
					continue
				}
				g, err := readGroup(dir, threshold)
				if err != nil {
					return fmt.Errorf("verdict: %s:%d: %w", fs.Arg(0), line, err)
				}
				runsText = append(runsText, fmt.Sprintf("%s: %d seeds × %d steps, %.0f s of training (the replicas' times added)", g.name, g.seeds, g.steps, g.seconds))
				results = append(results, fmt.Sprintf("%s **%.4f** [%.4f–%.4f] (%s; baseline %.4f)", g.name, g.median, g.lo, g.hi, g.status, g.baseline))
				short := horizon > g.steps // stopped before its horizon: a flat curve decides nothing yet
				switch {
				case learn && g.status == "flat" && !short, !learn && g.status == "learns":
					refuted, reproduced = true, false
				case !learn && short:
					reproduced = false // not learning yet decides nothing before its horizon
					unfinished = append(unfinished, fmt.Sprintf("%s (%d of %d steps)", g.name, g.steps, horizon))
				case learn && g.status != "learns":
					reproduced = false
					falling = max(falling, g.steps)
					if horizon > g.steps && g.steps > 0 {
						perStep := g.seconds / float64(g.steps) // all replicas, one after the other
						toGo = max(toGo, perStep*float64(horizon-g.steps)/3600)
					}
				}
			}
		}
		verdict := "**open**: a run that should learn is still falling; longer runs decide"
		switch {
		case falling == 0 && len(unfinished) > 0:
			verdict = "**open**: runs that should not learn have not reached their horizon: " + strings.Join(unfinished, ", ")
		case horizon > falling:
			verdict = fmt.Sprintf("**open**: a run that should learn has not yet after %d steps; the horizon of %d steps would take %.1f h more of training here (replicas in turn; less with several at once)", falling, horizon, toGo)
		case horizon > 0:
			verdict = fmt.Sprintf("**open**: a run that should learn is still falling after %d steps, its horizon of %d; longer runs decide", falling, horizon)
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
	}
	return sc.Err()
}
