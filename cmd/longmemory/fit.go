package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
	return ridgeTable(stdout, fs.Args())
}

// ridgeTable writes one Markdown row per run directory: its replicas' closed-form fits
// (ridge.json; replicas without one are left out and counted) against the held-out loss
// its gradient-trained readout ends at (runs.HeldOut of the same replicas' logs), then the
// machines that made the fits.
func ridgeTable(w io.Writer, dirs []string) error {
	fmt.Fprintln(w, "| run | fits | sequences, β | readout in closed form: held-out loss, median [min–max] | solve the task | accuracy | seconds of a fit (median), of all added | readout by gradient: final held-out loss (steps) | baseline |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	var hosts []string
	for _, dir := range dirs {
		reps := runs.RunDirs(dir)
		var losses, accs, secs, grads []float64
		var settings []string
		var meta runs.Meta
		gradSteps := math.MaxInt
		for _, rep := range reps {
			m, log, err := runs.Read(rep)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			if m.Preset.Name != "" {
				meta = m
			}
			if final, _, _ := runs.HeldOut(log); !math.IsNaN(final) {
				grads = append(grads, final)
				gradSteps = min(gradSteps, log[len(log)-1].Step)
			}
			r, err := runs.ReadRidge(rep)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			losses, secs = append(losses, r.Loss), append(secs, r.Seconds)
			if r.Accuracy != nil {
				accs = append(accs, *r.Accuracy)
			}
			if s := fmt.Sprintf("%d, %g", r.Sequences, r.Beta); !slices.Contains(settings, s) {
				settings = append(settings, s)
			}
			if !slices.Contains(hosts, r.Host) {
				hosts = append(hosts, r.Host)
			}
		}
		name := filepath.Base(dir)
		if len(losses) == 0 {
			fmt.Fprintf(w, "| %s | 0 of %d | – | – | – | – | – | – | %.4f |\n", name, len(reps), meta.Baseline)
			continue
		}
		solvedLoss := runs.SolvedLoss(meta.Preset.Task.Kind, meta.Baseline)
		solved := 0
		for _, l := range losses {
			if l < solvedLoss {
				solved++
			}
		}
		accText, gradText := "–", "–"
		if len(accs) > 0 {
			accText = fmt.Sprintf("%.1f%%", 100*runs.Median(accs))
		}
		if len(grads) > 0 {
			gradText = fmt.Sprintf("%.4f [%.4f–%.4f] (%d)", runs.Median(grads), slices.Min(grads), slices.Max(grads), gradSteps)
		}
		total := 0.0
		for _, s := range secs {
			total += s
		}
		fmt.Fprintf(w, "| %s | %d of %d | %s | %.4f [%.4f–%.4f] | %d of %d (below %.4f) | %s | %.1f s, %.0f s | %s | %.4f |\n",
			name, len(losses), len(reps), strings.Join(settings, "; "), runs.Median(losses), slices.Min(losses), slices.Max(losses),
			solved, len(losses), solvedLoss, accText, runs.Median(secs), total, gradText, meta.Baseline)
	}
	if len(hosts) > 0 {
		fmt.Fprintf(w, "\nThe fits ran on %s, one after another.\n", strings.Join(hosts, " and "))
	}
	return nil
}
