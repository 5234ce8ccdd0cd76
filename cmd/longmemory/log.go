package main

import (
	"fmt"
	"io"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// logCmd prints a run's log as CSV (runs.WriteCSV).
func logCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: longmemory log DIR   prints DIR's log (log.gz) as CSV")
		return errUsage
	}
	log, err := runs.ReadLog(runs.LogPath(args[0]))
	if err != nil {
		return err
	}
	return runs.WriteCSV(stdout, log)
}
