package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// summary prints one Markdown table row per run directory (runs.Summary): what was trained,
// for how long, and its held-out loss (last and best) against the task's baseline. A
// multi-seed directory (train -seeds) gives one row: the median over its replicas with the
// range in brackets.
func summary(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("summary: give one or more run directories (written by `longmemory train -out DIR`)")
	}
	if err := runs.Summary(stdout, fs.Args()...); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return nil
}
