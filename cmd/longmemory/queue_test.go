package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// TestLostCheckpoints: a run whose log records steps but whose checkpoints are gone (a clone
// of committed logs without their checkpoints) is refused, with or without -resume, its log
// untouched; -restart moves its log and run.json aside and trains it again from step 0,
// unless its log already reaches the steps asked for; a multi-seed run reports the replica
// and trains the others on.
func TestLostCheckpoints(t *testing.T) {
	dir := t.TempDir()
	if code, out := cli(tinyRun("-steps", "4", "-checkpoint-every", "2", "-out", dir)...); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	logPath := filepath.Join(dir, runs.LogFile)
	before := readCols(t, logPath)
	if err := os.RemoveAll(filepath.Join(dir, "checkpoints")); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{{"-steps", "6", "-resume"}, {"-steps", "6"}} {
		code, out := cli(tinyRun(append(extra, "-out", dir)...)...)
		if code != 1 || !strings.Contains(out, "records 4 steps") || !strings.Contains(out, "-restart") {
			t.Errorf("%v on a run without checkpoints: exit %d, %q; want a refusal naming the 4 steps and -restart", extra, code, out)
		}
		if got := readCols(t, logPath); !slices.Equal(got, before) {
			t.Errorf("%v changed the log of a refused run:\n%q\nwant\n%q", extra, got, before)
		}
	}
	// A log that already reaches the steps asked for needs no training, checkpoints or not.
	if code, out := cli(tinyRun("-steps", "4", "-resume", "-restart", "-out", dir)...); code != 0 || !strings.Contains(out, "nothing to train") {
		t.Errorf("-steps 4 on a run whose log reaches step 4: exit %d, %q; want nothing trained", code, out)
	}
	if got := readCols(t, logPath); !slices.Equal(got, before) {
		t.Errorf("a run whose log reaches its steps was retrained:\n%q\nwant\n%q", got, before)
	}
	if code, out := cli(tinyRun("-steps", "6", "-resume", "-restart", "-out", dir)...); code != 0 || !strings.Contains(out, "trains again from step 0") {
		t.Fatalf("-restart: exit %d\n%s", code, out)
	}
	if got := readCols(t, logPath); len(got) != 7 || !slices.Equal(got[:5], before) { // the same 4 steps from the same seed, then 2 more
		t.Errorf("log after -restart to 6 steps:\n%q\nwant the 4 steps of\n%q and 2 more", got, before)
	}
	aside, _ := filepath.Glob(filepath.Join(dir, "no-checkpoint-*", runs.LogFile))
	if len(aside) != 1 || !slices.Equal(readCols(t, aside[0]), before) {
		t.Errorf("the old log moved aside: %v; want one no-checkpoint-*/log.gz holding it", aside)
	}

	multi := t.TempDir()
	if code, out := cli(tinyRun("-steps", "2", "-seeds", "2", "-out", multi)...); code != 0 {
		t.Fatalf("-seeds 2: exit %d\n%s", code, out)
	}
	if err := os.RemoveAll(filepath.Join(multi, "seed-4", "checkpoints")); err != nil {
		t.Fatal(err)
	}
	lost := readCols(t, filepath.Join(multi, "seed-4", runs.LogFile))
	code, out := cli("train", "-out", multi, "-resume", "-steps", "3", "-quiet")
	if code != 1 || !strings.Contains(out, "1 of 2 replicas did not finish: 1 (seed 4)") || !strings.Contains(out, "records 2 steps") {
		t.Errorf("resuming replicas, one without checkpoints: exit %d\n%s", code, out)
	}
	if got := readCols(t, filepath.Join(multi, "seed-4", runs.LogFile)); !slices.Equal(got, lost) {
		t.Errorf("the refused replica's log changed:\n%q\nwant\n%q", got, lost)
	}
	if rows := readCols(t, filepath.Join(multi, "seed-3", runs.LogFile)); len(rows) != 4 {
		t.Errorf("the other replica: %d log lines, want 4 (header + 3 steps)", len(rows))
	}
	if code, out := cli("train", "-out", multi, "-resume", "-restart", "-steps", "3", "-quiet"); code != 0 {
		t.Errorf("-restart on the replicas: exit %d\n%s", code, out)
	}
	if rows := readCols(t, filepath.Join(multi, "seed-4", runs.LogFile)); len(rows) != 4 {
		t.Errorf("the restarted replica: %d log lines, want 4 (header + 3 steps)", len(rows))
	}
}
