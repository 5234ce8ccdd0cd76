package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/urnn-notebooks/longmemory/pkg/reports"
)

// reportsCmd writes the project's reports and figures from the run directories as they stand
// (package reports), training and evaluating nothing.
func reportsCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reports", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runsDir := fs.String("runs", "docs/runs", "the run directories' root `directory` (named so in the reports)")
	docs := fs.String("docs", "docs", "the `directory` of claims.tsv, variants.tsv, successors.tsv, figures.tsv, runs.tsv and RESULTS.md")
	out := fs.String("out", "", "write the reports and figures into this `directory` instead (default: -docs)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: longmemory reports [-runs docs/runs] [-docs docs] [-out DIR]\n\n"+
			"Writes VERDICTS.md, verdicts.json, SUCCESSORS.md, ABLATIONS.md, the verdict tables of RESULTS.md and the\n"+
			"figures of figures.tsv (into DIR/figures) from the run directories as they stand; trains nothing.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	if err := reports.Write(reports.Options{Runs: *runsDir, Docs: *docs, Out: *out, Log: stdout}); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}
