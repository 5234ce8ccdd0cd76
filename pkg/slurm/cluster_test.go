package slurm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urnn-notebooks/longmemory/pkg/slurm/slurmtest"
)

// stepper is a stand-in for the trainer: task i counts steps 1..8, one each 0.5 s, into
// task-i.txt. On TERM or USR1 it finishes its step, saves the count in ckpt-i and exits 0;
// started again it resumes from ckpt-i. Its file logs "resume N", "start N TIME",
// "step N", and "checkpoint N TIME" or "end N TIME" (TIME in seconds since the epoch).
const stepper = `i=$SLURM_ARRAY_TASK_ID; f=task-$i.txt; n=0
if [ -f ckpt-$i ]; then n=$(cat ckpt-$i); echo "resume $n" >> "$f"; fi
echo "start $n $(date +%s.%N)" >> "$f"
stop=0
trap 'stop=1' TERM USR1
while [ $n -lt 8 ] && [ $stop = 0 ]; do
	sleep 0.5 & wait $!
	[ $stop = 1 ] && break
	n=$((n+1)); echo "step $n" >> "$f"
done
echo $n > ckpt-$i.tmp && mv ckpt-$i.tmp ckpt-$i
if [ $stop = 1 ]; then echo "checkpoint $n $(date +%s.%N)" >> "$f"; exit 0; fi
echo "end $n $(date +%s.%N)" >> "$f"
`

// run is one run of a stepper task: from its start line to its checkpoint or end line.
type run struct {
	resumed    int     // the count it resumed from; -1 for a first run
	start, end float64 // seconds since the epoch
	stop       string  // "checkpoint" or "end"
	stopAt     int     // the count at the checkpoint or end
}

// taskLog is a stepper task's file, parsed.
type taskLog struct {
	runs  []run
	steps []int
}

func readTaskLog(t *testing.T, path string) taskLog {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var l taskLog
	resumed := -1
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		num := func(i int) float64 {
			if len(f) <= i {
				t.Fatalf("%s: line %q is short", path, line)
			}
			x, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				t.Fatalf("%s: line %q: %v", path, line, err)
			}
			return x
		}
		switch f[0] {
		case "resume":
			resumed = int(num(1))
		case "start":
			l.runs = append(l.runs, run{resumed: resumed, start: num(2)})
			resumed = -1
		case "step":
			l.steps = append(l.steps, int(num(1)))
		case "checkpoint", "end":
			if len(l.runs) == 0 {
				t.Fatalf("%s: %q before any start", path, line)
			}
			r := &l.runs[len(l.runs)-1]
			r.stop, r.stopAt, r.end = f[0], int(num(1)), num(2)
		default:
			t.Fatalf("%s: unknown line %q", path, line)
		}
	}
	return l
}

// slurmCmd runs a Slurm client command against c and returns its trimmed output.
func slurmCmd(t *testing.T, c *slurmtest.Cluster, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Env = append(os.Environ(), c.Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// waitUntil polls cond every 200 ms until it holds or timeout passes; then it fails t with
// what cond said last.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v; last: %s", what, timeout, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// fileHas is a waitUntil condition: path contains s.
func fileHas(path, s string) func() (bool, string) {
	return func() (bool, string) {
		data, err := os.ReadFile(path)
		return strings.Contains(string(data), s), fmt.Sprintf("%s: %q %v", path, data, err)
	}
}

// allCompleted is a waitUntil condition: job id has n tasks, all COMPLETED; it fails t
// at once when a task ended otherwise.
func allCompleted(t *testing.T, c *slurmtest.Cluster, id string, n int, states *[]TaskState) func() (bool, string) {
	return func() (bool, string) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		ts, err := Tasks(ctx, id, c.Env())
		if err != nil {
			return false, err.Error()
		}
		*states = ts
		done := 0
		for _, s := range ts {
			switch s.State {
			case "COMPLETED":
				done++
			case "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE":
				t.Fatalf("task %d of job %s ended %s: %v", s.Task, id, s.State, ts)
			}
		}
		return len(ts) == n && done == n, fmt.Sprint(ts)
	}
}

// checkResumed checks that a task's file shows a run stopped at a checkpoint after step 2
// or later and a run that resumed from it, and steps 1..8 each exactly once: the task
// neither redid nor skipped a step.
func checkResumed(t *testing.T, name string, l taskLog) {
	t.Helper()
	if len(l.runs) != 2 {
		t.Fatalf("%s ran %d times, want 2: %+v", name, len(l.runs), l.runs)
	}
	first, second := l.runs[0], l.runs[1]
	if first.stop != "checkpoint" || first.stopAt < 2 {
		t.Errorf("%s's first run stopped with %q at %d, want a checkpoint at 2 or later", name, first.stop, first.stopAt)
	}
	if second.resumed != first.stopAt || second.stop != "end" || second.stopAt != 8 {
		t.Errorf("%s's second run resumed from %d and stopped with %q at %d, want it to resume from %d and end at 8",
			name, second.resumed, second.stop, second.stopAt, first.stopAt)
	}
	checkSteps(t, name, l)
}

// checkSteps checks that a task counted 1..8, each once.
func checkSteps(t *testing.T, name string, l taskLog) {
	t.Helper()
	if want := []int{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(l.steps, want) {
		t.Errorf("%s's steps are %v, want %v", name, l.steps, want)
	}
}

// maxAtOnce returns how many runs overlapped at most.
func maxAtOnce(runs []run) int {
	type event struct {
		at    float64
		delta int
	}
	var ev []event
	for _, r := range runs {
		ev = append(ev, event{r.start, 1}, event{r.end, -1})
	}
	// At equal times an end comes before a start.
	sort.Slice(ev, func(i, j int) bool {
		if ev[i].at != ev[j].at {
			return ev[i].at < ev[j].at
		}
		return ev[i].delta < ev[j].delta
	})
	n, most := 0, 0
	for _, e := range ev {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// logRuns logs the runs' times in seconds from the first start.
func logRuns(t *testing.T, runs []run) {
	t0 := runs[0].start
	for _, r := range runs {
		t0 = min(t0, r.start)
	}
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, " [%.2f %.2f resumed from %d, %s at %d]", r.start-t0, r.end-t0, r.resumed, r.stop, r.stopAt)
	}
	t.Logf("runs:%s", b.String())
}

// TestArrayRequeueResumes runs 4 tasks, 2 at a time, requeues one of them with scontrol
// while it runs, and checks that it resumed from its checkpoint, that no more than 2 ran
// at once, and that a job submitted with SubmitAfter started after all had ended.
func TestArrayRequeueResumes(t *testing.T) {
	c := slurmtest.Start(t)
	// The name and the directory test sbatchQuote on sbatch itself.
	name, dir := `long "memory" #1`, filepath.Join(t.TempDir(), `run "a" 100%j #1`)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	id, err := Submit(ctx, Array{
		Name: name, Command: []string{"bash", "-c", stepper}, Tasks: 4, MaxAtOnce: 2,
		Time: "10:00", Dir: dir, Env: c.Env(), Extra: []string{"--cpus-per-task=1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := SubmitAfter(ctx, "after sweep", dir, []string{"bash", "-c", `echo "start 0 $(date +%s.%N)" > after.txt`}, id, c.Env())
	if err != nil {
		t.Fatal(err)
	}

	if got := slurmCmd(t, c, "squeue", "-h", "-j", id, "-O", "Name:64"); !strings.HasPrefix(got, name) {
		t.Errorf("squeue shows the job's name as %q, want %q", got, name)
	}
	waitUntil(t, 30*time.Second, "step 2 of task 1", fileHas(filepath.Join(dir, "task-1.txt"), "step 2\n"))
	slurmCmd(t, c, "scontrol", "requeue", id+"_1")
	var states []TaskState
	waitUntil(t, 90*time.Second, "4 completed tasks", allCompleted(t, c, id, 4, &states))
	for _, s := range states {
		if s.Task == 1 && s.Restarts < 1 || s.Task != 1 && s.Restarts != 0 {
			t.Errorf("task %d restarted %d times; want task 1 1 or more times, the others never", s.Task, s.Restarts)
		}
	}

	var all []run
	var lastEnd float64
	for i := range 4 {
		name := fmt.Sprintf("task %d", i)
		l := readTaskLog(t, filepath.Join(dir, fmt.Sprintf("task-%d.txt", i)))
		if i == 1 {
			checkResumed(t, name, l)
		} else if len(l.runs) != 1 || l.runs[0].stop != "end" {
			t.Errorf("%s ran %+v, want one run to its end", name, l.runs)
		} else {
			checkSteps(t, name, l)
		}
		all = append(all, l.runs...)
		for _, r := range l.runs {
			lastEnd = max(lastEnd, r.end)
		}
	}
	logRuns(t, all)
	if n := maxAtOnce(all); n != 2 {
		t.Errorf("at most %d tasks ran at once, want 2 (MaxAtOnce): %+v", n, all)
	}
	log, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("slurm-%s_1.out", id)))
	if err != nil || !strings.Contains(string(log), "SIGTERM; forwarding it to PID") {
		t.Errorf("task 1's log (%v) does not show the script forwarding SIGTERM:\n%s", err, log)
	}

	waitUntil(t, 30*time.Second, "start of the job after the array", fileHas(filepath.Join(dir, "after.txt"), "start"))
	a := readTaskLog(t, filepath.Join(dir, "after.txt"))
	if len(a.runs) != 1 || a.runs[0].start <= lastEnd {
		t.Errorf("the job after the array started at %+v, want once after the last task ended at %.3f", a.runs, lastEnd)
	}
	ts, err := Tasks(ctx, after, c.Env())
	if err != nil || len(ts) != 1 || ts[0].Task != -1 {
		t.Errorf("Tasks of the single job %s: %v, %v; want one with Task -1", after, ts, err)
	}
}

// TestArrayRequeuesItselfOnUSR1 sends a running task the time-limit warning (SIGUSR1 to its
// batch shell) and checks that the task checkpointed, requeued itself, and completed from
// its checkpoint.
func TestArrayRequeuesItselfOnUSR1(t *testing.T) {
	c := slurmtest.Start(t)
	dir := t.TempDir()
	id, err := Submit(t.Context(), Array{Name: "usr1", Command: []string{"bash", "-c", stepper}, Tasks: 2, Dir: dir, Env: c.Env()})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "step 2 of task 0", fileHas(filepath.Join(dir, "task-0.txt"), "step 2\n"))
	slurmCmd(t, c, "scancel", "--signal=USR1", "--batch", id+"_0")
	var states []TaskState
	waitUntil(t, 60*time.Second, "2 completed tasks", allCompleted(t, c, id, 2, &states))
	if want := []TaskState{{0, "COMPLETED", 1}, {1, "COMPLETED", 0}}; !slices.Equal(states, want) {
		t.Errorf("tasks %v, want %v", states, want)
	}
	checkResumed(t, "task 0", readTaskLog(t, filepath.Join(dir, "task-0.txt")))
	log, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("slurm-%s_0.out", id)))
	for _, want := range []string{"SIGUSR1; forwarding it to PID", "after SIGUSR1; requeueing"} {
		if err != nil || !strings.Contains(string(log), want) {
			t.Errorf("task 0's log (%v) lacks %q:\n%s", err, want, log)
		}
	}
}
