// Command longmemory trains the papers' models from the command line (for runs longer than
// a notebook session), plots training logs, and lists the presets.
//
//	longmemory list                               the presets (papers' runs)
//	longmemory train -preset NAME -out DIR        train a preset; -resume continues DIR's run
//	longmemory train -model urnn -hidden 128 -task copy -T 100 -steps 500 -out DIR
//	longmemory plot -o fig.png DIR1 DIR2 …        loss (or -penalty: orthogonality penalty) against iteration (.png or .svg)
//	longmemory eval [-n 10000] [-save] DIR         test-set loss and accuracy of DIR's checkpoint (-save: into test.json)
//	longmemory summary DIR1 DIR2 …                 a Markdown table of the runs
//	longmemory verdict [-runs DIR] CLAIMS.tsv        the papers' claims against the runs: reproduced or not
//	longmemory fit [-sequences N] [-beta β] DIR…      an ESN run's readout in closed form (ridge.json), against its gradient-trained one
//	longmemory sweep [-status] [-slurm] RUNS.tsv    train every run of a runs file to its horizon, here or as a Slurm job array
//	longmemory reports [-runs DIR] [-docs DIR] [-out DIR] the reports (docs/*.md) and figures from the run directories; trains nothing
//	longmemory log DIR                             DIR's log as CSV
//	longmemory host                                this machine as run.json records it (CPU, vector extension, CPUs)
//
// `train` writes DIR/run.json (the preset), DIR/log.gz (every step; held-out loss at
// evaluation steps) and checkpoints, every -checkpoint-every steps and on Ctrl-C, SIGTERM or
// SIGHUP (then it exits with 128 + the signal's number). A lock file keeps a second `train`
// out of a run directory in use. The run directory is package runs's, which the notebooks'
// Train writes too: plot, summary, eval and verdict read notebook runs alike. The backend is chosen by GOMLX_BACKEND (pure Go by default).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: longmemory <command> [flags]

commands:
  list    list the presets
  train   train a preset or a custom configuration (longmemory train -h)
  plot    plot training logs as a PNG or SVG figure (longmemory plot -h)
  eval    score a run's latest checkpoint on the test set (longmemory eval -h)
  summary one Markdown table row per run: steps, wall time, held-out loss, baseline
  verdict the papers' claims (a tab-separated file) against their runs: reproduced, not reproduced or open
  fit     fit the readout of an ESN run's replicas in closed form (ridge regression), against their gradient-trained one
  sweep   train every run of a runs file (docs/runs.tsv) to its horizon, here or on Slurm (longmemory sweep -h)
  reports write the reports and figures of docs/ from the run directories as they stand (longmemory reports -h)
  log     print a run's log as CSV
  host    this machine as run.json records it (CPU, vector extension, CPUs)
`

// run executes one command and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "host":
		fmt.Fprintln(stdout, runs.Host())
	case "list":
		err = list(args[1:], stdout)
	case "train":
		err = trainCmd(args[1:], stdout, stderr)
	case "plot":
		err = plot(args[1:], stdout, stderr)
	case "eval":
		err = evalCmd(args[1:], stdout, stderr)
	case "summary":
		err = summary(args[1:], stdout, stderr)
	case "verdict":
		err = verdictCmd(args[1:], stdout, stderr)
	case "fit":
		err = fitCmd(args[1:], stdout, stderr)
	case "sweep":
		err = sweepCmd(args[1:], stdout, stderr)
	case "reports":
		err = reportsCmd(args[1:], stdout, stderr)
	case "log":
		err = logCmd(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "longmemory: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if err == errUsage {
			return 2
		}
		if sig := (interrupted{}); errors.As(err, &sig) {
			return sig.exitCode() // train has said where the checkpoint is
		}
		fmt.Fprintln(stderr, "longmemory:", err)
		return 1
	}
	return 0
}
