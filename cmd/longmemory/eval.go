package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// saltTest seeds the fresh test sequences of the synthetic tasks, so that they differ from
// the training batches and from the held-out batch (train's "eval" salt).
const saltTest = 0x74657374 // "test"

// evalCmd scores a run's latest checkpoint: on the first -n images of the test set for the
// pixel-MNIST tasks (the papers' test accuracy), on -n fresh sequences for the others.
func evalCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 10000, "test images (pixel MNIST: at most 10000) or fresh sequences to score")
	batch := fs.Int("batch", 100, "sequences per forward pass")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: longmemory eval [-n 10000] [-batch 100] DIR\n\nScores the latest checkpoint of the run in DIR on the test set.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	if *n < 1 || *batch < 1 {
		return fmt.Errorf("eval: -n = %d and -batch = %d, want both >= 1", *n, *batch)
	}
	dir := fs.Arg(0)
	meta, err := readRunFile(dir)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	p := meta.Preset
	p.Train.CheckpointDir = filepath.Join(dir, "checkpoints")
	cell, task, err := p.Build()
	if err != nil {
		return err
	}
	b, err := backend.New()
	if err != nil {
		return err
	}
	tr, err := train.New(b, cell, task, p.Train)
	if err != nil {
		return err
	}
	ok, err := tr.Resume()
	for _, skipped := range tr.Skipped {
		fmt.Fprintf(stderr, "longmemory: %v; scoring an older checkpoint\n", skipped)
	}
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("eval: no checkpoint in %s", p.Train.CheckpointDir)
	}
	// The test batches: the test split of pixel MNIST, fresh draws otherwise.
	rng := rand.New(rand.NewPCG(p.Train.Seed, saltTest))
	next := func(_, size int) (*tasks.Batch, error) { return task.Sample(rng, size) }
	what := "fresh sequences"
	if pm, isMNIST := task.(tasks.PixelMNIST); isMNIST {
		pm.Train = false
		ds, err := pm.Load()
		if err != nil {
			return err
		}
		if *n > ds.N {
			return fmt.Errorf("eval: -n = %d, want 1..%d (the test set's size)", *n, ds.N)
		}
		next = pm.Examples
		what = "test images"
	}
	var lossSum, accSum float64
	for start := 0; start < *n; start += *batch {
		size := min(*batch, *n-start)
		bt, err := next(start, size)
		if err != nil {
			return err
		}
		loss, acc, err := tr.EvaluateBatch(bt)
		if err != nil {
			return err
		}
		lossSum += loss * float64(size)
		accSum += acc * float64(size)
	}
	loss := lossSum / float64(*n)
	fmt.Fprintf(stdout, "%s at step %d, %d %s: loss %.4f (baseline %.4f)", p.Name, tr.Step, *n, what, loss, task.Baseline())
	if acc := accSum / float64(*n); !math.IsNaN(acc) {
		fmt.Fprintf(stdout, ", accuracy %.2f%%", 100*acc)
	}
	fmt.Fprintln(stdout)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return fmt.Errorf("eval: the loss of %s is %g: the model diverged", tr.LastCheckpoint, loss)
	}
	return nil
}
