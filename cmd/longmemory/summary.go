package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
)

// summary prints one Markdown table row per run directory: what was trained, for how long,
// and its held-out loss (last and best) against the task's baseline.
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
		meta, rows, err := readRun(dir)
		if err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		if len(rows) == 0 {
			return fmt.Errorf("summary: %s: the log is empty", dir)
		}
		final, best, acc := math.NaN(), math.Inf(1), math.NaN()
		for _, r := range rows {
			if !math.IsNaN(r.EvalLoss) {
				final, acc = r.EvalLoss, r.EvalAccuracy
				best = math.Min(best, r.EvalLoss)
			}
		}
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
