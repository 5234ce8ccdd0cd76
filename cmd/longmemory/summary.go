package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
)

// summary prints one Markdown table row per run directory: what was trained, for how long,
// and its held-out loss (last and best) against the task's baseline. A multi-seed directory
// (train -seeds) gives one row: the median over its replicas with the range in brackets.
func summary(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("summary: give one or more run directories (written by `longmemory train -out DIR`)")
	}
	fmt.Fprintln(stdout, "| run | model | task | steps | wall time | final held-out loss | best | final accuracy | baseline |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|---|---|")
	for _, dir := range fs.Args() {
		if reps := replicaDirs(dir); len(reps) > 0 {
			if err := summaryReplicas(stdout, dir, reps); err != nil {
				return err
			}
			continue
		}
		meta, rows, err := readRun(dir)
		if err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		if len(rows) == 0 {
			return fmt.Errorf("summary: %s: the log is empty", dir)
		}
		final, best, acc := heldOut(rows)
		accText := "–"
		if !math.IsNaN(acc) {
			accText = fmt.Sprintf("%.1f%%", 100*acc)
		}
		last := rows[len(rows)-1]
		fmt.Fprintf(stdout, "| %s | %s %d | %s | %.0f | %.0f s | %.4f | %.4f | %s | %.4f |\n", filepath.Base(dir),
			meta.Preset.Model.Kind, meta.Preset.Model.Hidden, meta.Task, last.Step, last.Seconds, final, best, accText, meta.Baseline)
	}
	return nil
}

// summaryReplicas writes the row of a multi-seed run: steps and wall time of the slowest
// replica, median [min–max] over replicas of the final and best held-out loss, median
// final accuracy.
func summaryReplicas(stdout io.Writer, dir string, reps []string) error {
	var finals, bests, accs []float64
	var meta runFile
	steps, secs := math.Inf(1), 0.0
	for _, rep := range reps {
		m, rows, err := readRun(rep)
		if err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		meta = m
		if len(rows) == 0 {
			return fmt.Errorf("summary: %s: the log is empty", rep)
		}
		final, best, acc := heldOut(rows)
		last := rows[len(rows)-1]
		steps, secs = math.Min(steps, last.Step), math.Max(secs, last.Seconds)
		finals, bests, accs = append(finals, final), append(bests, best), append(accs, acc)
	}
	spread := func(v []float64) string {
		lo, hi := slices.Min(v), slices.Max(v)
		return fmt.Sprintf("%.4f [%.4f–%.4f]", median(v), lo, hi)
	}
	accText := "–"
	if a := median(accs); !math.IsNaN(a) {
		accText = fmt.Sprintf("%.1f%%", 100*a)
	}
	fmt.Fprintf(stdout, "| %s (%d seeds) | %s %d | %s | %.0f | %.0f s | %s | %s | %s | %.4f |\n", filepath.Base(dir), len(reps),
		meta.Preset.Model.Kind, meta.Preset.Model.Hidden, meta.Task, steps, secs, spread(finals), spread(bests), accText, meta.Baseline)
	return nil
}

// median returns the median of the non-NaN values of v (NaN if there are none).
func median(v []float64) float64 {
	s := slices.DeleteFunc(slices.Clone(v), math.IsNaN)
	if len(s) == 0 {
		return math.NaN()
	}
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// heldOut returns a log's last held-out loss and accuracy and its best held-out loss (NaN,
// +Inf and NaN if the held-out batch was never scored).
func heldOut(rows []logRow) (final, best, acc float64) {
	final, best, acc = math.NaN(), math.Inf(1), math.NaN()
	for _, r := range rows {
		if !math.IsNaN(r.EvalLoss) {
			final, acc = r.EvalLoss, r.EvalAccuracy
			best = math.Min(best, r.EvalLoss)
		}
	}
	return final, best, acc
}
