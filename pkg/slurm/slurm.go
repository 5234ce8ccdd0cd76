// Package slurm submits job arrays to Slurm whose tasks survive time limits, requeues and
// preemption by checkpointing: each task runs a command that saves a checkpoint and exits
// on SIGTERM or SIGUSR1 and resumes from that checkpoint when started again. It drives the
// Slurm client commands (sbatch, squeue), which must be in PATH.
package slurm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DefaultWarnBefore is the WarnBefore that a zero Array.WarnBefore stands for: seconds
// before the time limit at which a task gets SIGUSR1.
const DefaultWarnBefore = 120

// Array is a job array: task i runs Command with the task index available as
// $SLURM_ARRAY_TASK_ID.
type Array struct {
	Name       string   // job name (--job-name); "" for sbatch's default
	Command    []string // argv run by each task; the program reads SLURM_ARRAY_TASK_ID
	Tasks      int      // array size: tasks 0..Tasks-1
	MaxAtOnce  int      // tasks running at once (the %N of --array); 0 for no limit
	Time       string   // time limit (--time), e.g. "8:00:00"; "" for the partition's default
	WarnBefore int      // seconds before the time limit at which the task gets SIGUSR1 (--signal=B:USR1@N); 0 for DefaultWarnBefore
	Dir        string   // working directory (--chdir), where the logs slurm-JOB_TASK.out go; "" for the submitting process's; no backslash
	Extra      []string // further sbatch arguments, passed on sbatch's command line verbatim
	Env        []string // environment entries added to sbatch's, e.g. "SLURM_CONF=..."; a task inherits them
}

// TaskState is one array task as Slurm reports it.
type TaskState struct {
	Task     int    // the array index; -1 for a job that is not an array
	State    string // Slurm's job state: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
	Restarts int    // how many times the task was requeued
}

// body is the batch script after its directives, with @COMMAND@ for the command's line.
const body = `# The command runs in the background so that this shell handles signals while it runs.
# USR1 (the time-limit warning of --signal, or scancel --signal=USR1 --batch): forwarded to
# the command; once the command has saved its checkpoint and exited, the task requeues
# itself, to resume when it starts again. TERM (scontrol requeue, scancel, preemption):
# forwarded to the command, and the shell waits for it to exit.
task="${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
requeue=0
child=
on_usr1() {
	requeue=1
	echo "slurm: task $task: SIGUSR1; forwarding it to PID $child" >&2
	[ -n "$child" ] && kill -USR1 "$child" 2>/dev/null
}
on_term() {
	echo "slurm: task $task: SIGTERM; forwarding it to PID $child" >&2
	[ -n "$child" ] && kill -TERM "$child" 2>/dev/null
}
trap on_usr1 USR1
trap on_term TERM
@COMMAND@ &
child=$!
# wait returns early when a signal is handled: wait again until the command has exited,
# then once more for its exit status.
while :; do
	wait "$child"
	kill -0 "$child" 2>/dev/null || break
done
wait "$child"
status=$?
if [ "$requeue" = 1 ]; then
	echo "slurm: task $task: the command exited with status $status after SIGUSR1; requeueing" >&2
	scontrol requeue "$task" && exit 0
	echo "slurm: task $task: scontrol requeue failed" >&2
fi
exit "$status"
`

// Script returns the batch script of a: its #SBATCH directives (job name, array range,
// requeue, the USR1 warning, appended output to slurm-%A_%a.out, working directory, time
// limit) and a bash script that runs a.Command in the background. On SIGUSR1 (the time-limit
// warning) the script forwards the signal to the command, waits for it to save its
// checkpoint and exit, and requeues the task (scontrol requeue JOBID_TASK), which resumes
// from the checkpoint when it starts again; a command that had already finished is then
// started once more, so it must see from its checkpoint that it is done. On SIGTERM
// (scontrol requeue, scancel, preemption) the script forwards the signal and waits for the
// command.
func Script(a Array) (string, error) {
	if a.Tasks < 1 {
		return "", fmt.Errorf("slurm: Tasks is %d, want 1 or more", a.Tasks)
	}
	if a.MaxAtOnce < 0 {
		return "", fmt.Errorf("slurm: MaxAtOnce is %d, want 0 (no limit) or more", a.MaxAtOnce)
	}
	if a.WarnBefore < 0 {
		return "", fmt.Errorf("slurm: WarnBefore is %d, want 0 (%d s) or more seconds", a.WarnBefore, DefaultWarnBefore)
	}
	if len(a.Command) == 0 {
		return "", fmt.Errorf("slurm: Command is empty, want a program and its arguments")
	}
	warn := a.WarnBefore
	if warn == 0 {
		warn = DefaultWarnBefore
	}
	arrayRange := fmt.Sprintf("0-%d", a.Tasks-1)
	if a.MaxAtOnce > 0 {
		arrayRange += fmt.Sprintf("%%%d", a.MaxAtOnce)
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	d := directives{b: &b}
	d.add("job-name", a.Name)
	d.add("array", arrayRange)
	d.flag("requeue")
	d.add("signal", fmt.Sprintf("B:USR1@%d", warn))
	d.add("open-mode", "append")
	dir, output, err := logPath(a.Dir, "slurm-%A_%a.out")
	if err != nil {
		return "", err
	}
	d.add("output", output)
	d.add("chdir", dir)
	d.add("time", a.Time)
	if d.err != nil {
		return "", d.err
	}
	b.WriteString("\n")
	b.WriteString(strings.Replace(body, "@COMMAND@", shellCommand(a.Command), 1))
	return b.String(), nil
}

// logPath returns dir made absolute and the --output path of a log named by pattern (a
// file name pattern of sbatch: %A, %a, %j, ...) in it; for dir "" they are "" and pattern,
// which sbatch takes as relative to its working directory. Slurm expands the patterns of
// the whole path, so a "%" of dir is written "%%"; a backslash in the path would turn the
// expansion off, so dir must have none.
func logPath(dir, pattern string) (absDir, output string, err error) {
	if dir == "" {
		return "", pattern, nil
	}
	if strings.Contains(dir, `\`) {
		return "", "", fmt.Errorf("slurm: directory %q has a backslash, which Slurm reads in the log path as 'expand no %%A, %%a, %%j': want none", dir)
	}
	absDir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("slurm: directory %q: %w", dir, err)
	}
	return absDir, filepath.Join(strings.ReplaceAll(absDir, "%", "%%"), pattern), nil
}

// directives writes #SBATCH lines; the first bad value is kept in err.
type directives struct {
	b   *strings.Builder
	err error
}

// flag writes "#SBATCH --name".
func (d *directives) flag(name string) { fmt.Fprintf(d.b, "#SBATCH --%s\n", name) }

// add writes "#SBATCH --name=value", quoted for sbatch; an empty value writes nothing.
func (d *directives) add(name, value string) {
	if value == "" || d.err != nil {
		return
	}
	q, err := sbatchQuote(value)
	if err != nil {
		d.err = fmt.Errorf("slurm: --%s: %w", name, err)
		return
	}
	fmt.Fprintf(d.b, "#SBATCH --%s=%s\n", name, q)
}

// sbatchQuote quotes s for an #SBATCH line: sbatch splits those lines at spaces, takes
// double quotes and backslashes as in a shell, and reads "#" outside quotes as the start of
// a comment. A line ends at a newline, so none can be quoted.
func sbatchQuote(s string) (string, error) {
	if i := strings.IndexAny(s, "\n\r\x00"); i >= 0 {
		return "", fmt.Errorf("%q has a newline or NUL at byte %d; an #SBATCH line can hold neither", s, i)
	}
	if !strings.ContainsAny(s, " \t\"\\#'") {
		return s, nil
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`, nil
}

// safeWord matches the words a shell reads as themselves.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for bash: s itself when it is made of letters, digits and
// _@%+=:,./- only, else s in single quotes, where each single quote of s ends the quoted
// part, stands escaped by a backslash, and starts the next.
func shellQuote(s string) string {
	if safeWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellCommand is argv as a bash command line.
func shellCommand(argv []string) string {
	q := make([]string, len(argv))
	for i, s := range argv {
		q[i] = shellQuote(s)
	}
	return strings.Join(q, " ")
}

// Submit submits a's batch script with sbatch --parsable and returns the array's job id;
// task i is then JOBID_i.
func Submit(ctx context.Context, a Array) (jobID string, err error) {
	script, err := Script(a)
	if err != nil {
		return "", err
	}
	return sbatch(ctx, script, a.Extra, a.Env)
}

// afterID matches a job id, or an array task's JOBID_TASK.
var afterID = regexp.MustCompile(`^[0-9]+(_[0-9]+)?$`)

// SubmitAfter submits a single job named name that runs command in dir ("" for the
// submitting process's directory; no backslash), logging to slurm-JOBID.out there, once
// every task of job afterAny has ended, however it ended (--dependency=afterany). env is
// added to sbatch's environment as in Array.Env. It returns the new job's id.
func SubmitAfter(ctx context.Context, name, dir string, command []string, afterAny string, env []string) (string, error) {
	if len(command) == 0 {
		return "", fmt.Errorf("slurm: the command is empty, want a program and its arguments")
	}
	if !afterID.MatchString(afterAny) {
		return "", fmt.Errorf("slurm: job id %q to run after is not a job id (digits, or JOBID_TASK)", afterAny)
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	d := directives{b: &b}
	d.add("job-name", name)
	d.add("dependency", "afterany:"+afterAny)
	dir, output, err := logPath(dir, "slurm-%j.out")
	if err != nil {
		return "", err
	}
	d.add("output", output)
	d.add("chdir", dir)
	if d.err != nil {
		return "", d.err
	}
	b.WriteString("\nexec " + shellCommand(command) + "\n")
	return sbatch(ctx, b.String(), nil, env)
}

// sbatch submits script, read from standard input, and returns the job id it prints.
func sbatch(ctx context.Context, script string, extra, env []string) (string, error) {
	args := append([]string{"--parsable"}, extra...)
	cmd := exec.CommandContext(ctx, "sbatch", args...)
	cmd.Stdin = strings.NewReader(script)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("slurm: sbatch %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	// --parsable prints "JOBID" or "JOBID;CLUSTER".
	id, _, _ := strings.Cut(strings.TrimSpace(stdout.String()), ";")
	if !afterID.MatchString(id) {
		return "", fmt.Errorf("slurm: sbatch printed %q, want a job id", stdout.String())
	}
	return id, nil
}

// Tasks returns the state and restart count of each task of job jobID, in the order of the
// task index, from squeue. squeue knows a job from its submission until MinJobAge (slurm.conf;
// 300 s by default) after it ended; then Tasks fails. env is added to squeue's environment as
// in Array.Env.
func Tasks(ctx context.Context, jobID string, env []string) ([]TaskState, error) {
	if !afterID.MatchString(jobID) {
		return nil, fmt.Errorf("slurm: job id %q is not a job id (digits, or JOBID_TASK)", jobID)
	}
	// -r lists the array's tasks one a line, pending ones too; -t all keeps the ended ones.
	args := []string{"-h", "-r", "-t", "all", "-j", jobID, "-O", "ArrayTaskID:32,State:32,RestartCnt:16"}
	cmd := exec.CommandContext(ctx, "squeue", args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("slurm: squeue %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return parseTasks(stdout.String())
}

// parseTasks reads the lines of squeue -O ArrayTaskID,State,RestartCnt.
func parseTasks(out string) ([]TaskState, error) {
	var tasks []TaskState
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("slurm: squeue line %q has %d fields, want 3 (task, state, restarts)", strings.TrimSpace(line), len(f))
		}
		task := -1
		if f[0] != "N/A" {
			n, err := strconv.Atoi(f[0])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("slurm: squeue line %q: task %q is not an index", strings.TrimSpace(line), f[0])
			}
			task = n
		}
		restarts, err := strconv.Atoi(f[2])
		if err != nil || restarts < 0 {
			return nil, fmt.Errorf("slurm: squeue line %q: restart count %q is not a count", strings.TrimSpace(line), f[2])
		}
		tasks = append(tasks, TaskState{Task: task, State: f[1], Restarts: restarts})
	}
	slices.SortFunc(tasks, func(a, b TaskState) int { return a.Task - b.Task })
	return tasks, nil
}
