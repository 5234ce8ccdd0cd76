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
	"strconv"
	"time"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

var (
	errUsage       = errors.New("usage")
	errInterrupted = errors.New("interrupted")
)

// runFile is DIR/run.json: what was trained, so that `plot` can label it and draw the baseline.
type runFile struct {
	Preset   experiments.Preset
	Task     string
	Baseline float64
	Backend  string
}

func trainCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	preset := fs.String("preset", "", "preset `name` (longmemory list shows them); flags below override its fields")
	out := fs.String("out", "", "run `directory` for run.json, log.csv and checkpoints (required)")
	resume := fs.Bool("resume", false, "continue the run in -out from its latest checkpoint, with the settings it recorded in run.json")
	kind := fs.String("model", "", "model kind: urnn, lstm, lstm-peephole, gru, tanh, irnn, lt-ornn, lt-irnn")
	hidden := fs.Int("hidden", 0, "hidden units")
	pooling := fs.Bool("pooling", false, "LT-RNN: add the l2-pooled decoder")
	task := fs.String("task", "", "task: copy, varcopy, adding, mnist, pmnist")
	T := fs.Int("T", 0, "task length T")
	steps := fs.Int("steps", 0, "training steps")
	batch := fs.Int("batch", 0, "sequences per step")
	lr := fs.Float64("lr", 0, "RMSProp learning rate")
	clip := fs.Float64("clip", -1, "element-wise gradient clipping (0 turns it off)")
	chunk := fs.Int("chunk", -1, "BPTT chunk length (0: whole sequence in one graph)")
	seed := fs.Uint64("seed", 0, "random seed")
	evalEvery := fs.Int("eval-every", 0, "evaluate on the held-out batch every N steps")
	ckptEvery := fs.Int("checkpoint-every", 0, "checkpoint every N steps (default 100)")
	scaleHidden := fs.Bool("scale-hidden-grad", false, "divide the gradients with respect to the hidden states by T (Henaff et al. §4)")
	quiet := fs.Bool("quiet", false, "no progress line")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("train: unexpected argument %q (flags only)", fs.Arg(0))
	}
	if *out == "" {
		return fmt.Errorf("train: -out DIR is required")
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
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["model"] {
		p.Model.Kind = *kind
	}
	if set["hidden"] {
		p.Model.Hidden = *hidden
	}
	if set["pooling"] {
		p.Model.Pooling = *pooling
	}
	if set["task"] {
		p.Task.Kind = *task
	}
	if set["T"] {
		p.Task.T = *T
	}
	if set["steps"] {
		p.Train.Steps = *steps
	}
	if set["batch"] {
		p.Train.Batch = *batch
	}
	if set["lr"] {
		p.Train.Optimizer.LR = *lr
	}
	if set["clip"] {
		p.Train.Optimizer.ClipValue = *clip
	}
	if set["chunk"] {
		p.Train.Chunk = *chunk
	}
	if set["seed"] {
		p.Train.Seed = *seed
	}
	if set["eval-every"] {
		p.Train.EvalEvery = *evalEvery
	}
	if set["scale-hidden-grad"] {
		p.Train.ScaleHiddenGrad = *scaleHidden
	}
	if set["checkpoint-every"] {
		p.Train.CheckpointEvery = *ckptEvery
	}
	p.Train.CheckpointDir = filepath.Join(*out, "checkpoints")
	cell, tk, err := p.Build()
	if err != nil {
		return err
	}
	logPath, runPath := filepath.Join(*out, "log.csv"), filepath.Join(*out, "run.json")
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
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("train: -resume: no checkpoint in %s", p.Train.CheckpointDir)
		}
		fmt.Fprintf(stderr, "resumed %s at step %d\n", tr.LastCheckpoint, tr.Step)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("train: -out: %w", err)
	}
	meta, _ := json.MarshalIndent(runFile{Preset: p, Task: tk.String(), Baseline: tk.Baseline(), Backend: b.Name()}, "", "  ")
	if err := os.WriteFile(runPath, meta, 0o644); err != nil {
		return fmt.Errorf("train: -out: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
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
	if errors.Is(err, context.Canceled) {
		return errInterrupted
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d steps, held-out loss %.4f (baseline %.4f), log %s\n", p.Name, tr.Step, lastEval, tk.Baseline(), logPath)
	return nil
}

// hasRun reports whether dir holds a training log or checkpoints.
func hasRun(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "log.csv")); err == nil {
		return true
	}
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
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("train: writing the log: %w", err)
	}
	w := csv.NewWriter(f)
	w.Write(logHeader)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range log {
		w.Write([]string{strconv.Itoa(r.Step), g(r.Loss), g(r.GradNorm), g(r.EvalLoss), g(r.EvalAccuracy), g(r.Seconds)})
	}
	w.Flush()
	if err := errors.Join(w.Error(), f.Close()); err != nil {
		return fmt.Errorf("train: writing the log: %w", err)
	}
	return os.Rename(tmp, path)
}
