package train

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/urnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// cancelAfter is a context cancelled from its n-th Err call on: a cancellation that lands
// inside a step, at a chunk boundary.
type cancelAfter struct {
	context.Context
	n, calls atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) >= c.n.Load() {
		return context.Canceled
	}
	return nil
}

// TestInterruptMidStep: a cancellation during a step abandons it at the next chunk boundary
// and checkpoints the last completed step, rather than finishing the step first.
func TestInterruptMidStep(t *testing.T) {
	dir := t.TempDir()
	tr, err := newIn(dir, rnn.NewTanh(10, 6, 9), tasks.Copy{T: 5}, Config{Steps: 3, Batch: 4, Chunk: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &cancelAfter{Context: context.Background()}
	ctx.n.Store(4) // the loop's check, then three chunks of step 1
	if err := tr.Run(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if tr.Step != 0 || len(tr.Log) != 0 {
		t.Errorf("after a cancellation inside step 1: Step %d, %d records; want the step abandoned", tr.Step, len(tr.Log))
	}
	if files, _ := checkpoints(dir); len(files) != 1 || filepath.Base(files[0]) != "ckpt-000000000.gob" {
		t.Errorf("checkpoints %v, want one of step 0", files)
	}
}

// TestResumeFallsBack: a corrupted latest checkpoint is passed over for the previous one
// and reported in Skipped; a Save that fails mid-file (a full disk) leaves no temporary
// file and the previous checkpoints intact.
func TestResumeFallsBack(t *testing.T) {
	dir := t.TempDir()
	task := tasks.Adding{T: 5}
	cfg := Config{Steps: 4, Seed: 1, CheckpointEvery: 2}
	tr, err := newIn(dir, rnn.NewTanh(2, 4, 1), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// A finished run keeps its last checkpoint only; the one of step 2 comes from a run to step 2.
	half := t.TempDir()
	early, _ := newIn(half, rnn.NewTanh(2, 4, 1), task, Config{Steps: 2, Seed: 1, CheckpointEvery: 2})
	if err := early.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if kept, _ := checkpoints(dir); len(kept) != 1 {
		t.Errorf("a finished run keeps %v, want its last checkpoint only", kept)
	}
	b2, _ := os.ReadFile(early.LastCheckpoint)
	os.WriteFile(filepath.Join(dir, filepath.Base(early.LastCheckpoint)), b2, 0o644)
	files, _ := checkpoints(dir)
	b, _ := os.ReadFile(files[1])
	b[len(b)/2] ^= 0x10
	os.WriteFile(files[1], b, 0o644)
	again, _ := newIn(dir, rnn.NewTanh(2, 4, 1), task, cfg)
	if ok, err := again.Resume(); !ok || err != nil || again.Step != 2 || len(again.Skipped) != 1 ||
		!strings.Contains(again.Skipped[0].Error(), files[1]) || !strings.Contains(again.Skipped[0].Error(), "checksum") {
		t.Fatalf("Resume = %v, %v at step %d, skipped %v; want step 2 and the checksum error of %s", ok, err, again.Step, again.Skipped, files[1])
	}
	wrapWriter = func(w io.Writer) io.Writer { return halfWriter{w} }
	defer func() { wrapWriter = func(w io.Writer) io.Writer { return w } }()
	if err := again.Save(); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("Save on a full disk: %v", err)
	}
	if stale, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*")); len(stale) != 0 {
		t.Errorf("a failed Save left %v", stale)
	}
	// RemoveStaleTemp deletes what a killed Save leaves.
	os.WriteFile(filepath.Join(dir, TempPrefix+"42"), []byte("half"), 0o644)
	if stale, err := RemoveStaleTemp(dir); err != nil || len(stale) != 1 {
		t.Errorf("RemoveStaleTemp = %v, %v", stale, err)
	}
	if ok, err := again.Resume(); !ok || err != nil || again.Step != 2 {
		t.Errorf("after the failed Save: Resume = %v, %v at step %d", ok, err, again.Step)
	}
}

// halfWriter writes half of what it is given and fails, as a full disk does.
type halfWriter struct{ w io.Writer }

func (h halfWriter) Write(p []byte) (int, error) {
	n, _ := h.w.Write(p[:len(p)/2])
	return n, syscall.ENOSPC
}

// TestSizesCheckedBeforeAllocation: a model beyond the available memory, or whose sizes
// would overflow int arithmetic, is an error naming the numbers, from New, before Init.
func TestSizesCheckedBeforeAllocation(t *testing.T) {
	task := tasks.Copy{T: 5}
	for _, tc := range []struct {
		cell rnn.Cell
		want []string
	}{
		{rnn.NewTanh(10, 10_000_000, 9), []string{"needs about", "GiB", "of memory available"}},
		{urnn.New(10, 3_000_000_000, 9), []string{"6000000000 floats", "want 1..268435456"}},
		{urnn.New(10, math.MaxInt, 9), []string{"want 1..268435456"}},
		{lstm.New(10, math.MaxInt, 9), []string{"want 1..268435456"}},
	} {
		_, err := New(backend.MustNew(), tc.cell, task, Config{Steps: 1})
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%T: error %v, want one mentioning %q", tc.cell, err, w)
			}
		}
	}
	defer func(f func() (uint64, bool)) { memAvailable = f }(memAvailable)
	memAvailable = func() (uint64, bool) { return 1 << 20, true }
	if _, err := New(backend.MustNew(), rnn.NewTanh(10, 64, 9), task, Config{Steps: 1}); err == nil ||
		!strings.Contains(err.Error(), "more than the 1.0 MiB of memory available") {
		t.Errorf("with 1 MiB available: %v", err)
	}
	memAvailable = func() (uint64, bool) { return 0, false }
	if _, err := New(backend.MustNew(), rnn.NewTanh(10, 64, 9), task, Config{Steps: 1}); err != nil {
		t.Errorf("with the available memory unknown: %v", err)
	}
}

// TestEvalBatchFitsLongTasks: the default held-out batch shrinks for long tasks, and a
// training batch beyond tasks.MaxElements is an error naming Batch and its range.
func TestEvalBatchFitsLongTasks(t *testing.T) {
	long := tasks.Copy{T: 1_000_000} // 1000020 steps × 10 inputs: 26 sequences fit
	c, err := Config{Steps: 1, Batch: 4}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	c.EvalBatch = 0
	if c, err = c.withTaskDefaults(long); err != nil || c.EvalBatch != 26 {
		t.Errorf("withTaskDefaults(%s) = EvalBatch %d, %v; want 26", long, c.EvalBatch, err)
	}
	c.Batch = 27
	if _, err := c.withTaskDefaults(long); err == nil || !strings.Contains(err.Error(), "Config.Batch = 27") || !strings.Contains(err.Error(), "want 1..26") {
		t.Errorf("Batch 27 of %s: %v", long, err)
	}
	c, _ = Config{Steps: 1}.WithDefaults()
	if c, err = c.withTaskDefaults(tasks.Copy{T: 100}); err != nil || c.EvalBatch != 100 {
		t.Errorf("short task: EvalBatch %d, %v; want 100", c.EvalBatch, err)
	}
	if _, err := (Config{Steps: 1, Orthogonality: Orthogonality{LR: 1e-3}}).WithDefaults(); err == nil ||
		!strings.Contains(err.Error(), "Orthogonality.LR = 0.001 with Points = 0") {
		t.Errorf("an orthogonality step without the penalty: %v", err)
	}
}
