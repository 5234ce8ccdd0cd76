package sweep

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/claims"
)

// TestRunsFile checks docs/runs.tsv against the rest of docs/: it reads; every run that a
// claim, a successor's question or a variant names is a line of it, trained at least to that
// claim's horizon in steps, or in seconds where the run's horizon is in seconds; and every run directory under docs/runs is a line of it.
func TestRunsFile(t *testing.T) {
	rs, err := Read("../../docs/runs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Run{}
	for _, r := range rs {
		byName[r.Name] = r
	}
	for _, file := range []string{"claims.tsv", "successors.tsv", "variants.tsv"} {
		f, err := os.Open(filepath.Join("../../docs", file))
		if err != nil {
			t.Fatal(err)
		}
		cs, err := claims.Read(f, file)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			for _, name := range append(append([]string{}, c.Learn...), c.Fail...) {
				r, ok := byName[name]
				switch {
				case !ok:
					t.Errorf("%s: claim %s names run %s, which docs/runs.tsv does not list", file, c.ID, name)
				case c.Horizon > r.Steps:
					t.Errorf("%s: claim %s is judged at %d steps, docs/runs.tsv trains %s to %d (runs.tsv:%d)", file, c.ID, c.Horizon, name, r.Steps, r.Line)
				case c.Seconds > r.Seconds && r.Seconds > 0:
					t.Errorf("%s: claim %s is judged at %g s of training, docs/runs.tsv trains %s for %g s (runs.tsv:%d)", file, c.ID, c.Seconds, name, r.Seconds, r.Line)
				}
			}
		}
	}
	dirs, _ := filepath.Glob("../../docs/runs/*")
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			if _, ok := byName[filepath.Base(d)]; !ok {
				t.Errorf("run directory %s is not a line of docs/runs.tsv", d)
			}
		}
	}
}
