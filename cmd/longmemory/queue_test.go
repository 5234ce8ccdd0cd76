package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

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
	if code, out := cli(tinyRun("-steps", "6", "-resume", "-restart", "-out", dir)...); code != 0 || !strings.Contains(out, "trains it again from step 0") {
		t.Fatalf("-restart: exit %d\n%s", code, out)
	}
	if got := readCols(t, logPath); len(got) != 7 || !slices.Equal(got[:5], before) { // the same 4 steps from the same seed, then 2 more
		t.Errorf("log after -restart to 6 steps:\n%q\nwant the 4 steps of\n%q and 2 more", got, before)
	}
	aside, _ := filepath.Glob(filepath.Join(dir, "no-checkpoint-*", runs.LogFile))
	if len(aside) != 1 || !slices.Equal(readCols(t, aside[0]), before) {
		t.Errorf("the old log moved aside: %v; want one no-checkpoint-*/log.csv holding it", aside)
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

// TestRunScriptQueue runs docs/runs.sh's claim() (the run scripts' step for each setting)
// with this binary: Ctrl-C to the queue's process group ends the script after the setting
// under way has saved its checkpoints, instead of going on to the next setting, whether the
// queue runs in a terminal or was started in the background (where bash ignores SIGINT and
// cannot trap it, as for `make runs &`); then a replica whose checkpoints are missing is
// trained again from step 0 (-restart) while the others resume.
func TestRunScriptQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 8 replicas in a subprocess")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "queue.sh")
	settings := "-model tanh -hidden 6 -task copy -T 5 -batch 4 -eval-every 1000 -checkpoint-every 20"
	if err := os.WriteFile(script, []byte(`source "$ROOT/docs/runs.sh" "$OUT"
claim first `+settings+` -steps $STEPS_FIRST
claim second `+settings+` -steps 10
echo "queue ended"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// queue starts the script in a process group of its own, its SIGINT ignored on entry (trap
	// '' INT in the shell that execs it) when background; the group is killed if the test ends
	// first, so that no training outlives it.
	queue := func(t *testing.T, out, stepsFirst string, background bool) (*exec.Cmd, *bytes.Buffer) {
		ignore := ""
		if background {
			ignore = "trap '' INT; "
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, bash, "-c", ignore+`exec bash "$0"`, script)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "LONGMEMORY_TEST_MAIN=1", "LM="+os.Args[0], "ROOT="+root, "OUT="+out, "STEPS_FIRST="+stepsFirst)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // what a terminal's Ctrl-C reaches
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		t.Cleanup(func() {
			if cmd.Process != nil {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
			cancel()
		})
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		return cmd, &b
	}
	replica := func(out, name string, s int) string { return filepath.Join(out, name, fmt.Sprintf("seed-%d", s)) }
	for _, background := range []bool{false, true} {
		t.Run(fmt.Sprintf("background=%v", background), func(t *testing.T) {
			out := t.TempDir()
			cmd, log := queue(t, out, "1000000", background)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for s := range 8 {
				waitForCheckpoint(t, replica(out, "first", s))
			}
			syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			cmd.Wait()
			// Stopped by the trap (killed by SIGINT) or by claim() (exit 130), after the first setting.
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if stopped := ws.ExitStatus() == 130 || ws.Signaled() && ws.Signal() == syscall.SIGINT; !stopped || strings.Contains(log.String(), "queue ended") {
				t.Fatalf("Ctrl-C to the queue: %v; want it stopped after the first setting by SIGINT or with 130\n%s", cmd.ProcessState, log)
			}
			if _, err := os.Stat(filepath.Join(out, "second")); err == nil {
				t.Fatalf("the second setting started after Ctrl-C\n%s", log)
			}
			if background {
				return
			}
			// seed-3 loses its checkpoints; the queue, run again to a horizon past every
			// replica's last step, trains it anew and resumes the others.
			if err := os.RemoveAll(filepath.Join(replica(out, "first", 3), "checkpoints")); err != nil {
				t.Fatal(err)
			}
			horizon := 0
			for s := range 8 {
				horizon = max(horizon, len(readCols(t, filepath.Join(replica(out, "first", s), runs.LogFile)))-1+5)
			}
			cmd, log = queue(t, out, fmt.Sprint(horizon), false)
			if err := cmd.Run(); err != nil || !strings.Contains(log.String(), "queue ended") ||
				!strings.Contains(log.String(), "trains it again from step 0") {
				t.Fatalf("the queue run again: %v\n%s", err, log)
			}
			for s := range 8 {
				if rows := readCols(t, filepath.Join(replica(out, "first", s), runs.LogFile)); len(rows) != horizon+1 {
					t.Errorf("seed-%d: %d log lines, want %d (header + %d steps)", s, len(rows), horizon+1, horizon)
				}
			}
			if m, _ := filepath.Glob(filepath.Join(replica(out, "first", 3), "no-checkpoint-*", runs.LogFile)); len(m) != 1 {
				t.Errorf("seed-3's old log moved aside: %v, want one", m)
			}
			if rows := readCols(t, filepath.Join(replica(out, "second", 0), runs.LogFile)); len(rows) != 11 {
				t.Errorf("the second setting: %d log lines, want 11", len(rows))
			}
		})
	}
}
