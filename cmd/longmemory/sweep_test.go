package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/slurm"
	"github.com/urnn-notebooks/longmemory/pkg/slurm/slurmtest"
	"github.com/urnn-notebooks/longmemory/pkg/sweep"
)

// sweepFile is a runs file of three small runs of two seeds; "long" runs long enough to be
// requeued in the middle; "short" is scored on fresh test sequences once trained.
const sweepFile = "name\tpreset\toverrides\tseeds\tsteps\tthen\n" +
	"short\tarjovsky/copy-T100/tanh-80\t-hidden 4 -T 5 -batch 4 -eval-every 10 -checkpoint-every 10\t2\t40\teval\n" +
	"long\tarjovsky/copy-T100/tanh-80\t-hidden 6 -T 10 -batch 4 -eval-every 50 -checkpoint-every 25\t2\t1500\t-\n" +
	"adding\thenaff/adding-T400/lt-irnn-128\t-hidden 4 -T 5 -batch 4 -eval-every 10 -checkpoint-every 10\t2\t40\t-\n"

// TestSweepLocal: sweep -status before and after a local sweep, a stop signal that ends it
// with every running replica checkpointed, and bad input.
func TestSweepLocal(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "runs.tsv")
	os.WriteFile(file, []byte(sweepFile), 0o644)
	root := filepath.Join(dir, "runs")
	if code, out := cli("sweep", "-status", "-runs", root, file); code != 0 || !strings.Contains(out, "0 of 3 runs done") {
		t.Errorf("sweep -status before: exit %d\n%s", code, out)
	}
	if code, out := cli("sweep", "-runs", root, "-only", "short", file); code != 0 || !strings.Contains(out, "short: done") ||
		!strings.Contains(out, "short: test split: 2 of 2 seeds scored at step 40 on 10000 test examples: loss median") {
		t.Fatalf("sweep -only short: exit %d\n%s", code, out)
	}
	// Then eval recorded each replica's score at its final checkpoint, and a second sweep
	// keeps it rather than scoring again.
	var recorded []os.FileInfo
	for _, rep := range runs.Replicas(filepath.Join(root, "short")) {
		sc, err := runs.ReadTest(rep)
		if err != nil || sc.Step != 40 || sc.Examples != 10000 || sc.Accuracy == nil || !(sc.Loss > 0) || sc.Host != runs.Host() {
			t.Errorf("%s: test score %+v, %v; want step 40 on 10000 examples with an accuracy", rep, sc, err)
		}
		st, _ := os.Stat(filepath.Join(rep, runs.TestFile))
		recorded = append(recorded, st)
	}
	if code, out := cli("sweep", "-runs", root, "-only", "short", file); code != 0 || !strings.Contains(out, "short: test split: 2 of 2 seeds") {
		t.Fatalf("sweep -only short again: exit %d\n%s", code, out)
	}
	for i, rep := range runs.Replicas(filepath.Join(root, "short")) {
		if st, err := os.Stat(filepath.Join(rep, runs.TestFile)); err != nil || recorded[i] == nil || !st.ModTime().Equal(recorded[i].ModTime()) {
			t.Errorf("%s: the second sweep wrote its %s again (%v)", rep, runs.TestFile, err)
		}
	}
	if code, out := cli("sweep", "-status", "-runs", root, file); code != 0 || !regexp.MustCompile(`short\s+40–40 / 40\s+2 of 2\s+[0-9.]+\s+`+regexp.QuoteMeta(runs.Host())+`\s+done`).MatchString(out) ||
		!strings.Contains(out, "1 of 3 runs done") {
		t.Errorf("sweep -status after: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "-task", "3", file}, "-task 3, want 0..2"},
		{[]string{"sweep", "-only", "nope", file}, `-only: no run named "nope"`},
		{[]string{"sweep", filepath.Join(dir, "missing.tsv")}, "no such file"},
		{[]string{"sweep", "-slurm", "-max-at-once", "-1", "-runs", root, file}, "-max-at-once -1, want >= 0"},
	} {
		if code, out := cli(tc.args...); code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want an error containing %q:\n%s", tc.args, code, tc.want, out)
		}
	}
}

// TestSweepSlurm submits a sweep to a one-node Slurm cluster started for the test: a job
// array of a task per run, one task requeued in the middle of its run (as a time limit or a
// preemption does), and the reports' job after the array. Every task completes, the requeued
// one continues from its checkpoints, and every log and final checkpoint is, byte for byte
// but the wall time, what the same sweep gives when run here in one process.
func TestSweepSlurm(t *testing.T) {
	cluster := slurmtest.Start(t)
	for _, e := range cluster.Env() {
		k, v, _ := strings.Cut(e, "=")
		t.Setenv(k, v)
	}
	t.Setenv("LONGMEMORY_TEST_MAIN", "1") // the tasks run this test binary as the command
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("runs.tsv", []byte(sweepFile), 0o644)
	code, out := cli("sweep", "-slurm", "-runs", "runs", "-reports", "touch reports-done", "runs.tsv")
	if code != 0 {
		t.Fatalf("sweep -slurm: exit %d\n%s", code, out)
	}
	m := regexp.MustCompile(`job array (\d+): 3 tasks`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("sweep -slurm did not say the job array's id:\n%s", out)
	}
	job := m[1]
	ctx := context.Background()
	env := cluster.Env()
	// The long run is task 1: requeue it once its log passes step 100.
	deadline := time.Now().Add(3 * time.Minute)
	requeued := false
	for !requeued && time.Now().Before(deadline) {
		if log, err := runs.ReadLog(runs.LogPath(filepath.Join(dir, "runs", "long", "seed-0"))); err == nil && len(log) > 0 && log[len(log)-1].Step >= 100 {
			c := exec.Command("scontrol", "requeue", job+"_1")
			c.Env = append(os.Environ(), env...)
			if b, err := c.CombinedOutput(); err != nil {
				t.Fatalf("scontrol requeue %s_1: %v\n%s", job, err, b)
			}
			requeued = true
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !requeued {
		t.Fatalf("the long run's log never reached step 100")
	}
	var states []slurm.TaskState
	for time.Now().Before(deadline) {
		var err error
		if states, err = slurm.Tasks(ctx, job, env); err != nil {
			t.Fatal(err)
		}
		done := len(states) == 3
		for _, s := range states {
			done = done && s.State == "COMPLETED"
		}
		if done {
			break
		}
		time.Sleep(time.Second)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "build", "sweep", "*", "slurm-*.out"))
	var all bytes.Buffer
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		fmt.Fprintf(&all, "== %s\n%s", l, b)
	}
	restarts := 0
	for _, s := range states {
		if s.State != "COMPLETED" {
			t.Fatalf("task %d ended %s, want COMPLETED (tasks %+v)\n%s", s.Task, s.State, states, all.String())
		}
		if s.Task == 1 {
			restarts = s.Restarts
		}
	}
	if restarts < 1 || !strings.Contains(all.String(), "resumed") {
		t.Errorf("the requeued task: %d restarts; its output should say it resumed from its checkpoint:\n%s", restarts, all.String())
	}
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if _, err := os.Stat("reports-done"); err == nil {
			break
		}
	}
	if _, err := os.Stat("reports-done"); err != nil {
		t.Errorf("the reports' job after the array did not run: %v", err)
	}
	// The same sweep here, in one process.
	rs, err := sweep.Read("runs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "local")
	if err := sweep.Train(ctx, local, rs, sweep.Options{Train: runs.Options{Backend: backend.MustNew(), Restart: true}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		for _, rep := range runs.Replicas(filepath.Join(local, r.Name)) {
			other := filepath.Join(dir, "runs", r.Name, filepath.Base(rep))
			if a, b := readCols(t, runs.LogPath(rep)), readCols(t, runs.LogPath(other)); len(a) != r.Steps+1 || strings.Join(a, "\n") != strings.Join(b, "\n") {
				t.Errorf("%s: the Slurm sweep's log (%d lines) differs from the local one's (%d lines)", other, len(b), len(a))
			}
			ck := filepath.Join("checkpoints", fmt.Sprintf("ckpt-%09d.gob", r.Steps))
			ca, _ := os.ReadFile(filepath.Join(rep, ck))
			cb, _ := os.ReadFile(filepath.Join(other, ck))
			if len(ca) == 0 || !bytes.Equal(ca, cb) {
				t.Errorf("%s: its final checkpoint differs from the local sweep's (%d and %d bytes)", other, len(cb), len(ca))
			}
		}
	}
}

// TestSweepSignal: SIGUSR1 (Slurm's warning before a time limit) or SIGTERM stops a local
// sweep with a checkpoint of every running replica at its last logged step and exit status
// 128 + the signal; the same command run again finishes the runs.
func TestSweepSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGTERM} {
		dir := t.TempDir()
		file := filepath.Join(dir, "runs.tsv")
		os.WriteFile(file, []byte(sweepFile), 0o644)
		root := filepath.Join(dir, "runs")
		c := command(t.Context(), "sweep", "-runs", root, "-only", "long", file)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		rep := filepath.Join(root, "long", "seed-0")
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(rep, runs.LogFile)); err == nil {
				break
			}
		}
		c.Process.Signal(sig)
		err := c.Wait()
		if code := c.ProcessState.ExitCode(); code != 128+int(sig) {
			t.Fatalf("%v: sweep exited %d (%v), want %d\n%s", sig, code, err, 128+int(sig), out.String())
		}
		for _, r := range runs.Replicas(filepath.Join(root, "long")) {
			log := readCols(t, runs.LogPath(r))
			if got, want := latestStep(t, r), len(log)-1; got != want || got >= 1500 {
				t.Errorf("%v: %s: its checkpoint is at step %d, its log at %d (of 1500)", sig, r, got, want)
			}
		}
		if code, out := cli("sweep", "-runs", root, "-only", "long", file); code != 0 || !strings.Contains(out, "resumed") {
			t.Errorf("%v: the sweep again: exit %d\n%s", sig, code, out)
		}
	}
}
