package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// TestTrainSeeds trains three replicas, checks that replica r is the single run with seed
// s + r (same losses), resumes them together, and that a failing replica is reported by index
// and seed while the others finish.
func TestTrainSeeds(t *testing.T) {
	base := []string{"train", "-model", "tanh", "-hidden", "6", "-task", "copy", "-T", "5", "-batch", "4",
		"-eval-every", "2", "-checkpoint-every", "2", "-chunk", "4", "-quiet"}
	dir, single := t.TempDir(), t.TempDir()
	if code, out := cli(append(base, "-steps", "4", "-seeds", "3", "-seed", "7", "-out", dir)...); code != 0 ||
		!strings.Contains(out, "3 replicas (seeds 7…9)") {
		t.Fatalf("-seeds 3: exit %d\n%s", code, out)
	}
	var got []string
	for _, d := range runs.Replicas(dir) {
		got = append(got, filepath.Base(d))
	}
	if !slices.Equal(got, []string{"seed-7", "seed-8", "seed-9"}) {
		t.Fatalf("replica directories %v", got)
	}
	if code, out := cli(append(base, "-steps", "4", "-seed", "8", "-out", single)...); code != 0 {
		t.Fatalf("single run: exit %d\n%s", code, out)
	}
	if a, b := readCols(t, filepath.Join(dir, "seed-8", runs.LogFile)), readCols(t, filepath.Join(single, runs.LogFile)); !slices.Equal(a, b) {
		t.Errorf("replica 1 (seed 8) differs from the single run with seed 8:\n%q\n%q", a, b)
	}
	if a, b := readCols(t, filepath.Join(dir, "seed-7", runs.LogFile)), readCols(t, filepath.Join(dir, "seed-8", runs.LogFile)); slices.Equal(a, b) {
		t.Error("replicas with seeds 7 and 8 trained identically")
	}
	// Two at once (-jobs 2) gives the same runs as in turn.
	jobs := t.TempDir()
	if code, out := cli(append(base, "-steps", "4", "-seeds", "2", "-seed", "7", "-jobs", "2", "-out", jobs)...); code != 0 {
		t.Fatalf("-jobs 2: exit %d\n%s", code, out)
	}
	if a, b := readCols(t, filepath.Join(jobs, "seed-8", runs.LogFile)), readCols(t, filepath.Join(single, runs.LogFile)); !slices.Equal(a, b) {
		t.Errorf("replica seed 8 trained alongside another differs from the single run:\n%q\n%q", a, b)
	}
	// Resumed together from the directory alone: every replica reaches step 6.
	if code, out := cli("train", "-out", dir, "-resume", "-steps", "6", "-quiet"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	for _, d := range runs.Replicas(dir) {
		if rows := readCols(t, filepath.Join(d, runs.LogFile)); len(rows) != 7 {
			t.Errorf("%s after resume: %d log lines, want 7 (header + 6 steps)", d, len(rows))
		}
	}
	// A replica that cannot run (a file where its directory should be) is reported; the
	// others finish.
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "seed-3"), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := cli(append(base, "-steps", "2", "-seeds", "3", "-seed", "2", "-out", broken)...)
	if code != 1 || !strings.Contains(out, "1 of 3 replicas did not finish: 1 (seed 3)") {
		t.Errorf("a broken replica: exit %d\n%s", code, out)
	}
	for _, s := range []string{"seed-2", "seed-4"} {
		if rows := readCols(t, filepath.Join(broken, s, runs.LogFile)); len(rows) != 3 {
			t.Errorf("%s next to a broken replica: %d log lines, want 3", s, len(rows))
		}
	}
	// summary: one row for the three replicas, median and range of the final held-out loss.
	if code, table := cli("summary", dir); code != 0 || !strings.Contains(table, "| "+filepath.Base(dir)+" (3 seeds) | tanh 6 |") ||
		!regexp.MustCompile(`\| 6 \| \d+ s \| \d\.\d{4} \[\d\.\d{4}–\d\.\d{4}\] \|`).MatchString(table) {
		t.Errorf("summary of a multi-seed run: exit %d\n%s", code, table)
	}
	// eval: every replica, then the median and range.
	if code, out := cli("eval", "-n", "5", dir); code != 0 || !strings.Contains(out, "seed-9: ") ||
		!regexp.MustCompile(`3 seeds: loss median \d\.\d{4} \[\d\.\d{4}–\d\.\d{4}\], accuracy median`).MatchString(out) {
		t.Errorf("eval of a multi-seed run: exit %d\n%s", code, out)
	}
	// eval -save records each replica's score, which a second -save on as many examples reads
	// back instead of scoring again; other -n scores again.
	if code, out := cli("eval", "-save", "-n", "5", dir); code != 0 || strings.Contains(out, "recorded before") {
		t.Errorf("eval -save: exit %d\n%s", code, out)
	}
	for _, rep := range runs.Replicas(dir) {
		if sc, err := runs.ReadTest(rep); err != nil || sc.Step != 6 || sc.Examples != 5 || sc.Accuracy == nil {
			t.Errorf("%s after eval -save: %+v, %v; want step 6 on 5 examples with an accuracy", rep, sc, err)
		}
	}
	if code, out := cli("eval", "-save", "-n", "5", dir); code != 0 || strings.Count(out, "(recorded before)") != 3 {
		t.Errorf("eval -save again: exit %d, want 3 replicas recorded before\n%s", code, out)
	}
	if code, out := cli("eval", "-save", "-n", "4", dir); code != 0 || strings.Contains(out, "recorded before") {
		t.Errorf("eval -save -n 4 after -n 5: exit %d, want every replica scored again\n%s", code, out)
	}
	if sc, err := runs.ReadTest(filepath.Join(dir, "seed-8")); err != nil || sc.Examples != 4 {
		t.Errorf("seed-8 after eval -save -n 4: %+v, %v; want 4 examples", sc, err)
	}
	// plot: the median over the replicas with the min–max band.
	svg := filepath.Join(t.TempDir(), "seeds.svg")
	if code, out := cli("plot", "-o", svg, dir); code != 0 {
		t.Fatalf("plot of a multi-seed run: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(svg); !strings.Contains(string(b), "tanh 6, 3 seeds") || !strings.Contains(string(b), "fill-opacity:0.2") {
		t.Errorf("the plot of a multi-seed run has no band named for its seeds")
	}
	if m := runs.Median([]float64{3, math.NaN(), 1, 2, 10}); m != 2.5 {
		t.Errorf("median(3, NaN, 1, 2, 10) = %v, want 2.5", m)
	}
	for _, bad := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-seeds", "0"}, "-seeds 0, want 1..64"}, {[]string{"-seeds", "65"}, "-seeds 65, want 1..64"},
		{[]string{"-seeds", "2", "-jobs", "3"}, "-jobs 3, want 0..2"}, {[]string{"-seeds", "2", "-jobs", "-1"}, "-jobs -1, want 0..2"},
	} {
		if code, out := cli(append(append(base, "-steps", "2", "-out", t.TempDir()), bad.flags...)...); code != 1 || !strings.Contains(out, bad.want) {
			t.Errorf("%v: exit %d, %q, want an error containing %q", bad.flags, code, out, bad.want)
		}
	}
}
