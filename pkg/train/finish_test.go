package train

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// TestFinish: a finished run's checkpoint keeps the model's weights only; a resume from it
// restores those weights bit for bit, starts the optimizer's state afresh, and says so.
func TestFinish(t *testing.T) {
	task := tasks.Copy{T: 5, Symbols: 4, Recall: 3}
	cfg, dir := Config{Steps: 6, Batch: 4, Seed: 3, Chunk: 4, CheckpointEvery: 2}, t.TempDir()
	cell := func() rnn.Cell { return rnn.NewTanh(6, 8, 5) }
	if _, _, err := Finish(dir); err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("Finish of an empty directory = %v, want an error saying it holds no checkpoint", err)
	}
	tr, err := newIn(dir, cell(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// An older checkpoint beside the newest, as a run cut short between two leaves.
	older := filepath.Join(dir, "ckpt-000000002.gob")
	data, err := os.ReadFile(tr.LastCheckpoint)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(older, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before, after, err := Finish(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := checkpoints(dir)
	if len(all) != 1 || all[0] != tr.LastCheckpoint {
		t.Fatalf("after Finish the directory holds %v, want %s alone", all, tr.LastCheckpoint)
	}
	if fi, _ := os.Stat(all[0]); fi.Size() != after || before != 2*int64(len(data)) || !(after < before/2) {
		t.Errorf("Finish: %d bytes before (want %d), %d after (file %d bytes; want under a quarter of before: RMSProp's state is as large as the weights)",
			before, 2*len(data), after, fi.Size())
	}
	ck, err := readCheckpoint(all[0])
	if err != nil {
		t.Fatal(err)
	}
	if !ck.Final || ck.Step != 6 {
		t.Errorf("final checkpoint: Final %v at step %d, want true at 6", ck.Final, ck.Step)
	}
	models := 0
	for _, sv := range ck.Vars {
		if strings.HasPrefix(sv.Path, OptimizerScope+"/") {
			t.Errorf("final checkpoint holds optimizer variable %s", sv.Path)
		}
		if strings.HasPrefix(sv.Path, ModelScope+"/") {
			models++
		}
	}
	if models == 0 {
		t.Errorf("final checkpoint holds no variable under %s", ModelScope)
	}

	// Finished again: nothing changes.
	final := mustRead(t, all[0])
	if b, a, err := Finish(dir); err != nil || b != after || a != after {
		t.Errorf("Finish of a final checkpoint = %d, %d, %v; want %d, %d, nil", b, a, err, after, after)
	}
	if !bytes.Equal(mustRead(t, all[0]), final) {
		t.Error("Finish rewrote a final checkpoint")
	}

	// Resumed: the weights bit for bit, the optimizer's state as New makes it.
	fresh, err := newIn(t.TempDir(), cell(), task, Config{Steps: 8, Batch: 4, Seed: 3, Chunk: 4, CheckpointEvery: 2})
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := newIn(dir, cell(), task, Config{Steps: 8, Batch: 4, Seed: 3, Chunk: 4, CheckpointEvery: 2})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := resumed.Resume(); !ok || err != nil || resumed.Step != 6 || !resumed.ResumedFinal {
		t.Fatalf("Resume of a final checkpoint = %v, %v at step %d, ResumedFinal %v; want true, nil at 6, true", ok, err, resumed.Step, resumed.ResumedFinal)
	}
	for v := range resumed.Store.RootScope().IterVariables() {
		want := tr.Store.GetVariable(v.Path())
		if strings.HasPrefix(v.Path(), OptimizerScope+"/") {
			want = fresh.Store.GetVariable(v.Path())
		}
		if got, w := tensors.MustCopyFlatData[float32](v.MustValue()), tensors.MustCopyFlatData[float32](want.MustValue()); !equalBits(got, w) {
			t.Errorf("resumed %s differs from %s", v.Path(), map[bool]string{true: "a fresh trainer's", false: "the finished run's"}[strings.HasPrefix(v.Path(), OptimizerScope+"/")])
		}
	}
	if err := resumed.Run(context.Background(), nil); err != nil || resumed.Step != 8 {
		t.Errorf("training on from a final checkpoint: %v at step %d, want nil at 8", err, resumed.Step)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
