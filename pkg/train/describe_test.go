package train

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		cell rnn.Cell
		want string
	}{
		{rnn.NewTanh(2, 4, 1), "cell/1 *rnn.Simple{In:2 N:4 Out:1}"},
		{rnn.NewIRNN(2, 4, 1), "cell/1 *rnn.Simple{In:2 N:4 Out:1 Act:1 Identity:true}"},
		{ltrnn.NewIRNN(10, 4, 9), "cell/1 *ltrnn.Cell{In:10 N:4 Out:9 VInit:Identity}"},
	} {
		if got := Describe(tc.cell); got != tc.want {
			t.Errorf("Describe = %q, want %q", got, tc.want)
		}
	}
	// A stack's layers are described by their fields, not their addresses.
	layers := func(n int) rnn.Cell { return stack.New(rnn.NewTanh(2, n, 3), rnn.NewTanh(3, 4, 1)) }
	if a, b := Describe(layers(4)), Describe(layers(4)); a != b || a == Describe(layers(5)) {
		t.Errorf("Describe of equal stacks: %q and %q; of another: %q", a, b, Describe(layers(5)))
	}
	if got, want := Describe(stack.New(rnn.NewTanh(2, 4, 1))), "cell/1 *stack.Cell{Layers:[*rnn.Simple{In:2 N:4 Out:1}]}"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	// Preset weights are described by their content (a hash), not their address.
	w := func() *ltrnn.Cell {
		c, err := ltrnn.FromWeights(ltrnn.Linear, ltrnn.Weights{U: make([]float64, 40), V: make([]float64, 16), W: make([]float64, 36)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if a, b := Describe(w()), Describe(w()); a != b || !strings.Contains(a, "Preset:#") {
		t.Errorf("Describe of equal preset weights: %q and %q", a, b)
	}
}

func TestDescribeTask(t *testing.T) {
	for _, tc := range []struct {
		task tasks.Task
		want string
	}{
		{tasks.Adding{T: 100}, "task/1 tasks.Adding{T:100}"},
		{tasks.Copy{T: 5}, "task/1 tasks.Copy{T:5}"},
		{tasks.CopyPaper, "task/1 tasks.Copy{T:100 Symbols:8 Recall:10}"},
		{tasks.VariableCopy{T: 100, Recall: 3}, "task/1 tasks.VariableCopy{T:100 Recall:3}"},
		{tasks.PixelMNIST{Permuted: true, Seed: 1, Train: true}, "task/1 tasks.PixelMNIST{Permuted:true Seed:1 Train:true}"},
	} {
		if got := DescribeTask(tc.task); got != tc.want {
			t.Errorf("DescribeTask = %q, want %q", got, tc.want)
		}
	}
}

// The checkpoints in testdata/ were written by the code of their version (v6-*: version 6,
// with its log inside, as a trainer without SaveLog writes it), after Config{Steps: 2,
// Batch: 3, Seed: 1, EvalEvery: 1, EvalBatch: 4} of fixtureRun's cell and task.
// writeFixturesEnv makes TestWriteFixtures write those of the current version (for the tests
// of the next version).
const writeFixturesEnv = "LONGMEMORY_WRITE_CHECKPOINT_FIXTURES"

// fixtureRun returns the cell and task of fixture name ("tanh" or "lt-irnn").
func fixtureRun(name string) (rnn.Cell, tasks.Task) {
	if name == "tanh" {
		return rnn.NewTanh(2, 4, 1), tasks.Adding{T: 5}
	}
	return ltrnn.NewIRNN(10, 4, 9), tasks.Copy{T: 5}
}

// fixture returns the cell and task of the version 6 checkpoint name in testdata/.
func fixture(t *testing.T, name string) (rnn.Cell, tasks.Task, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("v6-%s.gob", name)))
	if err != nil {
		t.Fatal(err)
	}
	cell, task := fixtureRun(name)
	return cell, task, b
}

// TestWriteFixtures writes testdata/v<checkpointVersion>-*.gob when writeFixturesEnv is set.
func TestWriteFixtures(t *testing.T) {
	if os.Getenv(writeFixturesEnv) == "" {
		t.Skipf("set %s=1 to write the checkpoint fixtures of version %d", writeFixturesEnv, checkpointVersion)
	}
	for _, name := range []string{"tanh", "lt-irnn"} {
		cell, task := fixtureRun(name)
		tr, err := newIn(t.TempDir(), cell, task, Config{Steps: 2, Batch: 3, Seed: 1, EvalEvery: 1, EvalBatch: 4})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Run(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(tr.LastCheckpoint)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", fmt.Sprintf("v%d-%s.gob", checkpointVersion, name)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rewrite decodes a checkpoint file, changes it and encodes it again, gzip'd with the
// checksum trailer.
func rewrite(t *testing.T, data []byte, change func(*checkpoint)) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var ck checkpoint
	if err := gob.NewDecoder(zr).Decode(&ck); err != nil {
		t.Fatal(err)
	}
	change(&ck)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if err := gob.NewEncoder(zw).Encode(&ck); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	sum := sha256.Sum256(out.Bytes())
	out.WriteString(checksumMagic)
	out.Write(sum[:])
	return out.Bytes()
}

// resumeFrom writes data as the only checkpoint of a fresh directory and resumes a trainer of
// cell on task from it.
func resumeFrom(t *testing.T, cell rnn.Cell, task tasks.Task, data []byte) (*Trainer, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ckpt-000000002.gob"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := newIn(dir, cell, task, Config{Steps: 4, Batch: 3, Seed: 1, EvalEvery: 1, EvalBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := tr.Resume()
	if err == nil && !ok {
		t.Fatal("Resume found no checkpoint")
	}
	return tr, err
}

// TestCheckpointFixtures: checkpoints written by an earlier build of this version load and
// train on; a checkpoint of a model or task that differs in one field, of another version,
// or without its checksum is refused with an error that says which.
func TestCheckpointFixtures(t *testing.T) {
	for _, name := range []string{"tanh", "lt-irnn"} {
		cell, task, v6 := fixture(t, name)
		tr, err := resumeFrom(t, cell, task, v6)
		if err != nil || tr.Step != 2 || len(tr.Log) != 2 {
			t.Fatalf("%s: version 6 checkpoint: %v, step %d", name, err, tr.Step)
		}
		if err := tr.Run(t.Context(), nil); err != nil || tr.Step != 4 {
			t.Errorf("%s: training on from a version 6 checkpoint: %v", name, err)
		}
	}
	cell, task, v6 := fixture(t, "lt-irnn")
	other := tasks.Copy{T: 5, Recall: 9}
	if _, err := resumeFrom(t, cell, other, v6); err == nil ||
		!strings.Contains(err.Error(), "is of task task/1 tasks.Copy{T:5}, this run is task/1 tasks.Copy{T:5 Recall:9}") {
		t.Errorf("a checkpoint of another task: %v", err)
	}
	if _, err := resumeFrom(t, ltrnn.NewIRNN(10, 5, 9), task, v6); err == nil || !strings.Contains(err.Error(), "is of model cell/1 *ltrnn.Cell{In:10 N:4 Out:9") {
		t.Errorf("a checkpoint of another model: %v", err)
	}
	for _, version := range []int{5, checkpointVersion + 1} {
		bad := rewrite(t, v6, func(ck *checkpoint) { ck.Version = version })
		if _, err := resumeFrom(t, cell, task, bad); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("has version %d, this build reads version %d", version, checkpointVersion)) {
			t.Errorf("a checkpoint of version %d: %v", version, err)
		}
	}
	if _, err := resumeFrom(t, cell, task, v6[:len(v6)-trailerSize]); err == nil || !strings.Contains(err.Error(), "without its checksum") {
		t.Errorf("a checkpoint without its checksum: %v", err)
	}
}
