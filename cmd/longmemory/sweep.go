package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/sweep"
)

func sweepCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("runs", "docs/runs", "the runs' root `directory`: run NAME lives in DIR/NAME")
	status := fs.Bool("status", false, "print every run's steps against its horizon, from the run directories; train nothing")
	task := fs.Int("task", -1, "train only the run of this `index` (0 = the file's first run): a Slurm array task; default $SLURM_ARRAY_TASK_ID when set")
	only := fs.String("only", "", "train (or submit, or show) only the runs of these comma-separated `names`")
	slurmFlags := bindSlurmFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: longmemory sweep [flags] RUNS.tsv\n\nTrains every run of the runs file to its horizon, in its order, resuming where each stopped; a stop\nsignal (Ctrl-C, SIGTERM, SIGHUP, SIGUSR1) checkpoints every running replica and ends the sweep.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	file := fs.Arg(0)
	all, err := sweep.Read(file)
	if err != nil {
		return err
	}
	if *task < 0 && !*status && !slurmFlags.submit { // an array task trains its line
		if id := os.Getenv("SLURM_ARRAY_TASK_ID"); id != "" {
			if *task, err = strconv.Atoi(id); err != nil {
				return fmt.Errorf("sweep: SLURM_ARRAY_TASK_ID = %q, want an integer", id)
			}
		}
	}
	selected := all
	switch {
	case *task >= len(all):
		return fmt.Errorf("sweep: -task %d, want 0..%d (%s lists %d runs)", *task, len(all)-1, file, len(all))
	case *task >= 0:
		selected = all[*task : *task+1]
	case *only != "":
		if selected, err = sweep.Only(all, strings.Split(*only, ",")); err != nil {
			return fmt.Errorf("sweep: -only: %w in %s", err, file)
		}
	}
	if *status {
		states, err := sweep.Status(*root, selected)
		if err != nil {
			return err
		}
		return sweep.WriteStatus(stdout, states)
	}
	if slurmFlags.submit {
		return submitSweep(file, *root, selected, slurmFlags, stdout, stderr)
	}
	b, err := backend.New()
	if err != nil {
		return err
	}
	ctx, stop := runs.StopContext(context.Background())
	defer stop()
	say := func(s string) { fmt.Fprintf(stdout, "sweep: %s\n", s) }
	opt := sweep.Options{
		Train: runs.Options{Backend: b, Restart: true, Notice: func(s string) { fmt.Fprintf(stderr, "longmemory: %s\n", s) }},
		Then:  func(ctx context.Context, r sweep.Run, dir string) error { return then(r, dir, stdout, stderr) },
		Log:   say,
	}
	err = sweep.Train(ctx, *root, selected, opt)
	if sig := runs.StopCause(ctx); sig != nil {
		say(fmt.Sprintf("%v: every running replica saved a checkpoint; run the same command again to continue", sig))
		return interrupted{sig}
	}
	return err
}

// then does what a run's then column asks once it is trained: "fit FLAGS" fits an ESN run's
// readouts in closed form (fitCmd); "eval" scores every replica on the test split and records
// it in the replica's runs.TestFile (evalCmd -save, which skips a replica recorded already).
func then(r sweep.Run, dir string, stdout, stderr io.Writer) error {
	switch r.Then[0] {
	case "fit":
		return fitCmd(append(append([]string{}, r.Then[1:]...), dir), io.Discard, stderr)
	case "eval":
		if err := evalCmd([]string{"-save", dir}, io.Discard, stderr); err != nil {
			return err
		}
		summary, err := runs.TestSummary(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "sweep: %s: test split: %s\n", r.Name, summary)
		return nil
	}
	return fmt.Errorf("sweep: %s: then %q, want fit or eval", r.Name, r.Then[0])
}
