package train

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// MaxState bounds the floats of recurrent state per sequence (rnn.Sizes.State): beyond it a
// cell's parameter count could overflow an int, and no machine holds such a model anyway.
const MaxState = 1 << 28

// memAvailable returns the memory the system can give without swapping (MemAvailable of
// /proc/meminfo), or false where it is not known (then the memory check is skipped).
var memAvailable = func() (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "MemAvailable:" && fields[2] == "kB" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}

// memoryEstimate returns the bytes a Trainer of cell on task with cfg (defaults applied)
// needs, roughly: parameters, their gradients and the optimizer's state (4 copies), the
// activations of one chunk graph of the training batch (a generous 8 floats per state float
// and step; the held-out batch is evaluated in slices of that size, Trainer.EvaluateBatch),
// and the two batches' inputs. It computes in float64, so that no size overflows.
func memoryEstimate(cell rnn.Cell, task tasks.Task, cfg Config) (params, activations float64) {
	s := cell.Sizes()
	word := float64(cell.DType().Size())
	var n float64
	if c, ok := cell.(interface{ NumParams() int }); ok {
		n = float64(c.NumParams())
	} else {
		n = float64(s.State) * float64(s.State+s.In+s.Out)
	}
	L := float64(task.SeqLen())
	c := L
	if cfg.Chunk > 0 && float64(cfg.Chunk) < L {
		c = float64(cfg.Chunk)
	}
	batch := float64(cfg.Batch)
	activations = batch*c*(8*float64(s.State)+float64(s.In+s.Out))*word +
		float64(cfg.Batch+cfg.EvalBatch)*L*float64(task.NumInputs()+2)*4
	return 4 * n * word, activations
}

// checkMemory returns an error, before anything is allocated, if the cell's state is beyond
// MaxState or if memoryEstimate exceeds the available memory; both numbers are named.
func checkMemory(cell rnn.Cell, task tasks.Task, cfg Config) error {
	s := cell.Sizes()
	if s.State < 1 || s.State > MaxState {
		return fmt.Errorf("train: %T has a state of %d floats per sequence, want 1..%d (train.MaxState): its hidden size is too large for any machine",
			cell, s.State, MaxState)
	}
	avail, ok := memAvailable()
	if !ok {
		return nil
	}
	params, act := memoryEstimate(cell, task, cfg)
	if need := params + act; need > float64(avail) {
		return fmt.Errorf("train: %T with a state of %d floats on %s (batch %d, chunk %d) needs about %s (%s for the parameters and optimizer state, %s for activations and batches), more than the %s of memory available (MemAvailable)",
			cell, s.State, task, cfg.Batch, cfg.Chunk, bytesString(need), bytesString(params), bytesString(act), bytesString(float64(avail)))
	}
	return nil
}

// bytesString formats a byte count in GiB (MiB below 1 GiB).
func bytesString(b float64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", b/(1<<30))
}
