package train

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/gob"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
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

// The checkpoints in testdata/ were written by the code of their version (v3-*: version 3,
// v4-*: version 4), after Config{Steps: 2, Batch: 3, Seed: 1, EvalEvery: 1, EvalBatch: 4}
// of fixtureRun's cell and task. writeFixturesEnv makes TestWriteFixtures write those of the
// current version (for the tests of the next version).
const writeFixturesEnv = "LONGMEMORY_WRITE_CHECKPOINT_FIXTURES"

// fixtureRun returns the cell and task of fixture name ("tanh" or "lt-irnn").
func fixtureRun(name string) (rnn.Cell, tasks.Task) {
	if name == "tanh" {
		return rnn.NewTanh(2, 4, 1), tasks.Adding{T: 5}
	}
	return ltrnn.NewIRNN(10, 4, 9), tasks.Copy{T: 5}
}

// fixture returns the cell and task of a checkpoint of version 3 in testdata/.
func fixture(t *testing.T, name string) (rnn.Cell, tasks.Task, []byte) {
	return fixtureOf(t, 3, name)
}

// fixtureOf returns the cell and task of a checkpoint of the given version in testdata/.
func fixtureOf(t *testing.T, version int, name string) (rnn.Cell, tasks.Task, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("v%d-%s.gob", version, name)))
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

// rewrite decodes a checkpoint file, changes it and encodes it again, with the checksum
// trailer unless the version is legacyVersion.
func rewrite(t *testing.T, data []byte, change func(*checkpoint)) []byte {
	t.Helper()
	var ck checkpoint
	var r io.Reader = bytes.NewReader(data)
	zipped := bytes.HasPrefix(data, []byte{0x1f, 0x8b})
	if zipped {
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	if err := gob.NewDecoder(r).Decode(&ck); err != nil {
		t.Fatal(err)
	}
	change(&ck)
	var out bytes.Buffer
	var w io.Writer = &out
	zw := gzip.NewWriter(&out)
	if zipped {
		w = zw
	}
	if err := gob.NewEncoder(w).Encode(&ck); err != nil {
		t.Fatal(err)
	}
	if zipped {
		zw.Close()
	}
	if ck.Version != legacyVersion {
		sum := sha256.Sum256(out.Bytes())
		out.WriteString(checksumMagic)
		out.Write(sum[:])
	}
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

// TestLegacyCheckpoints: checkpoints of versions 2 and 3 (model recorded as "%T%+v") still
// load, also when the cell's type has gained a field with its zero value since; a checkpoint
// of another configuration is still refused.
func TestLegacyCheckpoints(t *testing.T) {
	for _, name := range []string{"tanh", "lt-irnn"} {
		cell, task, v3 := fixture(t, name)
		tr, err := resumeFrom(t, cell, task, v3)
		if err != nil || tr.Step != 2 || len(tr.Log) != 2 {
			t.Fatalf("%s: version 3 checkpoint: %v, step %d", name, err, tr.Step)
		}
		if err := tr.Run(t.Context(), nil); err != nil || tr.Step != 4 {
			t.Errorf("%s: training on from a version 3 checkpoint: %v", name, err)
		}
		v2 := rewrite(t, v3, func(ck *checkpoint) { ck.Version = legacyVersion })
		if tr, err := resumeFrom(t, cell, task, v2); err != nil || tr.Step != 2 {
			t.Errorf("%s: version 2 checkpoint: %v", name, err)
		}
	}
	// The field Type (zero) missing from the record: as if written before Type existed.
	cell, task, v3 := fixture(t, "lt-irnn")
	older := rewrite(t, v3, func(ck *checkpoint) {
		if !strings.Contains(ck.Model, " Type:InvalidDType") {
			t.Fatalf("fixture identity %q", ck.Model)
		}
		ck.Model = strings.Replace(ck.Model, " Type:InvalidDType", "", 1)
	})
	if tr, err := resumeFrom(t, cell, task, older); err != nil || tr.Step != 2 {
		t.Errorf("a legacy checkpoint without a field now zero: %v", err)
	}
	// A field the record has and the cell's type no longer has, or another value: refused.
	for _, model := range []string{
		strings.Replace(legacyIdentity(cell), "Pooling:false", "Pooling:false Gone:3", 1),
		strings.Replace(legacyIdentity(cell), "N:4", "N:5", 1),
		strings.Replace(legacyIdentity(cell), "*ltrnn.Cell", "*rnn.Simple", 1),
	} {
		bad := rewrite(t, v3, func(ck *checkpoint) { ck.Model = model })
		if _, err := resumeFrom(t, cell, task, bad); err == nil || !strings.Contains(err.Error(), "is of model") {
			t.Errorf("legacy identity %q: %v, want a refusal", model, err)
		}
	}
	// A checkpoint saved now records Describe's and DescribeTask's text.
	tr, err := resumeFrom(t, cell, task, v3)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Save(); err != nil {
		t.Fatal(err)
	}
	ck, err := readCheckpoint(tr.LastCheckpoint)
	if err != nil || ck.Version != checkpointVersion || ck.Model != Describe(cell) || ck.Task != DescribeTask(task) {
		t.Errorf("saved checkpoint: %v, version %d, model %q, task %q", err, ck.Version, ck.Model, ck.Task)
	}
}

// TestVersion4Checkpoints: checkpoints of version 4 (the task recorded as Task.String(), as
// the committed runs under docs/runs have them) still load and train on, and a task that
// differs in one field is refused; version 5 records the task as DescribeTask's text and
// refuses a task that differs in one field too, naming it.
func TestVersion4Checkpoints(t *testing.T) {
	for _, name := range []string{"tanh", "lt-irnn"} {
		cell, task, v4 := fixtureOf(t, 4, name)
		var ck checkpoint
		if err := gob.NewDecoder(bytes.NewReader(v4)).Decode(&ck); err != nil || ck.Version != 4 || ck.Task != task.String() || ck.Model != Describe(cell) {
			t.Fatalf("%s: fixture: %v, version %d, model %q, task %q", name, err, ck.Version, ck.Model, ck.Task)
		}
		tr, err := resumeFrom(t, cell, task, v4)
		if err != nil || tr.Step != 2 || len(tr.Log) != 2 {
			t.Fatalf("%s: version 4 checkpoint: %v, step %d", name, err, tr.Step)
		}
		if err := tr.Run(t.Context(), nil); err != nil || tr.Step != 4 {
			t.Errorf("%s: training on from a version 4 checkpoint: %v", name, err)
		}
		saved, err := readCheckpoint(tr.LastCheckpoint)
		if err != nil || saved.Version != checkpointVersion || saved.Task != DescribeTask(task) || !strings.HasPrefix(saved.Task, "task/1 tasks.") {
			t.Errorf("%s: checkpoint written after resuming: %v, version %d, task %q", name, err, saved.Version, saved.Task)
		}
	}
	// A task that differs in one field: refused, by a version 4 checkpoint (String) and a
	// version 5 one (DescribeTask), the error naming both tasks.
	cell, task, v4 := fixtureOf(t, 4, "lt-irnn")
	other := tasks.Copy{T: 5, Recall: 9}
	if _, err := resumeFrom(t, cell, other, v4); err == nil || !strings.Contains(err.Error(), "is of task Copy(T=5, K=8, S=10), this run is Copy(T=5, K=8, S=9)") {
		t.Errorf("version 4 checkpoint of another task: %v", err)
	}
	tr, err := resumeFrom(t, cell, task, v4)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Save(); err != nil {
		t.Fatal(err)
	}
	v5, err := os.ReadFile(tr.LastCheckpoint)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resumeFrom(t, cell, other, v5); err == nil ||
		!strings.Contains(err.Error(), "is of task task/1 tasks.Copy{T:5}, this run is task/1 tasks.Copy{T:5 Recall:9}") {
		t.Errorf("version 5 checkpoint of another task: %v", err)
	}
	if tr, err := resumeFrom(t, cell, task, v5); err != nil || tr.Step != 2 {
		t.Errorf("version 5 checkpoint of its own task: %v", err)
	}
	// A version 5 checkpoint whose task text is Task.String() (as if the version had been
	// bumped without the description) is refused: the versions are not mixed.
	mixed := rewrite(t, v5, func(ck *checkpoint) { ck.Task = task.String() })
	if _, err := resumeFrom(t, cell, task, mixed); err == nil || !strings.Contains(err.Error(), "is of task") {
		t.Errorf("version 5 checkpoint recording Task.String(): %v", err)
	}
	// A version 4 checkpoint whose task text is DescribeTask's: refused too.
	mixed = rewrite(t, v4, func(ck *checkpoint) { ck.Task = DescribeTask(task) })
	if _, err := resumeFrom(t, cell, task, mixed); err == nil || !strings.Contains(err.Error(), "is of task") {
		t.Errorf("version 4 checkpoint recording DescribeTask: %v", err)
	}
	// A version from the future is refused with the range this code reads.
	future := rewrite(t, v5, func(ck *checkpoint) { ck.Version = checkpointVersion + 1 })
	if _, err := resumeFrom(t, cell, task, future); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("want 2 to %d", checkpointVersion)) {
		t.Errorf("a checkpoint of version %d: %v", checkpointVersion+1, err)
	}
}

func TestParseLegacy(t *testing.T) {
	typ, f, ok := parseLegacy("*x.C&{A:1 B:two words C:{D:2 E:3} F:[1 2] G:<nil>}")
	want := map[string]string{"A": "1", "B": "two words", "C": "{D:2 E:3}", "F": "[1 2]", "G": "<nil>"}
	if !ok || typ != "*x.C" || len(f) != len(want) {
		t.Fatalf("parseLegacy: %q %v %v", typ, f, ok)
	}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("field %s = %q, want %q", k, f[k], v)
		}
	}
}
