package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/experiments"
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

// runFile is DIR/run.json: what was trained, so that `plot` can label it and draw the
// baseline. Preset holds the latest settings, with the defaults applied; Spans the settings
// of each span of steps (a -resume -override that changes a setting starts a new span).
type runFile struct {
	Preset   experiments.Preset
	Task     string
	Baseline float64
	Backend  string
	Spans    []span
}

// span is the settings a run used from step From + 1 on.
type span struct {
	From   int
	Preset experiments.Preset
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
	field("task", "task: "+strings.Join(experiments.TaskKinds, ", "), "", func(p *P) *string { return &p.Task.Kind }, nil, ""),
	field("T", "task length T", 0, func(p *P) *int { return &p.Task.T }, nil, ""),
	field("steps", "training steps", 0, func(p *P) *int { return &p.Train.Steps }, atLeast(1), "an integer >= 1"),
	field("batch", "sequences per step", 0, func(p *P) *int { return &p.Train.Batch }, atLeast(1), "an integer >= 1"),
	field("lr", "RMSProp learning rate", 0, func(p *P) *float64 { return &p.Train.Optimizer.LR }, positive(false), "a number > 0"),
	field("clip", "element-wise gradient clipping (0 turns it off)", -1, func(p *P) *float64 { return &p.Train.Optimizer.ClipValue },
		positive(true), "a number >= 0 (0 turns clipping off)"),
	field("chunk", "BPTT chunk length (0: whole sequence in one graph)", -1, func(p *P) *int { return &p.Train.Chunk },
		atLeast(0), "an integer >= 0 (0: the whole sequence)"),
	field("seed", "random seed", 0, func(p *P) *uint64 { return &p.Train.Seed }, nil, ""),
	field("eval-every", "evaluate on the held-out batch every N steps", 0, func(p *P) *int { return &p.Train.EvalEvery },
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
	fields("", reflect.ValueOf(p).Elem(), func(name string, f reflect.Value) { path[f.Addr().Pointer()] = name })
	names := map[string]string{}
	for _, f := range presetFlags {
		names[path[reflect.ValueOf(f.field(p)).Pointer()]] = "-" + f.name
	}
	return names
}()

// bookkeeping are the fields a resumed run may change without -override: they do not change
// what the steps compute.
var bookkeeping = map[string]bool{"Name": true, "Paper": true, "Train.Steps": true, "Train.EvalEvery": true,
	"Train.CheckpointEvery": true, "Train.CheckpointDir": true}

// fields calls visit with "Path.To.Field" and the value of each exported field of struct v,
// nested structs flattened.
func fields(prefix string, v reflect.Value, visit func(name string, f reflect.Value)) {
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		f, name := v.Field(i), v.Type().Field(i).Name
		if prefix != "" {
			name = prefix + "." + name
		}
		if f.Kind() == reflect.Struct {
			fields(name, f, visit)
		} else {
			visit(name, f)
		}
	}
}

// changedSettings describes each field of now that differs from was, other than bookkeeping
// ones, as "-flag: old → new", sorted; both are compared with their defaults applied.
func changedSettings(was, now experiments.Preset) []string {
	norm := func(p experiments.Preset) map[string]any {
		if c, err := p.Train.WithDefaults(); err == nil {
			c.EvalBatch = p.Train.EvalBatch
			p.Train = c
		}
		out := map[string]any{}
		fields("", reflect.ValueOf(p), func(name string, f reflect.Value) { out[name] = f.Interface() })
		return out
	}
	a, b := norm(was), norm(now)
	var out []string
	for k, v := range a {
		if bookkeeping[k] || (k == "Train.EvalBatch" && (v == 0 || b[k] == 0)) || reflect.DeepEqual(v, b[k]) {
			continue
		}
		name := flagNames[k]
		if name == "" {
			name = k
		}
		out = append(out, fmt.Sprintf("%s: %v → %v", name, v, b[k]))
	}
	sort.Strings(out)
	return out
}

func trainCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	preset := fs.String("preset", "", "preset `name` (longmemory list shows them); flags below override its fields")
	out := fs.String("out", "", "run `directory` for run.json, log.csv and checkpoints (required)")
	resume := fs.Bool("resume", false, "continue the run in -out from its latest checkpoint, with the settings it recorded in run.json")
	applyFlags := bindPresetFlags(fs) // -model, -hidden, … -scale-hidden-grad
	override := fs.Bool("override", false, "with -resume: accept settings that differ from those the run recorded (run.json keeps each span's)")
	quiet := fs.Bool("quiet", false, "no progress line")
	seeds := fs.Int("seeds", 1, "replicas: train seeds s, s+1, … (s = -seed or the preset's) in -out/seed-<seed>, each a run of its own")
	jobs := fs.Int("jobs", 1, "with -seeds: replicas trained at once (1: in turn)")
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
	if *jobs < 1 || *jobs > *seeds {
		return fmt.Errorf("train: -jobs %d, want 1..%d (the number of -seeds)", *jobs, *seeds)
	}
	if *seeds > 1 || (*resume && len(replicaDirs(*out)) > 0) {
		if *seeds == 1 {
			*seeds = len(replicaDirs(*out))
		}
		return trainSeeds(fs, *out, *seeds, *jobs, *resume, stdout, stderr)
	}
	var p experiments.Preset
	recorded, err := readRunFile(*out)
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
	p.Train.CheckpointDir = filepath.Join(*out, "checkpoints")
	if *resume && recorded.Preset.Name != "" {
		if changed := changedSettings(recorded.Preset, p); len(changed) > 0 && !*override {
			return fmt.Errorf("train: -resume: settings differ from those the run used (%s): %s; pass -override to change them from the resumed step on",
				filepath.Join(*out, "run.json"), strings.Join(changed, ", "))
		}
	}
	cell, tk, err := p.Build()
	if err != nil {
		return err
	}
	logPath, runPath := filepath.Join(*out, "log.csv"), filepath.Join(*out, "run.json")
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("train: -out: %w", err)
	}
	unlock, err := lockRun(*out, stderr)
	if err != nil {
		return err
	}
	defer unlock()
	removeStale(*out, stderr)
	if !*resume && hasRun(*out) {
		return fmt.Errorf("train: %s already holds a run; pass -resume to continue it or choose another -out", *out)
	}
	b, err := backend.New()
	if err != nil {
		return err
	}
	tr, err := train.New(b, cell, tk, p.Train)
	if err != nil {
		return err
	}
	if *resume {
		ok, err := tr.Resume()
		for _, skipped := range tr.Skipped {
			fmt.Fprintf(stderr, "longmemory: %v; resuming from an older checkpoint\n", skipped)
		}
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("train: -resume: no checkpoint in %s; the run stopped before its first one: start it again without -resume", p.Train.CheckpointDir)
		}
		fmt.Fprintf(stderr, "resumed %s at step %d\n", tr.LastCheckpoint, tr.Step)
	}
	p.Train = tr.Config // what the run uses, defaults applied
	spans := []span{{From: 0, Preset: p}}
	if *resume {
		spans = recorded.Spans
		if len(spans) == 0 {
			spans = []span{{From: 0, Preset: recorded.Preset}}
		}
		for len(spans) > 1 && spans[len(spans)-1].From >= tr.Step {
			spans = spans[:len(spans)-1]
		}
		if last := &spans[len(spans)-1]; len(changedSettings(last.Preset, p)) == 0 || last.From == tr.Step {
			last.Preset = p
		} else {
			spans = append(spans, span{From: tr.Step, Preset: p})
		}
	}
	meta, _ := json.MarshalIndent(runFile{Preset: p, Task: tk.String(), Baseline: tk.Baseline(), Backend: b.Name(), Spans: spans}, "", "  ")
	if err := writeFileAtomic(runPath, func(w io.Writer) error { _, err := w.Write(meta); return err }); err != nil {
		return fmt.Errorf("train: -out: %w", err)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, train.StopSignals...) // a second signal ends the process at once
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs) // a second signal ends the process at once
			cancel(interrupted{s})
		case <-ctx.Done():
		}
	}()
	start, startStep := time.Now(), tr.Step
	last := time.Time{}
	lastEval := math.NaN()
	for _, r := range tr.Log { // a resumed run starts from its last evaluation
		if !math.IsNaN(r.EvalLoss) {
			lastEval = r.EvalLoss
		}
	}
	err = tr.Run(ctx, func(r train.Record) {
		if !math.IsNaN(r.EvalLoss) {
			lastEval = r.EvalLoss
		}
		if r.Step%tr.Config.CheckpointEvery == 0 {
			// Keep the log in step with the checkpoints, so an interrupted run can be plotted.
			if err := writeLog(logPath, tr.Log); err != nil {
				fmt.Fprintln(stderr, "longmemory:", err)
			}
		}
		if *quiet || (time.Since(last) < time.Second && r.Step != p.Train.Steps) {
			return
		}
		last = time.Now()
		rate := float64(r.Step-startStep) / time.Since(start).Seconds()
		fmt.Fprintf(stderr, "\r%s %5d/%d  %6.2f steps/s  loss %.4f  eval %.4f  baseline %.4f ",
			bar(r.Step, p.Train.Steps, 20), r.Step, p.Train.Steps, rate, r.Loss, lastEval, tk.Baseline())
	})
	if !*quiet {
		fmt.Fprintln(stderr)
	}
	if werr := writeLog(logPath, tr.Log); werr != nil {
		return werr
	}
	if err == context.Canceled { // exactly: Run wraps it when the checkpoint failed
		var sig interrupted
		if errors.As(context.Cause(ctx), &sig) {
			fmt.Fprintf(stderr, "longmemory: %v at step %d; checkpoint %s saved, continue with -resume\n", sig.Signal, tr.Step, tr.LastCheckpoint)
			return sig
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d steps, held-out loss %.4f (baseline %.4f), log %s\n", p.Name, tr.Step, lastEval, tk.Baseline(), logPath)
	return nil
}

// lockRun takes the lock of run directory dir (an flock on dir/lock, which holds the
// holder's PID and host) and returns its release. A lock held by a live process is an error
// naming its PID and host; one left by a process that died (the kernel released its flock)
// is taken over with a message on stderr.
func lockRun(dir string, stderr io.Writer) (func(), error) {
	path := filepath.Join(dir, "lock")
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("train: locking %s: %w", dir, err)
	}
	holder, _ := os.ReadFile(path)
	who := strings.TrimSpace(string(holder))
	if !ok {
		if who == "" {
			who = "another process"
		}
		return nil, fmt.Errorf("train: %s is in use by %s (lock %s): wait for that run to end, or stop it", dir, who, path)
	}
	if who != "" {
		fmt.Fprintf(stderr, "longmemory: taking over the stale lock of %s (no longer running)\n", who)
	}
	host, _ := os.Hostname()
	if err := os.WriteFile(path, []byte(fmt.Sprintf("PID %d on %s\n", os.Getpid(), host)), 0o644); err != nil {
		fl.Unlock()
		return nil, fmt.Errorf("train: locking %s: %w", dir, err)
	}
	return func() {
		os.Truncate(path, 0) // an empty lock file: the last holder ended cleanly
		fl.Unlock()
	}, nil
}

// removeStale deletes the temporary files a killed run left in run directory dir (whose
// lock the caller holds), saying so on stderr.
func removeStale(dir string, stderr io.Writer) {
	stale, _ := train.RemoveStaleTemp(filepath.Join(dir, "checkpoints"))
	for _, name := range []string{"log.csv.tmp", "run.json.tmp"} {
		if p := filepath.Join(dir, name); os.Remove(p) == nil {
			stale = append(stale, p)
		}
	}
	for _, p := range stale {
		fmt.Fprintf(stderr, "longmemory: removed %s, left by a run that was killed\n", p)
	}
}

// hasRun reports whether dir holds checkpoints: a run that stopped before its first one
// (its log.csv and run.json only) can be started again.
func hasRun(dir string) bool {
	entries, _ := os.ReadDir(filepath.Join(dir, "checkpoints"))
	return len(entries) > 0
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

var logHeader = []string{"step", "loss", "grad_norm", "eval_loss", "eval_accuracy", "seconds"}

// writeLog writes every record as CSV (NaN where not evaluated), atomically.
func writeLog(path string, log []train.Record) error {
	err := writeFileAtomic(path, func(f io.Writer) error {
		w := csv.NewWriter(f)
		w.Write(logHeader)
		g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
		for _, r := range log {
			w.Write([]string{strconv.Itoa(r.Step), g(r.Loss), g(r.GradNorm), g(r.EvalLoss), g(r.EvalAccuracy), g(r.Seconds)})
		}
		w.Flush()
		return w.Error()
	})
	if err != nil {
		return fmt.Errorf("train: writing the log: %w", err)
	}
	return nil
}

// wrapWriter is the identity; tests replace it with a writer that fails part-way, as a full
// disk does.
var wrapWriter = func(w io.Writer) io.Writer { return w }

// writeFileAtomic writes path through write into path + ".tmp", then renames it into place:
// path is either left as it was or replaced whole. On any failure the temporary file is
// removed.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := errors.Join(write(wrapWriter(f)), f.Sync(), f.Close()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
