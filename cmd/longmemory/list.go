package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
)

func list(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stdout)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	for _, p := range experiments.Presets() {
		fmt.Fprintln(stdout, p)
	}
	return nil
}
