package runs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// copyDir copies the files under src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755)
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMigrate: a run trained before log.gz and checkpoint version 6 (testdata/v5-run, written
// by that code: log.csv, two checkpoints holding the log) is migrated, and resuming the
// migrated run gives the same log and the same final checkpoint, byte for byte, as resuming
// the original.
func TestMigrate(t *testing.T) {
	b := backend.MustNew()
	orig, migrated := t.TempDir(), t.TempDir()
	copyDir(t, "testdata/v5-run", orig)
	copyDir(t, "testdata/v5-run", migrated)
	for _, rep := range Replicas(migrated) {
		did, err := Migrate(b, rep)
		if err != nil || len(did) != 1 {
			t.Fatalf("Migrate(%s) = %q, %v", rep, did, err)
		}
		if _, err := os.Stat(filepath.Join(rep, LegacyLogFile)); !os.IsNotExist(err) {
			t.Errorf("%s: log.csv is still there", rep)
		}
		if ck, _ := filepath.Glob(filepath.Join(CheckpointDir(rep), "ckpt-*")); len(ck) != 1 || !strings.HasSuffix(ck[0], "ckpt-000000004.gob") {
			t.Errorf("%s: checkpoints %v, want the newest only", rep, ck)
		} else if data, _ := os.ReadFile(ck[0]); !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			t.Errorf("%s: the checkpoint is not in version 6 (gzip'd)", rep)
		}
		if again, err := Migrate(b, rep); err != nil || len(again) != 0 {
			t.Errorf("Migrate of a migrated run = %q, %v; want nothing done", again, err)
		}
	}
	for _, root := range []string{orig, migrated} {
		for _, rep := range Replicas(root) {
			meta, err := ReadMeta(rep)
			if err != nil {
				t.Fatal(err)
			}
			p := meta.Preset
			p.Train.Steps = 8
			if _, _, err := Train(context.Background(), rep, p, Options{Backend: b}); err != nil {
				t.Fatalf("resuming %s: %v", rep, err)
			}
		}
	}
	for _, seed := range []string{"seed-3", "seed-4"} {
		a, b := filepath.Join(orig, seed), filepath.Join(migrated, seed)
		la, err1 := ReadLog(LogPath(a))
		lb, err2 := ReadLog(LogPath(b))
		if err1 != nil || err2 != nil || len(la) != 8 || len(la) != len(lb) {
			t.Fatalf("%s: logs of %d and %d records (%v, %v), want 8", seed, len(la), len(lb), err1, err2)
		}
		for i := range la {
			la[i].Seconds, lb[i].Seconds = 0, 0
		}
		if !slices.Equal(fmtRecords(la), fmtRecords(lb)) {
			t.Errorf("%s: the migrated run's log differs:\n%v\n%v", seed, la, lb)
		}
		ca, _ := os.ReadFile(filepath.Join(CheckpointDir(a), "ckpt-000000008.gob"))
		cb, _ := os.ReadFile(filepath.Join(CheckpointDir(b), "ckpt-000000008.gob"))
		if len(ca) == 0 || !bytes.Equal(ca, cb) {
			t.Errorf("%s: the final checkpoints differ (%d and %d bytes)", seed, len(ca), len(cb))
		}
	}
}

func fmtRecords(log []train.Record) []string {
	var out []string
	for _, r := range log {
		out = append(out, fmt.Sprintf("%+v", r))
	}
	return out
}
