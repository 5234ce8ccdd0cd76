package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

var errUsage = errors.New("usage")

// maxSeeds bounds -seeds (Henaff et al. report 8 per setting).
const maxSeeds = 64

// interrupted is the error of a run stopped by Signal; the process exits with 128 + its number.
type interrupted struct{ Signal os.Signal }

func (e interrupted) Error() string { return fmt.Sprintf("interrupted by %v", e.Signal) }

// exitCode is the shell's code for a process ended by the signal: 128 + its number.
func (e interrupted) exitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

func trainCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	preset := fs.String("preset", "", "preset `name` (longmemory list shows them); flags below override its fields")
	out := fs.String("out", "", "run `directory` for run.json, log.gz and checkpoints (required)")
	resume := fs.Bool("resume", false, "continue the run in -out from its latest checkpoint, with the settings it recorded in run.json")
	applyFlags := runs.BindFlags(fs) // -model, -hidden, … -scale-hidden-grad
	override := fs.Bool("override", false, "with -resume: accept settings that differ from those the run recorded (run.json keeps each span's)")
	restart := fs.Bool("restart", false, "train a run whose checkpoints are gone (its log records steps, but the checkpoints were not kept, as in a clone without them) again from step 0, its log and run.json moved aside into -out/no-checkpoint-<time>; without it train refuses such a run (one whose log already reaches -steps is left as it is)")
	quiet := fs.Bool("quiet", false, "no progress line")
	seeds := fs.Int("seeds", 1, "replicas: train seeds s, s+1, … (s = -seed or the preset's) in -out/seed-<seed>, each a run of its own")
	jobs := fs.Int("jobs", 0, fmt.Sprintf("with -seeds: replicas trained at once (1: in turn; 0: all of them, at most %d; each needs its own memory, so use fewer on a small machine)", runs.MaxAtOnce))
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("train: unexpected argument %q (flags only)", fs.Arg(0))
	}
	if *out == "" {
		return fmt.Errorf("train: -out DIR is required")
	}
	if *seeds < 1 || *seeds > maxSeeds {
		return fmt.Errorf("train: -seeds %d, want 1..%d", *seeds, maxSeeds)
	}
	if *jobs < 0 || *jobs > *seeds {
		return fmt.Errorf("train: -jobs %d, want 0..%d (the number of -seeds; 0: all, at most %d)", *jobs, *seeds, runs.MaxAtOnce)
	}
	replicas := runs.Replicas(*out)
	var p experiments.Preset
	metaDir := *out
	if len(replicas) > 0 {
		metaDir = replicas[0]
	}
	recorded, err := runs.ReadMeta(metaDir)
	switch {
	case *resume && err == nil && *preset != "" && *preset != recorded.Preset.Name:
		return fmt.Errorf("train: -resume: %s holds a run of preset %q, not %q", *out, recorded.Preset.Name, *preset)
	case *resume && err == nil:
		p = recorded.Preset // the run continues with what it recorded; flags below override
	case *resume && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("train: -resume: %w", err)
	case *preset != "":
		if p, err = experiments.Lookup(*preset); err != nil {
			return err
		}
	default:
		p = experiments.Preset{Name: "custom", Paper: "custom run", Train: train.Config{Steps: 1000, Batch: 20, Chunk: 128}}
	}
	if err := applyFlags(&p); err != nil {
		return err
	}
	if *override && !*resume {
		return fmt.Errorf("train: -override changes the settings of a resumed run: it needs -resume")
	}
	if *resume && recorded.Preset.Name != "" {
		if changed := runs.ChangedSettings(recorded.Preset, p); len(changed) > 0 && !*override {
			return fmt.Errorf("train: -resume: settings differ from those the run used (%s): %s; pass -override to change them from the resumed step on",
				filepath.Join(metaDir, runs.MetaFile), strings.Join(changed, ", "))
		}
	}
	if _, _, err := p.Build(); err != nil { // before anything is written
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("train: -out: %w", err)
	}
	b, err := backend.New()
	if err != nil {
		return err
	}
	ctx, stop := runs.StopContext(context.Background())
	defer stop()
	opt := runs.Options{Backend: b, Fresh: !*resume, Override: *override, Restart: *restart,
		Notice: func(s string) { fmt.Fprintf(stderr, "longmemory: %s\n", s) }}
	multi := *seeds > 1 || (*resume && len(replicas) > 0)
	if !multi {
		return trainOne(ctx, *out, p, opt, *quiet, stdout, stderr)
	}
	base := p.Train.Seed
	if *resume && len(replicas) > 0 && !seedGiven(fs) {
		base = runs.ReplicaSeed(replicas[0])
	}
	if *seeds == 1 {
		*seeds = len(replicas)
	}
	if *jobs == 0 {
		*jobs = runs.AtOnce(*seeds)
	}
	if *resume { // a replica that never had a checkpoint starts afresh
		opt.Fresh = false
	}
	res := runs.TrainReplicas(ctx, *out, p, runs.Seeds(base, *seeds), *jobs, opt)
	return replicasDone(ctx, *out, res, stdout, stderr)
}

// seedGiven reports whether -seed was on the command line.
func seedGiven(fs *flag.FlagSet) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "seed" })
	return given
}

// replicasDone reports each replica of TrainReplicas (a line each) and returns the stop
// signal's error when ctx was stopped by one, or an error naming the replicas that failed.
func replicasDone(ctx context.Context, out string, res []runs.Replica, stdout, stderr io.Writer) error {
	if sig := runs.StopCause(ctx); sig != nil {
		fmt.Fprintf(stderr, "longmemory: %v: every running replica of %s saved a checkpoint; continue with -resume\n", sig, out)
		return interrupted{sig}
	}
	var failed []string
	for i, r := range res {
		switch {
		case errors.Is(r.Err, runs.ErrNothingToTrain):
			fmt.Fprintf(stdout, "replica %d (seed %d): %v\n", i, r.Seed, r.Err)
		case r.Err != nil:
			fmt.Fprintf(stderr, "replica %d (seed %d): %v\n", i, r.Seed, r.Err)
			failed = append(failed, fmt.Sprintf("%d (seed %d)", i, r.Seed))
		default:
			fmt.Fprintf(stdout, "replica %d (seed %d): %d steps, last held-out loss %.4f (baseline %.4f)\n", i, r.Seed, r.Trainer.Step,
				lastEval(r.Trainer.Log), r.Task.Baseline())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("train: %d of %d replicas did not finish: %s; the others did (see above)", len(failed), len(res), strings.Join(failed, ", "))
	}
	fmt.Fprintf(stdout, "%d replicas (seeds %d…%d) in %s\n", len(res), res[0].Seed, res[len(res)-1].Seed, out)
	return nil
}

// lastEval is the last held-out loss of log (NaN if none).
func lastEval(log []train.Record) float64 {
	for i := len(log) - 1; i >= 0; i-- {
		if !math.IsNaN(log[i].EvalLoss) {
			return log[i].EvalLoss
		}
	}
	return math.NaN()
}

// trainOne trains one run with a progress line on stderr (unless quiet).
func trainOne(ctx context.Context, out string, p experiments.Preset, opt runs.Options, quiet bool, stdout, stderr io.Writer) error {
	var start time.Time
	var startStep int
	var baseline float64
	last, eval := time.Time{}, math.NaN()
	opt.OnStart = func(tr *train.Trainer, tk tasks.Task) {
		start, startStep, baseline, eval = time.Now(), tr.Step, tk.Baseline(), lastEval(tr.Log)
	}
	opt.OnRecord = func(r train.Record) {
		if !math.IsNaN(r.EvalLoss) {
			eval = r.EvalLoss
		}
		if quiet || (time.Since(last) < time.Second && r.Step != p.Train.Steps) {
			return
		}
		last = time.Now()
		rate := float64(r.Step-startStep) / time.Since(start).Seconds()
		fmt.Fprintf(stderr, "\r%s %5d/%d  %6.2f steps/s  loss %.4f  eval %.4f  baseline %.4f ",
			bar(r.Step, p.Train.Steps, 20), r.Step, p.Train.Steps, rate, r.Loss, eval, baseline)
	}
	tr, _, err := runs.Train(ctx, out, p.ForAtOnce(1), opt)
	if !quiet && tr != nil {
		fmt.Fprintln(stderr)
	}
	if errors.Is(err, runs.ErrNothingToTrain) {
		fmt.Fprintf(stdout, "%v: nothing to train; move %s away to train it again\n", err, runs.LogPath(out))
		return nil
	}
	if sig := runs.StopCause(ctx); sig != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "longmemory: %v at step %d; checkpoint %s saved, continue with -resume\n", sig, tr.Step, tr.LastCheckpoint)
		return interrupted{sig}
	}
	switch {
	case errors.Is(err, runs.ErrHoldsRun):
		return fmt.Errorf("train: %w; pass -resume to continue it", err)
	case errors.Is(err, runs.ErrLostCheckpoints):
		return fmt.Errorf("train: %w; pass -restart to train it again from step 0", err)
	case err != nil:
		return fmt.Errorf("train: %w", err)
	}
	fmt.Fprintf(stdout, "%s: %d steps, held-out loss %.4f (baseline %.4f), log %s\n", p.Name, tr.Step, eval, baseline, runs.LogPath(out))
	return nil
}

// bar draws a progress bar of width w.
func bar(done, total, w int) string {
	n := w * done / max(total, 1)
	s := []byte("[")
	for i := range w {
		if i < n {
			s = append(s, '=')
		} else {
			s = append(s, ' ')
		}
	}
	return string(append(s, ']'))
}
