package main

// Fault injection (issue #14): signals and kill -9 mid-run, corrupted and truncated
// checkpoints, two runs on one directory, a writer that fails mid-file, bad flag values and
// sizes beyond memory. Every run is a tiny model, so the whole file takes seconds.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// TestMain re-executes this test binary as the longmemory command when LONGMEMORY_TEST_MAIN
// is set (see command), with the address space limited to LONGMEMORY_TEST_RLIMIT_AS bytes
// if that is set, so that a size check that fails cannot exhaust the machine's memory.
func TestMain(m *testing.M) {
	if os.Getenv("LONGMEMORY_TEST_MAIN") == "1" {
		if lim, err := strconv.ParseUint(os.Getenv("LONGMEMORY_TEST_RLIMIT_AS"), 10, 64); err == nil {
			syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim})
		}
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// command returns the longmemory command with args as a subprocess (this test binary).
func command(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, os.Args[0], args...)
	c.Env = append(os.Environ(), "LONGMEMORY_TEST_MAIN=1")
	return c
}

// tiny is a run of a few milliseconds per step, evaluated at every step so that logs of
// interrupted and uninterrupted runs compare line by line.
var tiny = []string{"train", "-model", "tanh", "-hidden", "6", "-task", "copy", "-T", "5", "-batch", "4",
	"-chunk", "4", "-seed", "3", "-eval-every", "1", "-quiet"}

func tinyRun(extra ...string) []string { return append(append([]string{}, tiny...), extra...) }

// randomPause sleeps 0–400 ms, so that a signal or kill -9 lands at a random point of the
// run (mid-step, mid-checkpoint, mid-log); the pause is logged to replay a failure.
func randomPause(t *testing.T) {
	d := time.Duration(rand.IntN(400)) * time.Millisecond
	t.Logf("signal after a pause of %v", d)
	time.Sleep(d)
}

// waitForCheckpoint waits until dir holds a checkpoint, or fails the test after 30 s.
func waitForCheckpoint(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dir, "checkpoints", "ckpt-*.gob")); len(m) > 0 {
			return
		}
	}
	t.Fatalf("no checkpoint in %s after 30 s", dir)
}

// latestStep returns the step of the newest checkpoint in dir (-1 if none).
func latestStep(t *testing.T, dir string) int {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "checkpoints", "ckpt-*.gob"))
	if len(m) == 0 {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m[len(m)-1]), "ckpt-"), ".gob"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sameAsUninterrupted resumes the run in dir up to steps and checks that its log equals
// that of an uninterrupted run of the same settings, line by line (wall time aside).
func sameAsUninterrupted(t *testing.T, dir string, steps int) {
	t.Helper()
	n := strconv.Itoa(steps)
	if code, out := cli("train", "-out", dir, "-resume", "-steps", n, "-quiet"); code != 0 {
		t.Fatalf("resume to step %d: exit %d\n%s", steps, code, out)
	}
	whole := t.TempDir()
	if code, out := cli(tinyRun("-steps", n, "-checkpoint-every", "3", "-out", whole)...); code != 0 {
		t.Fatalf("uninterrupted run: exit %d\n%s", code, out)
	}
	a, b := readCols(t, filepath.Join(dir, runs.LogFile)), readCols(t, filepath.Join(whole, runs.LogFile))
	if len(a) != steps+1 || len(b) != steps+1 {
		t.Fatalf("logs have %d and %d lines, want %d", len(a), len(b), steps+1)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("line %d: resumed %q, uninterrupted %q", i, a[i], b[i])
		}
	}
}

// TestSignalSavesCheckpoint sends SIGTERM and SIGHUP to a running `train` after its first
// checkpoint: it must exit with 128 + the signal's number, leave a checkpoint of its last
// completed step (the last record of its log), and resume into the same run as an
// uninterrupted one.
func TestSignalSavesCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("four runs trained until signalled and resumed take ~2–3 s")
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}, {syscall.SIGTERM, 143}, {syscall.SIGTERM, 143}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := command(ctx, tinyRun("-steps", "1000000", "-checkpoint-every", "3", "-out", dir)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitForCheckpoint(t, dir)
			randomPause(t)
			sent := time.Now()
			cmd.Process.Signal(tc.sig)
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != tc.code {
				t.Fatalf("after %v: exit %d (%v), want %d\n%s", tc.sig, code, cmd.ProcessState, tc.code, stderr.String())
			}
			if d := time.Since(sent); d > 10*time.Second {
				t.Errorf("exit took %v after %v", d, tc.sig)
			}
			steps := len(readCols(t, filepath.Join(dir, runs.LogFile))) - 1
			if got := latestStep(t, dir); got != steps {
				t.Fatalf("latest checkpoint at step %d, the log ends at step %d\n%s", got, steps, stderr.String())
			}
			if !strings.Contains(stderr.String(), fmt.Sprintf("ckpt-%09d.gob saved", steps)) {
				t.Errorf("stderr does not name the checkpoint of step %d:\n%s", steps, stderr.String())
			}
			sameAsUninterrupted(t, dir, steps+2)
		})
	}
}

// copyRun copies a run directory (run.json, log.gz, checkpoints) into a fresh one.
func copyRun(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestCorruptCheckpoints flips single bytes of the latest checkpoint at spread offsets and
// truncates it: each must be detected, and eval and train -resume fall back to the intact
// previous checkpoint, naming the bad file; with none intact, a clear error.
// TestSignalStopsEveryReplica: with -seeds, a stop signal ends every running replica with a
// checkpoint and starts no other: in turn (-jobs 1; the replica already handed to the worker
// included), and all at once (the default), where each of the three saves one.
func TestSignalStopsEveryReplica(t *testing.T) {
	for _, jobs := range []string{"1", "0"} {
		t.Run("jobs "+jobs, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := command(ctx, tinyRun("-steps", "1000000", "-checkpoint-every", "3", "-seeds", "3", "-seed", "0", "-jobs", jobs, "-out", dir)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			running := []string{"seed-0"}
			if jobs == "0" {
				running = []string{"seed-0", "seed-1", "seed-2"}
			}
			for _, s := range running {
				waitForCheckpoint(t, filepath.Join(dir, s))
			}
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 143 {
				t.Fatalf("-seeds 3 -jobs %s after SIGTERM: exit %d, want 143\n%s", jobs, code, stderr.String())
			}
			for _, s := range []string{"seed-0", "seed-1", "seed-2"} {
				_, err := os.Stat(filepath.Join(dir, s))
				switch started := err == nil; {
				case started && !slices.Contains(running, s):
					t.Errorf("%s was started after the stop signal\n%s", s, stderr.String())
				case started && latestStep(t, filepath.Join(dir, s)) != len(readCols(t, filepath.Join(dir, s, runs.LogFile)))-1:
					t.Errorf("%s: its last checkpoint is not at the last logged step\n%s", s, stderr.String())
				}
			}
		})
	}
}

func TestCorruptCheckpoints(t *testing.T) {
	src := t.TempDir()
	if code, out := cli(tinyRun("-steps", "4", "-checkpoint-every", "2", "-out", src)...); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	const latest = "ckpt-000000004.gob"
	// A finished run keeps its last checkpoint only: the one of step 2 comes from a run to step 2.
	early := t.TempDir()
	if code, out := cli(tinyRun("-steps", "2", "-checkpoint-every", "2", "-out", early)...); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if ck, _ := filepath.Glob(filepath.Join(src, "checkpoints", "ckpt-*")); len(ck) != 1 {
		t.Errorf("a finished run keeps %v, want its last checkpoint only", ck)
	}
	second, _ := os.ReadFile(filepath.Join(early, "checkpoints", "ckpt-000000002.gob"))
	os.WriteFile(filepath.Join(src, "checkpoints", "ckpt-000000002.gob"), second, 0o644)
	orig, err := os.ReadFile(filepath.Join(src, "checkpoints", latest))
	if err != nil {
		t.Fatal(err)
	}
	n := len(orig)
	type damage struct {
		name string
		do   func([]byte) []byte
	}
	var cases []damage
	for _, off := range []int{0, 1, 7, n / 8, n / 3, n / 2, 2 * n / 3, n - 50, n - 20, n - 1} {
		cases = append(cases, damage{fmt.Sprintf("flip@%d", off), func(b []byte) []byte { b[off] ^= 0xff; return b }})
	}
	for _, size := range []int{0, 1, n / 2, n - 40, n - 1} {
		cases = append(cases, damage{fmt.Sprintf("truncate@%d", size), func(b []byte) []byte { return b[:size] }})
	}
	for _, tc := range cases {
		dir := copyRun(t, src)
		bad := filepath.Join(dir, "checkpoints", latest)
		os.WriteFile(bad, tc.do(bytes.Clone(orig)), 0o644)
		code, out := cli("eval", "-n", "3", dir)
		if code != 0 || !strings.Contains(out, "at step 2,") || !strings.Contains(out, bad) {
			t.Errorf("%s: eval exit %d, want the checkpoint of step 2 scored and %s named:\n%s", tc.name, code, bad, out)
		}
	}
	// train -resume falls back too, and continues as an uninterrupted run.
	dir := copyRun(t, src)
	bad := filepath.Join(dir, "checkpoints", latest)
	b := bytes.Clone(orig)
	b[n/2] ^= 1
	os.WriteFile(bad, b, 0o644)
	code, out := cli("train", "-out", dir, "-resume", "-steps", "5", "-quiet")
	if code != 0 || !strings.Contains(out, bad) || !strings.Contains(out, "at step 2") {
		t.Fatalf("resume past a corrupted checkpoint: exit %d\n%s", code, out)
	}
	sameAsUninterrupted(t, dir, 6)
	// No intact checkpoint: an error naming both files.
	dir = copyRun(t, src)
	for _, f := range []string{"ckpt-000000002.gob", latest} {
		os.WriteFile(filepath.Join(dir, "checkpoints", f), orig[:n/2], 0o644)
	}
	code, out = cli("train", "-out", dir, "-resume", "-quiet")
	if code != 1 || !strings.Contains(out, "no intact checkpoint") || !strings.Contains(out, "ckpt-000000002.gob") || !strings.Contains(out, latest) {
		t.Errorf("resume with every checkpoint corrupted: exit %d\n%s", code, out)
	}
}

// TestConcurrentRunsAndKill9 runs a second `train` on the directory of a running one (it
// must fail naming the first one's PID), then kills the first with SIGKILL: the next run
// takes the stale lock over, removes the temporary files a killed run leaves, and resumes
// into the same run as an uninterrupted one.
func TestConcurrentRunsAndKill9(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first := command(ctx, tinyRun("-steps", "1000000", "-checkpoint-every", "3", "-out", dir)...)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	waitForCheckpoint(t, dir)
	pid := fmt.Sprintf("PID %d", first.Process.Pid)
	for _, args := range [][]string{
		{"train", "-out", dir, "-resume", "-steps", "1000000", "-quiet"},
		tinyRun("-steps", "5", "-out", dir),
	} {
		sctx, scancel := context.WithTimeout(ctx, 20*time.Second)
		out, _ := command(sctx, args...).CombinedOutput()
		scancel()
		if !strings.Contains(string(out), "in use by "+pid) {
			t.Errorf("second run %v while %s trains in %s: %q, want an error naming that PID", args, pid, dir, out)
		}
	}
	randomPause(t)
	first.Process.Kill()
	first.Wait()
	// What a kill -9 mid-write leaves behind.
	stale := []string{filepath.Join(dir, "checkpoints", ".tmp-ckpt-123"), filepath.Join(dir, runs.LogFile+".tmp")}
	for _, p := range stale {
		os.WriteFile(p, []byte("half"), 0o644)
	}
	k := latestStep(t, dir)
	code, out := cli("train", "-out", dir, "-resume", "-steps", strconv.Itoa(k), "-quiet")
	if code != 0 || !strings.Contains(out, "stale lock of "+pid) {
		t.Errorf("run after kill -9: exit %d, want the stale lock of %s taken over:\n%s", code, pid, out)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) || !strings.Contains(out, p) {
			t.Errorf("stale %s: %v; output %q", p, err, out)
		}
	}
	sameAsUninterrupted(t, dir, k+3)
}

// TestResumeRefusesChangedSettings: -resume with another -lr, -batch, -clip or -seed is
// refused, naming the flag and both values, unless -override is given; run.json then keeps
// each span's settings. -resume with only -steps takes everything else from run.json; another
// -chunk (which changes the cost of a step, not the step) is accepted without -override. Each
// span names the machine that trained it: a run resumed on another one starts a span.
func TestResumeRefusesChangedSettings(t *testing.T) {
	dir := t.TempDir()
	if code, out := cli(tinyRun("-steps", "2", "-checkpoint-every", "1", "-lr", "0.001", "-out", dir)...); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, tc := range []struct{ flag, value, want string }{
		{"-lr", "0.01", "-lr: 0.001 → 0.01"},
		{"-batch", "5", "-batch: 4 → 5"},
		{"-clip", "0.5", "-clip: 0 → 0.5"},
		{"-seed", "4", "-seed: 3 → 4"},
	} {
		code, out := cli("train", "-out", dir, "-resume", "-steps", "4", tc.flag, tc.value, "-quiet")
		if code != 1 || !strings.Contains(out, tc.want) || !strings.Contains(out, "-override") {
			t.Errorf("resume with %s %s: exit %d, want an error naming %q:\n%s", tc.flag, tc.value, code, tc.want, out)
		}
	}
	if code, out := cli("train", "-out", dir, "-resume", "-steps", "4", "-lr", "0.01", "-override", "-quiet"); code != 0 {
		t.Fatalf("resume -override: exit %d\n%s", code, out)
	}
	if code, out := cli("train", "-out", dir, "-resume", "-steps", "5", "-quiet"); code != 0 {
		t.Fatalf("resume with -steps only: exit %d\n%s", code, out)
	}
	if code, out := cli("train", "-out", dir, "-resume", "-steps", "6", "-chunk", "2", "-quiet"); code != 0 {
		t.Fatalf("resume with another -chunk: exit %d, want it accepted\n%s", code, out)
	}
	meta, err := runs.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.Spans) != 2 || meta.Spans[0].From != 0 || meta.Spans[0].Preset.Train.Optimizer.LR != 0.001 ||
		meta.Spans[1].From != 2 || meta.Spans[1].Preset.Train.Optimizer.LR != 0.01 ||
		meta.Preset.Train.Optimizer.LR != 0.01 || meta.Preset.Train.Steps != 6 || meta.Preset.Train.Chunk != 2 {
		b, _ := json.MarshalIndent(meta, "", " ")
		t.Errorf("run.json: want spans from step 0 (lr 0.001) and 2 (lr 0.01), 6 steps, chunk 2:\n%s", b)
	}
	// Steps trained on another machine: resumed here, the run starts a span of this machine's.
	host := runs.Host()
	if meta.Spans[0].Host != host || meta.Spans[1].Host != host {
		t.Errorf("spans' hosts %q, %q; want this machine's, %q", meta.Spans[0].Host, meta.Spans[1].Host, host)
	}
	meta.Spans[1].Host = "another machine"
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runs.MetaFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := cli("train", "-out", dir, "-resume", "-steps", "7", "-quiet"); code != 0 {
		t.Fatalf("resume after another machine: exit %d\n%s", code, out)
	}
	if meta, err = runs.ReadMeta(dir); err != nil {
		t.Fatal(err)
	}
	if n := len(meta.Spans); n != 3 || meta.Spans[1].Host != "another machine" || meta.Spans[2].From != 6 || meta.Spans[2].Host != host {
		b, _ := json.MarshalIndent(meta.Spans, "", " ")
		t.Errorf("spans after resuming another machine's run: want a third from step 6 on %q:\n%s", host, b)
	}
}

// TestBadFlagValues: explicit zero or negative values are errors naming the flag and the
// accepted range, and a -T too long for the default batch says which flag to change,
// before anything is trained or allocated.
func TestBadFlagValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-lr", "0"}, "-lr = 0, want a number > 0"},
		{[]string{"-batch", "0"}, "-batch = 0, want an integer >= 1"},
		{[]string{"-checkpoint-every", "0"}, "-checkpoint-every = 0, want an integer >= 1"},
		{[]string{"-eval-every", "0"}, "-eval-every = 0, want an integer >= 1"},
		{[]string{"-steps", "0"}, "-steps = 0, want an integer >= 1"},
		{[]string{"-clip", "-2"}, "-clip = -2, want a number >= 0"},
		{[]string{"-lr", "0.01", "-override"}, "-override"},
	} {
		dir := t.TempDir()
		args := append(tinyRun("-steps", "1", "-out", dir), tc.args...)
		code, out := cli(args...)
		if code != 1 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, %q; want an error mentioning %q", tc.args, code, out, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "run.json")); err == nil {
			t.Errorf("%v: run.json written", tc.args)
		}
	}
	// -T at the top of its range: the default batch of 20 sequences does not fit, and the
	// error names the training batch (which the user sets), not the held-out batch.
	code, out := cli("train", "-model", "tanh", "-hidden", "4", "-task", "copy", "-T", "16777216", "-steps", "1", "-out", t.TempDir())
	if code != 1 || !strings.Contains(out, "Batch = 20") || !strings.Contains(out, "want 1..1") || strings.Contains(out, "EvalBatch") {
		t.Errorf("-T 16777216: exit %d, %q; want an error naming Batch = 20 and the range 1..1", code, out)
	}
}

// TestDivergenceAndRestart: a NaN held-out loss at step 1 stops the run without a checkpoint
// of that step; the directory can then be trained afresh. eval of a diverged checkpoint
// exits non-zero.
func TestDivergenceAndRestart(t *testing.T) {
	dir := t.TempDir()
	code, out := cli(tinyRun("-steps", "3", "-lr", "3e38", "-checkpoint-every", "1", "-out", dir)...)
	if code != 1 || !strings.Contains(out, "held-out loss = NaN") || !strings.Contains(out, "last good checkpoint: none") {
		t.Fatalf("NaN held-out loss: exit %d, want a divergence error with no good checkpoint:\n%s", code, out)
	}
	if k := latestStep(t, dir); k != -1 {
		t.Errorf("a checkpoint of step %d was written after the divergence", k)
	}
	endsDiverged(t, dir, 1)
	if code, out := cli(tinyRun("-steps", "2", "-out", dir)...); code != 0 {
		t.Errorf("restarting a run that failed before its first checkpoint: exit %d\n%s", code, out)
	}
	// Checkpoint at step 1 (not evaluated: -eval-every 2), NaN gradient at step 2.
	dir = t.TempDir()
	if code, out := cli(tinyRun("-steps", "3", "-lr", "3e38", "-eval-every", "2", "-checkpoint-every", "1", "-out", dir)...); code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	endsDiverged(t, dir, 2)
	if code, out := cli("eval", "-n", "3", dir); code != 1 || !strings.Contains(out, "loss NaN") || !strings.Contains(out, "diverged") {
		t.Errorf("eval of a diverged checkpoint: exit %d\n%s", code, out)
	}
	// eval -save leaves it unscored (the claims score a diverged run 0), with no error.
	if code, out := cli("eval", "-save", "-n", "3", dir); code != 0 || !strings.Contains(out, "diverged at step 2, not scored") {
		t.Errorf("eval -save of a diverged run: exit %d\n%s", code, out)
	}
	if _, err := runs.ReadTest(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("eval -save of a diverged run recorded a score: %v", err)
	}
}

// endsDiverged fails unless dir's log ends with step, held-out loss +Inf: how a run that
// diverged says so (train.Record).
func endsDiverged(t *testing.T, dir string, step int) {
	t.Helper()
	log, err := runs.ReadLog(filepath.Join(dir, runs.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(log); n == 0 || log[n-1].Step != step || !math.IsInf(log[n-1].EvalLoss, 1) {
		t.Errorf("log after the divergence at step %d: %+v, want it to end with that step, held-out loss +Inf", step, log)
	}
}

// TestHugeSizes: hidden sizes beyond memory, or beyond int arithmetic, are errors naming the
// sizes before anything is allocated, never a crash. Each runs as a subprocess with its
// address space capped at 4 GiB, so that a missing check cannot exhaust the machine.
func TestHugeSizes(t *testing.T) {
	for _, tc := range []struct {
		kind, hidden, want string
	}{
		{"tanh", "100000", "of memory available"},
		{"tanh", "10000000", "of memory available"},
		{"urnn", "3000000000", "want 1..268435456"},
		{"urnn", strconv.Itoa(math.MaxInt), "want 1..268435456"},
		{"lstm", strconv.Itoa(math.MaxInt), "want 1..268435456"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := command(ctx, "train", "-model", tc.kind, "-hidden", tc.hidden, "-task", "copy", "-T", "5", "-steps", "1", "-out", t.TempDir())
		cmd.Env = append(cmd.Env, "LONGMEMORY_TEST_RLIMIT_AS="+strconv.Itoa(4<<30))
		out, _ := cmd.CombinedOutput()
		cancel()
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "panic") {
			t.Errorf("-model %s -hidden %s: exit %d, want an error mentioning %q:\n%.600s", tc.kind, tc.hidden, code, tc.want, out)
		}
	}
}

// failingWriter writes half of what it is given and fails, as a full disk does.
type failingWriter struct{ w io.Writer }

func (f failingWriter) Write(p []byte) (int, error) {
	n, _ := f.w.Write(p[:len(p)/2])
	return n, syscall.ENOSPC
}

// TestFullDisk: when a write fails mid-file, log.gz, run.json and plot -o keep their old
// content and no temporary file is left.
func TestFullDisk(t *testing.T) {
	dir := t.TempDir()
	if code, out := cli(tinyRun("-steps", "2", "-out", dir)...); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	fig := filepath.Join(t.TempDir(), "fig.svg")
	if code, out := cli("plot", "-o", fig, dir); code != 0 {
		t.Fatalf("plot: exit %d\n%s", code, out)
	}
	before := map[string][]byte{}
	for _, p := range []string{filepath.Join(dir, runs.LogFile), filepath.Join(dir, "run.json"), fig} {
		before[p], _ = os.ReadFile(p)
	}
	runs.WrapWriter = func(w io.Writer) io.Writer { return failingWriter{w} }
	defer func() { runs.WrapWriter = func(w io.Writer) io.Writer { return w } }()
	if code, out := cli("train", "-out", dir, "-resume", "-steps", "4", "-quiet"); code != 1 || !strings.Contains(out, "no space left") {
		t.Errorf("resume on a full disk: exit %d\n%s", code, out)
	}
	if code, out := cli("plot", "-o", fig, dir); code != 1 || !strings.Contains(out, "no space left") {
		t.Errorf("plot on a full disk: exit %d\n%s", code, out)
	}
	for p, b := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Errorf("%s changed by a failed write", p)
		}
		if _, err := os.Stat(p + ".tmp"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s.tmp left behind: %v", p, err)
		}
	}
	// plot -o onto a path that cannot be replaced (a directory) leaves no temporary file.
	runs.WrapWriter = func(w io.Writer) io.Writer { return w }
	blocked := filepath.Join(t.TempDir(), "dir.svg")
	os.MkdirAll(filepath.Join(blocked, "x"), 0o755)
	if code, _ := cli("plot", "-o", blocked, dir); code != 1 {
		t.Errorf("plot -o onto a directory: exit %d", code)
	}
	if _, err := os.Stat(blocked + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("plot -o left %s.tmp: %v", blocked, err)
	}
}
