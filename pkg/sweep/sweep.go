// Package sweep is the project's runs as data: a runs file (docs/runs.tsv) lists every run
// once — its name, which is its run directory's, its preset, the settings it overrides, its
// seeds and its horizon, in steps or in seconds of training — and Train trains them, each to
// its horizon, resuming where it stopped. `longmemory sweep` runs it in one process, or as a
// Slurm job array with one task per run (package slurm); Status reads how far every run is
// from its run directories alone.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/train"
	"github.com/urnn-notebooks/longmemory/pkg/tsv"
)

// Run is one line of a runs file.
type Run struct {
	Name      string   // the run directory's name under the runs root
	Preset    string   // a preset of experiments.Lookup
	Overrides []string // train flags (runs.ApplyOverrides)
	Seeds     int      // replicas: the preset's seed, seed + 1, …
	Steps     int      // the horizon in steps (0 when it is in Seconds)
	// Seconds is the horizon in seconds of training, its replicas at once (0 when it is in
	// Steps): the run trains to the steps these buy at its measured speed (State.Horizon).
	Seconds float64
	Then    []string // what follows training: nil, {"fit", flags…} or {"eval"}
	Line    int      // the line of the runs file
}

// Columns are a runs file's columns, its header line.
var Columns = []string{"name", "preset", "overrides", "seeds", "steps", "then"}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Read reads and checks the runs file at path: every line names a new run directory, an
// existing preset, overrides that apply to it, seeds and steps in range, and a preset so
// overridden builds (experiments.Preset.Build). Errors name the file, the line and the bad value.
func Read(path string) ([]Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a runs file from r; name is the file's name in errors.
func Parse(r io.Reader, name string) ([]Run, error) {
	var out []Run
	seen := map[string]int{}
	err := tsv.Read(r, name, Columns, func(l tsv.Line) error {
		cols := l.Cols
		run := Run{Name: cols[0], Preset: cols[1], Line: l.N}
		if !nameRE.MatchString(run.Name) {
			return l.Errorf("name %q: want letters, digits, '.', '_' and '-'", run.Name)
		}
		if prev, ok := seen[run.Name]; ok {
			return l.Errorf("run %s is already on line %d: a run is listed once", run.Name, prev)
		}
		seen[run.Name] = l.N
		if cols[2] != "-" {
			run.Overrides = strings.Fields(cols[2])
		}
		var err error
		if run.Seeds, err = strconv.Atoi(cols[3]); err != nil || run.Seeds < 1 || run.Seeds > 64 {
			return l.Errorf("seeds %q, want an integer from 1 to 64", cols[3])
		}
		secs, ok := strings.CutSuffix(cols[4], "s")
		if ok {
			run.Seconds, err = strconv.ParseFloat(secs, 64)
			ok = err == nil && run.Seconds > 0 && !math.IsInf(run.Seconds, 1)
		} else {
			run.Steps, err = strconv.Atoi(cols[4])
			ok = err == nil && run.Steps >= 1
		}
		if !ok {
			return l.Errorf("steps %q, want an integer >= 1, or seconds of training > 0 followed by s", cols[4])
		}
		if cols[5] != "-" {
			run.Then = strings.Fields(cols[5])
			if w := run.Then[0]; w != "fit" && w != "eval" {
				return l.Errorf("then %q, want -, fit FLAGS or eval", cols[5])
			}
		}
		if _, err := run.Settings(); err != nil {
			return l.Errorf("%v", err)
		}
		out = append(out, run)
		return nil
	})
	return out, err
}

// Settings returns the run's preset with its overrides and its horizon applied, checked by
// building it.
func (r Run) Settings() (experiments.Preset, error) {
	p, err := experiments.Lookup(r.Preset)
	if err != nil {
		return p, err
	}
	if err := runs.ApplyOverrides(&p, r.Overrides); err != nil {
		return p, err
	}
	p.Train.Steps = r.Steps
	if r.Seconds > 0 {
		p.Train.Steps = TimingSteps
	}
	if _, _, err := p.Build(); err != nil {
		return p, fmt.Errorf("preset %s with %q: %w", r.Preset, strings.Join(r.Overrides, " "), err)
	}
	return p, nil
}

// SeedList returns the run's replica seeds.
func (r Run) SeedList() ([]uint64, error) {
	p, err := r.Settings()
	if err != nil {
		return nil, err
	}
	return runs.Seeds(p.Train.Seed, r.Seeds), nil
}

// maxRounds bounds TrainRun's rounds of training towards a horizon in seconds.
const maxRounds = 16

// TimingSteps is how far a run whose horizon is in seconds trains before its speed is measured
// from its logs.
const TimingSteps = 20

// horizon is the steps run r trains to: Steps, or those its Seconds buy at the speed its
// replicas' logs measure (runs.StepsBought, as the claims judge a budget of seconds), at least
// TimingSteps; while the logs are too short to time (steps far shorter than the log's 1/100 s),
// twice the longest of them.
func (r Run) horizon(logs [][]train.Record) int {
	if r.Seconds == 0 {
		return r.Steps
	}
	if n := runs.StepsBought(r.Seconds, runs.ReplicasStepSeconds(logs...)); n > 0 {
		return max(TimingSteps, n)
	}
	longest := 0
	for _, l := range logs {
		if len(l) > 0 {
			longest = max(longest, l[len(l)-1].Step)
		}
	}
	return max(TimingSteps, 2*longest)
}

// Progress is how far one replica is: the last step its log records, and whether that ends
// in a divergence (held-out loss +Inf), which ends the replica before its horizon.
type Progress struct {
	Seed     uint64
	Step     int
	Diverged bool
}

// State is how far a run is, from its run directory alone.
type State struct {
	Run      Run
	Replicas []Progress // one per seed, in order; Step 0 where there is no log yet
	// Horizon is the steps the run trains to: Run.Steps, or the steps its Run.Seconds buy at
	// the speed its logs measure so far.
	Horizon int
	// Differs lists the settings that a replica's run.json records otherwise than the runs
	// file asks (runs.Diff): Train would refuse to continue that replica.
	Differs []runs.Change
	// Seconds is the wall time the run has trained so far: the longest of its replicas' logs
	// (train.Record.Seconds, resumes included), the replicas having trained at once (a run of
	// more than runs.MaxAtOnce seeds trains them in turns, and this counts the longest turn).
	Seconds float64
	// Hosts are the machines that trained it (runs.Span.Host), each once, seed by seed and
	// span by span; "a machine not recorded" for spans recorded before run.json named them
	// (as claims.Run.Hosts).
	Hosts []string
}

// Done reports whether every replica reached the horizon or diverged.
func (s State) Done() bool {
	for _, p := range s.Replicas {
		if p.Step < s.Horizon && !p.Diverged {
			return false
		}
	}
	return true
}

// Only returns the runs of rs named in names, in rs's order; the error names a name that is
// no run of rs.
func Only(rs []Run, names []string) ([]Run, error) {
	want := map[string]bool{}
	for _, n := range names {
		if !slices.ContainsFunc(rs, func(r Run) bool { return r.Name == n }) {
			return nil, fmt.Errorf("no run named %q", n)
		}
		want[n] = true
	}
	var out []Run
	for _, r := range rs {
		if want[r.Name] {
			out = append(out, r)
		}
	}
	return out, nil
}

// Status reads the state of each run under root.
func Status(root string, rs []Run) ([]State, error) {
	var out []State
	for _, r := range rs {
		seeds, err := r.SeedList()
		if err != nil {
			return nil, err
		}
		st := State{Run: r}
		want, err := r.Settings()
		if err != nil {
			return nil, err
		}
		var logs [][]train.Record
		for _, s := range seeds {
			if meta, err := runs.ReadMeta(runs.ReplicaDir(filepath.Join(root, r.Name), s)); err == nil {
				if st.Differs == nil {
					want.Train.Seed = s
					st.Differs = runs.Diff(meta.Preset, want)
				}
				st.Hosts = runs.AddHosts(st.Hosts, meta)
			}
			pr := Progress{Seed: s}
			log, err := runs.ReadLog(runs.LogPath(runs.ReplicaDir(filepath.Join(root, r.Name), s)))
			switch {
			case errors.Is(err, os.ErrNotExist):
			case err != nil:
				return nil, fmt.Errorf("%s: %w", r.Name, err)
			case len(log) > 0:
				last := log[len(log)-1]
				pr.Step, pr.Diverged = last.Step, math.IsInf(last.EvalLoss, 1)
			}
			st.Replicas = append(st.Replicas, pr)
			logs = append(logs, log)
		}
		st.Horizon, st.Seconds = r.horizon(logs), runs.TrainedSeconds(logs...)
		out = append(out, st)
	}
	return out, nil
}

// WriteStatus prints one line per run: its steps against its horizon (the least and the most
// of its replicas), the replicas done, the hours it trained and on which machines, and whether
// it is done; then the runs done and the hours of training in all.
func WriteStatus(w io.Writer, states []State) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tsteps (least–most of the seeds) / horizon\tseeds done\thours\tmachines\t")
	done, seconds := 0, 0.0
	for _, s := range states {
		lo, hi, n := math.MaxInt, 0, 0
		for _, p := range s.Replicas {
			lo, hi = min(lo, p.Step), max(hi, p.Step)
			if p.Step >= s.Horizon || p.Diverged {
				n++
			}
		}
		mark := ""
		if s.Done() {
			mark, done = "done", done+1
		}
		for _, c := range s.Differs {
			mark += fmt.Sprintf(" %s: %v recorded, %v asked;", c.Field, c.Was, c.Now)
		}
		horizon := strconv.Itoa(s.Horizon)
		if s.Run.Seconds > 0 {
			horizon += fmt.Sprintf(" (%g s)", s.Run.Seconds)
		}
		seconds += s.Seconds
		fmt.Fprintf(tw, "%s\t%d–%d / %s\t%d of %d\t%.2f\t%s\t%s\n", s.Run.Name, lo, hi, horizon, n, len(s.Replicas),
			s.Seconds/3600, strings.Join(s.Hosts, "; "), mark)
	}
	fmt.Fprintf(tw, "%d of %d runs done, %.1f hours of training\t\t\t\t\t\n", done, len(states), seconds/3600)
	return tw.Flush()
}

// Options are Train's: the runs' training options (runs.Options; Restart and the notices
// are set by Train's callers) and what follows a run's training.
type Options struct {
	Train runs.Options
	// Then does what a run's then column asks, once its replicas are done (nil: nothing).
	Then func(ctx context.Context, r Run, dir string) error
	// Log receives a line as each run starts and ends.
	Log func(string)
}

// TrainRun trains run r under root to its horizon (every replica at once, runs.TrainReplicas),
// keeps of each replica's checkpoints its final weights (runs.Finish: a finished run needs no
// optimizer state; training it past its horizon later starts that state afresh), then does
// its then; a run already done is left as it is (its then still runs, and is
// expected to do nothing when done already). The error joins the replicas' failures; a stop
// (ctx done) returns ctx's error after every running replica checkpointed.
func TrainRun(ctx context.Context, root string, r Run, opt Options) error {
	say := func(format string, args ...any) {
		if opt.Log != nil {
			opt.Log(fmt.Sprintf(format, args...))
		}
	}
	p, err := r.Settings()
	if err != nil {
		return err
	}
	seeds := runs.Seeds(p.Train.Seed, r.Seeds)
	states, err := Status(root, []Run{r})
	if err != nil {
		return err
	}
	dir := filepath.Join(root, r.Name)
	// One round trains to the horizon in steps; a horizon in seconds takes a round to time the
	// run and one more for each time the speed measured over the longer logs buys more steps.
	for round := 0; !states[0].Done(); round++ {
		if round == maxRounds {
			return fmt.Errorf("%s: short of its horizon (%d steps) after %d rounds of training", r.Name, states[0].Horizon, round)
		}
		p.Train.Steps = states[0].Horizon
		say("%s: training %d seeds to step %d", r.Name, r.Seeds, p.Train.Steps)
		var failed []error
		for _, rep := range runs.TrainReplicas(ctx, dir, p, seeds, 0, opt.Train) {
			if rep.Err != nil && !errors.Is(rep.Err, runs.ErrNothingToTrain) && ctx.Err() == nil {
				failed = append(failed, fmt.Errorf("%s seed %d: %w", r.Name, rep.Seed, rep.Err))
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if states, err = Status(root, []Run{r}); err != nil {
			return err
		}
		switch {
		case len(failed) > 0 && !states[0].Done():
			return errors.Join(failed...)
		case len(failed) > 0:
			// A replica that diverged is an outcome, not a failure: the verdicts count it.
			say("%s: done, with diverged seeds: %v", r.Name, errors.Join(failed...))
		case states[0].Done():
			say("%s: done", r.Name)
		}
	}
	for _, seed := range seeds {
		rd := runs.ReplicaDir(dir, seed)
		if before, after, err := runs.Finish(rd); err != nil {
			return fmt.Errorf("%s seed %d: keeping the final weights: %w", r.Name, seed, err)
		} else if after < before {
			say("%s seed %d: kept the final weights (%d of %d bytes of checkpoints)", r.Name, seed, after, before)
		}
	}
	if opt.Then != nil && r.Then != nil {
		return opt.Then(ctx, r, dir)
	}
	return nil
}

// Train trains every run of rs under root in turn (TrainRun). A run that fails is reported
// through opt.Log and the next one starts; a stop (ctx done) ends the sweep. The error names
// the runs that failed.
func Train(ctx context.Context, root string, rs []Run, opt Options) error {
	var failed []string
	for _, r := range rs {
		err := TrainRun(ctx, root, r, opt)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			failed = append(failed, r.Name)
			if opt.Log != nil {
				opt.Log(fmt.Sprintf("%s failed: %v; going on", r.Name, err))
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("sweep: %d runs failed: %s", len(failed), strings.Join(failed, ", "))
	}
	return nil
}
