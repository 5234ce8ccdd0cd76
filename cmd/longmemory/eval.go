package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// saltTest seeds the fresh test sequences of the synthetic tasks, so that they differ from
// the training batches and from the held-out batch (train's "eval" salt).
const saltTest = 0x74657374 // "test"

// evalCmd scores a run's latest checkpoint: on the first -n images of the test set for the
// pixel-MNIST tasks (the papers' test accuracy), on -n fresh sequences for the others. For a
// multi-seed run (train -seeds) it scores every replica and gives the median and range. With
// -save it records each replica's score in its runs.TestFile, which the claims judge; a replica
// already recorded at its latest checkpoint on as many examples is not scored again.
func evalCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 10000, "test images (pixel MNIST: at most 10000) or fresh sequences to score")
	batch := fs.Int("batch", 100, "sequences per forward pass")
	save := fs.Bool("save", false, "record each replica's score in its "+runs.TestFile+" (the claims compare pixel-MNIST accuracies from it)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: longmemory eval [-n 10000] [-batch 100] [-save] DIR\n\nScores the latest checkpoint of the run in DIR on the test set.")
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
	reps := runs.Replicas(dir)
	// With -save, a replica that diverged is not scored: the claims score it 0 (pkg/claims,
	// rule 6), and its last checkpoint, from before the divergence, may not exist.
	skip := func(rep string) bool {
		step, err := divergedAt(rep)
		if *save && err == nil && step > 0 {
			fmt.Fprintf(stdout, "%s: diverged at step %d, not scored\n", filepath.Base(rep), step)
			return true
		}
		return false
	}
	if len(reps) == 0 {
		if skip(dir) {
			return nil
		}
		sc, err := evalRun(dir, *n, *batch, *save, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, sc)
		return sc.diverged()
	}
	// A multi-seed run: every replica, then the median and range over them.
	var losses, accs []float64
	var errs []error
	for _, rep := range reps {
		if skip(rep) {
			continue
		}
		sc, err := evalRun(rep, *n, *batch, *save, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s\n", filepath.Base(rep), sc)
		losses, accs = append(losses, sc.loss), append(accs, sc.acc)
		if err := sc.diverged(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(losses) == 0 {
		fmt.Fprintf(stdout, "%d seeds: every one diverged\n", len(reps))
		return nil
	}
	fmt.Fprintf(stdout, "%d seeds: loss median %.4f [%.4f–%.4f]", len(losses), runs.Median(losses), slices.Min(losses), slices.Max(losses))
	if a := runs.Median(accs); !math.IsNaN(a) {
		fmt.Fprintf(stdout, ", accuracy median %.2f%% [%.2f–%.2f%%]", 100*a, 100*slices.Min(accs), 100*slices.Max(accs))
	}
	fmt.Fprintln(stdout)
	return errors.Join(errs...)
}

// divergedAt is the step at which the run in dir diverged (its log ends with a held-out loss of
// +Inf, train.Record), or 0.
func divergedAt(dir string) (int, error) {
	log, err := runs.ReadLog(runs.LogPath(dir))
	if err != nil || len(log) == 0 || !math.IsInf(log[len(log)-1].EvalLoss, 1) {
		return 0, err
	}
	return log[len(log)-1].Step, nil
}

// score is the test-set loss (and accuracy) of a run's latest checkpoint.
type score struct {
	name, what, checkpoint string
	step, n                int
	loss, acc, baseline    float64
	recorded               bool // read from the replica's runs.TestFile, not scored again
}

func (s score) String() string {
	text := fmt.Sprintf("%s at step %d, %d %s: loss %.4f (baseline %.4f)", s.name, s.step, s.n, s.what, s.loss, s.baseline)
	if !math.IsNaN(s.acc) {
		text += fmt.Sprintf(", accuracy %.2f%%", 100*s.acc)
	}
	if s.recorded {
		text += " (recorded before)"
	}
	return text
}

// diverged is an error if the loss is NaN or infinite.
func (s score) diverged() error {
	if math.IsNaN(s.loss) || math.IsInf(s.loss, 0) {
		return fmt.Errorf("eval: the loss of %s is %g: the model diverged", s.checkpoint, s.loss)
	}
	return nil
}

// evalRun scores the latest checkpoint of the run in dir on n test examples, batch at a time;
// with save, it records the score in dir's runs.TestFile, or reads it from there when it was
// recorded at that checkpoint on n examples.
func evalRun(dir string, n, batch int, save bool, stderr io.Writer) (score, error) {
	meta, err := runs.ReadMeta(dir)
	if err != nil {
		return score{}, fmt.Errorf("eval: %w", err)
	}
	p := meta.Preset
	b, err := backend.New()
	if err != nil {
		return score{}, err
	}
	tr, task, err := runs.NewTrainer(b, p, dir)
	if err != nil {
		return score{}, err
	}
	ok, err := tr.Resume()
	for _, skipped := range tr.Skipped {
		fmt.Fprintf(stderr, "longmemory: %v; scoring an older checkpoint\n", skipped)
	}
	if err != nil {
		return score{}, err
	}
	if !ok {
		return score{}, fmt.Errorf("eval: no checkpoint in %s", tr.CheckpointDir)
	}
	// The test batches: the test split of pixel MNIST, fresh draws otherwise.
	rng := rand.New(rand.NewPCG(p.Train.Seed, saltTest))
	next := func(_, size int) (*tasks.Batch, error) { return tasks.HeldOut(task).Sample(rng, size) }
	what, split := "fresh sequences", 0
	if pm, isMNIST := task.(tasks.PixelMNIST); isMNIST {
		pm.Train = false
		ds, err := pm.Load()
		if err != nil {
			return score{}, err
		}
		if n > ds.N {
			return score{}, fmt.Errorf("eval: -n = %d, want 1..%d (the test set's size)", n, ds.N)
		}
		next = pm.Examples
		what = "test images"
		split = ds.N
	}
	sc := score{name: p.Name, what: what, checkpoint: tr.LastCheckpoint, step: tr.Step, n: n, baseline: task.Baseline()}
	if save {
		if t, err := runs.ReadTest(dir); err == nil && t.Step == tr.Step && t.Examples == n {
			sc.loss, sc.acc, sc.recorded = t.Loss, math.NaN(), true
			if t.Accuracy != nil {
				sc.acc = *t.Accuracy
			}
			return sc, nil
		}
	}
	var lossSum, accSum float64
	for start := 0; start < n; start += batch {
		size := min(batch, n-start)
		bt, err := next(start, size)
		if err != nil {
			return score{}, err
		}
		loss, acc, err := tr.EvaluateBatch(bt)
		if err != nil {
			return score{}, err
		}
		lossSum += loss * float64(size)
		accSum += acc * float64(size)
	}
	sc.loss, sc.acc = lossSum/float64(n), accSum/float64(n)
	if save && sc.diverged() == nil {
		t := runs.Test{Step: sc.step, Examples: n, Split: split, Loss: sc.loss, Baseline: sc.baseline, Host: runs.Host(), Backend: b.Name()}
		if !math.IsNaN(sc.acc) {
			t.Accuracy = &sc.acc
		}
		if err := runs.WriteTest(dir, t); err != nil {
			return sc, err
		}
	}
	return sc, nil
}
