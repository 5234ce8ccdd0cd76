package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
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

// fixture returns the cell and task of a checkpoint in testdata/ (written by the code of
// checkpoint version 3: Config{Steps: 2, Batch: 3, Seed: 1, EvalEvery: 1, EvalBatch: 4}).
func fixture(t *testing.T, name string) (rnn.Cell, tasks.Task, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "v3-"+name+".gob"))
	if err != nil {
		t.Fatal(err)
	}
	if name == "tanh" {
		return rnn.NewTanh(2, 4, 1), tasks.Adding{T: 5}, b
	}
	return ltrnn.NewIRNN(10, 4, 9), tasks.Copy{T: 5}, b
}

// rewrite decodes a checkpoint file, changes it and encodes it again, with the checksum
// trailer unless the version is legacyVersion.
func rewrite(t *testing.T, data []byte, change func(*checkpoint)) []byte {
	t.Helper()
	var ck checkpoint
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&ck); err != nil {
		t.Fatal(err)
	}
	change(&ck)
	var out bytes.Buffer
	if err := gob.NewEncoder(&out).Encode(&ck); err != nil {
		t.Fatal(err)
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
	tr, err := New(backend.MustNew(), cell, task, Config{Steps: 4, Batch: 3, Seed: 1, EvalEvery: 1, EvalBatch: 4, CheckpointDir: dir})
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
	// A version 4 checkpoint records Describe's text.
	tr, err := resumeFrom(t, cell, task, v3)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Save(); err != nil {
		t.Fatal(err)
	}
	ck, err := readCheckpoint(tr.LastCheckpoint)
	if err != nil || ck.Version != checkpointVersion || ck.Model != Describe(cell) {
		t.Errorf("saved checkpoint: %v, version %d, model %q", err, ck.Version, ck.Model)
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
