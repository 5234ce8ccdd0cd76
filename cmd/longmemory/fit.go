package main

import (
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// fitCmd fits the linear readout of every replica of the given runs in closed form
// (runs.FitRidge: ridge regression on the states of the untrained model, the way echo state
// networks are trained) and records each fit in the replica's ridge.json; a replica whose
// ridge.json holds a fit with the same -sequences and -beta is left as it is, so that the
// command resumes where it stopped. It then prints a Markdown table, one row per run: the
// fitted readouts' held-out loss beside the gradient-trained readout's of the same replicas.
// With -report it fits nothing and prints the table of the fits recorded.
func fitCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sequences := fs.Int("sequences", 2000, "training sequences whose states the readout is regressed on")
	beta := fs.Float64("beta", 1, "ridge penalty β (0: ordinary least squares)")
	report := fs.Bool("report", false, "fit nothing: print the table of the fits recorded")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: longmemory fit [-sequences 2000] [-beta 1] [-report] DIR...\n\n"+
			"Fits the linear readout (the ESN's) of every replica of the runs in DIR in closed form, records it in\n"+
			"the replica's ridge.json, and prints the fits' held-out losses beside the gradient-trained readouts'.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errUsage
	}
	if *sequences < 1 {
		return fmt.Errorf("fit: -sequences %d, want >= 1", *sequences)
	}
	if !(*beta >= 0) || math.IsInf(*beta, 1) {
		return fmt.Errorf("fit: -beta %g, want a finite β >= 0", *beta)
	}
	for _, dir := range fs.Args() {
		if _, err := runs.ReadMeta(runs.RunDirs(dir)[0]); err != nil {
			return fmt.Errorf("fit: %w", err)
		}
	}
	if !*report {
		b, err := backend.New()
		if err != nil {
			return err
		}
		for _, dir := range fs.Args() {
			for _, rep := range runs.RunDirs(dir) {
				if r, err := runs.ReadRidge(rep); err == nil && r.Sequences == *sequences && r.Beta == *beta {
					continue
				}
				r, err := runs.FitRidge(b, rep, *sequences, *beta)
				if err != nil {
					return err
				}
				fmt.Fprintf(stderr, "fit %s: held-out loss %.4f, %d scored steps, %.1f s\n", rep, r.Loss, r.Rows, r.Seconds)
			}
		}
	}
	return runs.RidgeTable(stdout, fs.Args())
}
