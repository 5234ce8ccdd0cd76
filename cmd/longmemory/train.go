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
	"reflect"
	"slices"
	"sort"
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

// presetFlag binds flag -name to one field of the preset. Flags are parsed before the preset
// is known (it comes from -preset, from run.json with -resume, or is the custom default), so
// bind registers the flag on that field of a scratch preset, and apply, called for the flags
// given once the preset is loaded, checks the value and copies it into the run's preset.
type presetFlag struct {
	name  string
	bind  func(fs *flag.FlagSet, scratch *experiments.Preset)
	apply func(p, scratch *experiments.Preset) error
	field func(p *experiments.Preset) any // a pointer to the field, for flagNames
}

// flagValue are the types of the preset's fields that flags set.
type flagValue interface {
	string | int | uint64 | float64 | bool
}

// field returns the binding of flag -name (default def in the usage text, the preset's value
// otherwise) to the field at returns. A value given must satisfy valid (nil: any value), else
// the error names the flag, the value and want.
func field[T flagValue](name, usage string, def T, at func(*experiments.Preset) *T, valid func(T) bool, want string) presetFlag {
	return presetFlag{
		name: name,
		bind: func(fs *flag.FlagSet, scratch *experiments.Preset) {
			// The flag package's own Values, so that -h names the argument types (int, float, …).
			switch v := any(at(scratch)).(type) {
			case *string:
				fs.StringVar(v, name, any(def).(string), usage)
			case *int:
				fs.IntVar(v, name, any(def).(int), usage)
			case *uint64:
				fs.Uint64Var(v, name, any(def).(uint64), usage)
			case *float64:
				fs.Float64Var(v, name, any(def).(float64), usage)
			case *bool:
				fs.BoolVar(v, name, any(def).(bool), usage)
			}
		},
		apply: func(p, scratch *experiments.Preset) error {
			v := *at(scratch)
			if valid != nil && !valid(v) { // 0 is not "the default" on the command line
				return fmt.Errorf("train: -%s = %v, want %s", name, v, want)
			}
			*at(p) = v
			return nil
		},
		field: func(p *experiments.Preset) any { return at(p) },
	}
}

// atLeast accepts the integers >= lo; positive the numbers > 0 (and 0 if orZero) but +Inf.
func atLeast(lo int) func(int) bool { return func(v int) bool { return v >= lo } }
func positive(orZero bool) func(float64) bool {
	return func(v float64) bool { return (v > 0 || orZero && v == 0) && !math.IsInf(v, 1) }
}

// P shortens presetFlags.
type P = experiments.Preset

// presetFlags are the flags that override the preset's fields, one line each: a field comes
// to the command line with its line here (and its name in changedSettings' errors with it).
var presetFlags = []presetFlag{
	field("model", "model kind: "+strings.Join(experiments.Kinds, ", "), "", func(p *P) *string { return &p.Model.Kind }, nil, ""),
	field("hidden", "hidden units", 0, func(p *P) *int { return &p.Model.Hidden }, nil, ""),
	field("pooling", "LT-RNN: add the l2-pooled decoder", false, func(p *P) *bool { return &p.Model.Pooling }, nil, ""),
	field("init", fmt.Sprintf("initialisation other than the model's default: %q (Gaussian of variance 1/√fan-in, Henaff §4.1; %s) or %q (the uRNN code's bound for V; %s)",
		experiments.InitHenaff, strings.Join(experiments.Inits[experiments.InitHenaff], ", "), experiments.InitCode, strings.Join(experiments.Inits[experiments.InitCode], ", ")),
		"", func(p *P) *string { return &p.Model.Init }, nil, ""),
	field("sigma", "LT-RNN: the nonlinearity on the inputs, linear, relu or tanh (default: relu on real-valued inputs, none on categorical)",
		"", func(p *P) *string { return &p.Model.Sigma }, nil, ""),
	field("lr-scale-a", "expRNN: train A at this multiple of -lr (its authors: 0.1; default: one rate)", 0.0,
		func(p *P) *float64 { return &p.Model.LRScaleA }, positive(false), "a number > 0"),
	field("forget-bias", "LSTM: the forget gate's initial bias b_f (default: the kind's, 0 for lstm, 1 for lstm-peephole)", 0.0,
		func(p *P) *float64 { return &p.Model.ForgetBias }, func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }, "a finite number"),
	field("output-bias", "LT-RNN: add an output bias b_y (Henaff's equations have none)", false, func(p *P) *bool { return &p.Model.OutputBias }, nil, ""),
	field("task", "task: "+strings.Join(experiments.TaskKinds, ", "), "", func(p *P) *string { return &p.Task.Kind }, nil, ""),
	field("T", "task length T", 0, func(p *P) *int { return &p.Task.T }, nil, ""),
	field("dataset", "the MNIST tasks' images: \"\" for MNIST, fashion for Fashion-MNIST", "", func(p *P) *string { return &p.Task.Dataset },
		func(v string) bool { return slices.Contains(experiments.Datasets, v) }, `"" or fashion`),
	field("pool", "train on a fixed set of this many sequences (the uRNN code's 100000) instead of fresh ones; held-out scores stay fresh", 0,
		func(p *P) *int { return &p.Task.Pool }, atLeast(1), "an integer >= 1"),
	field("steps", "training steps", 0, func(p *P) *int { return &p.Train.Steps }, atLeast(1), "an integer >= 1"),
	field("batch", "sequences per step", 0, func(p *P) *int { return &p.Train.Batch }, atLeast(1), "an integer >= 1"),
	field("lr", "RMSProp learning rate", 0, func(p *P) *float64 { return &p.Train.Optimizer.LR }, positive(false), "a number > 0"),
	field("ortho-lr", "LT-ORNN with pooling: the SGD step of the soft orthogonality penalty (default: the learning rate)", 0,
		func(p *P) *float64 { return &p.Train.Orthogonality.LR }, positive(false), "a number > 0"),
	field("clip", "element-wise gradient clipping (0 turns it off)", -1, func(p *P) *float64 { return &p.Train.Optimizer.ClipValue },
		positive(true), "a number >= 0 (0 turns clipping off)"),
	field("chunk", "BPTT chunk length (0: whole sequence in one graph)", -1, func(p *P) *int { return &p.Train.Chunk },
		atLeast(0), "an integer >= 0 (0: the whole sequence)"),
	field("seed", "random seed", 0, func(p *P) *uint64 { return &p.Train.Seed }, nil, ""),
	field("eval-every", "evaluate on the held-out batch every N steps", 0, func(p *P) *int { return &p.Train.EvalEvery },
		atLeast(1), "an integer >= 1"),
	field("eval-batch", "sequences in the held-out batch (default 100, fewer on long tasks)", 0, func(p *P) *int { return &p.Train.EvalBatch },
		atLeast(1), "an integer >= 1"),
	field("checkpoint-every", "checkpoint every N steps (default 100)", 0, func(p *P) *int { return &p.Train.CheckpointEvery },
		atLeast(1), "an integer >= 1"),
	field("scale-hidden-grad", "divide the gradients with respect to the hidden states by T (Henaff et al. §4)", false,
		func(p *P) *bool { return &p.Train.ScaleHiddenGrad }, nil, ""),
}

// bindPresetFlags registers presetFlags on fs. After fs.Parse, once the preset is loaded,
// apply writes the flags given into it, or returns the first invalid value's error.
func bindPresetFlags(fs *flag.FlagSet) (apply func(p *experiments.Preset) error) {
	scratch := new(experiments.Preset)
	for _, f := range presetFlags {
		f.bind(fs, scratch)
	}
	return func(p *experiments.Preset) error {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for _, f := range presetFlags {
			if set[f.name] {
				if err := f.apply(p, scratch); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// flagNames names the flags of the preset's fields ("Train.Optimizer.LR" → "-lr"), for errors.
var flagNames = func() map[string]string {
	p := new(experiments.Preset) // on the heap: its fields' addresses do not move
	path := map[uintptr]string{}
	runs.Fields(reflect.ValueOf(p).Elem(), func(name string, f reflect.Value) { path[f.Addr().Pointer()] = name })
	names := map[string]string{}
	for _, f := range presetFlags {
		names[path[reflect.ValueOf(f.field(p)).Pointer()]] = "-" + f.name
	}
	return names
}()

// changedSettings describes each setting of now that differs from was (runs.Diff: other
// than bookkeeping ones, defaults applied) as "-flag: old → new", sorted.
func changedSettings(was, now experiments.Preset) []string {
	var out []string
	for _, c := range runs.Diff(was, now) {
		name := flagNames[c.Field]
		if name == "" {
			name = c.Field
		}
		out = append(out, fmt.Sprintf("%s: %v → %v", name, c.Was, c.Now))
	}
	sort.Strings(out)
	return out
}

func trainCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	preset := fs.String("preset", "", "preset `name` (longmemory list shows them); flags below override its fields")
	out := fs.String("out", "", "run `directory` for run.json, log.gz and checkpoints (required)")
	resume := fs.Bool("resume", false, "continue the run in -out from its latest checkpoint, with the settings it recorded in run.json")
	applyFlags := bindPresetFlags(fs) // -model, -hidden, … -scale-hidden-grad
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
		if changed := changedSettings(recorded.Preset, p); len(changed) > 0 && !*override {
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
	tr, _, err := runs.Train(ctx, out, p, opt)
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
