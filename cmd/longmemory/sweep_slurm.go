package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urnn-notebooks/longmemory/pkg/slurm"
	"github.com/urnn-notebooks/longmemory/pkg/sweep"
)

// slurmFlags are sweep's flags for a submission to Slurm.
type slurmFlags struct {
	submit    bool
	time      string
	maxAtOnce int
	sbatch    string
	reports   string
}

func bindSlurmFlags(fs *flag.FlagSet) *slurmFlags {
	f := new(slurmFlags)
	fs.BoolVar(&f.submit, "slurm", false, "submit the runs not yet done as a Slurm job array (a task per run, requeued with its checkpoints at its time limit), then the reports as a job after it")
	fs.StringVar(&f.time, "time", "", "with -slurm: each task's time limit (sbatch --time), e.g. 8:00:00; a task warned 120 s before it checkpoints and requeues itself")
	fs.IntVar(&f.maxAtOnce, "max-at-once", 0, "with -slurm: tasks running at once (0: as many as the cluster gives)")
	fs.StringVar(&f.sbatch, "sbatch", "", "with -slurm: further sbatch arguments, space-separated (e.g. \"--partition=cpu --cpus-per-task=8\")")
	fs.StringVar(&f.reports, "reports", "make reports", "with -slurm: the command the job after the array runs in this directory (\"\" for none)")
	return f
}

// submitSweep submits the runs of file that are not done as a job array. Each task runs a
// snapshot of this binary on a snapshot of the runs file that lists only those runs, both in
// build/sweep/<time>/ (the cluster's nodes must see this directory and the runs root: a
// shared file system), so that editing or rebuilding here does not change queued tasks.
func submitSweep(file, root string, all []sweep.Run, f *slurmFlags, stdout, stderr io.Writer) error {
	if f.maxAtOnce < 0 {
		return fmt.Errorf("sweep: -max-at-once %d, want >= 0", f.maxAtOnce)
	}
	states, err := sweep.Status(root, all)
	if err != nil {
		return err
	}
	keep := map[int]bool{}
	var todo []string
	for _, s := range states {
		if !s.Done() {
			keep[s.Run.Line] = true
			todo = append(todo, s.Run.Name)
		}
	}
	if len(todo) == 0 {
		fmt.Fprintf(stdout, "sweep: every run of %s is done; nothing to submit\n", file)
		return nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	snap := filepath.Join(cwd, "build", "sweep", time.Now().Format("20060102-150405"))
	if err := os.MkdirAll(snap, 0o755); err != nil {
		return err
	}
	runsFile := filepath.Join(snap, filepath.Base(file))
	if err := snapshotLines(file, runsFile, keep); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	bin := filepath.Join(snap, "longmemory")
	if err := copyFile(self, bin, 0o755); err != nil {
		return err
	}
	ctx := context.Background()
	job, err := slurm.Submit(ctx, slurm.Array{
		Name: "longmemory-sweep", Command: []string{bin, "sweep", "-runs", absRoot, runsFile},
		Tasks: len(todo), MaxAtOnce: f.maxAtOnce, Time: f.time, Dir: snap, Extra: strings.Fields(f.sbatch),
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sweep: job array %s: %d tasks, one per run not yet done (%s); logs in %s/slurm-%s_<task>.out\n",
		job, len(todo), strings.Join(todo, ", "), snap, job)
	if f.reports != "" {
		rep, err := slurm.SubmitAfter(ctx, "longmemory-reports", cwd, strings.Fields(f.reports), job, nil)
		if err != nil {
			return fmt.Errorf("sweep: the array %s is submitted, the reports job is not: %w", job, err)
		}
		fmt.Fprintf(stdout, "sweep: job %s runs %q in %s once every task of %s has ended\n", rep, f.reports, cwd, job)
	}
	fmt.Fprintf(stdout, "follow it with: squeue -j %s   and   longmemory sweep -status -runs %s %s\n", job, root, file)
	return nil
}

// snapshotLines copies file to dst, keeping its comments and header and, of its runs, those
// on the lines keep names.
func snapshotLines(file, dst string, keep map[int]bool) error {
	in, err := os.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	var b strings.Builder
	sc := bufio.NewScanner(in)
	header := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		isRun := header && strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#")
		if !header && strings.Join(strings.Split(line, "\t"), "\t") == strings.Join(sweep.Columns, "\t") {
			header = true
		}
		if !isRun || keep[n] {
			b.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return os.WriteFile(dst, []byte(b.String()), 0o644)
}

// copyFile copies src to dst with mode perm.
func copyFile(src, dst string, perm os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, perm)
}
