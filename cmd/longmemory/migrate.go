package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// migrateCmd rewrites run directories in today's formats (runs.Migrate): every run directory
// and replica under each argument.
func migrateCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: longmemory migrate DIR…   rewrites the runs under each DIR once: log.csv → log.gz, the newest checkpoint without its log")
	}
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errUsage
	}
	b, err := backend.New()
	if err != nil {
		return err
	}
	for _, root := range fs.Args() {
		var dirs []string
		err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && filepath.Base(p) == runs.Checkpoints {
				return filepath.SkipDir
			}
			if !e.IsDir() && e.Name() == runs.MetaFile {
				dirs = append(dirs, filepath.Dir(p))
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(dirs) == 0 {
			return fmt.Errorf("migrate: %s holds no run directory (no %s under it)", root, runs.MetaFile)
		}
		for _, d := range dirs {
			did, err := runs.Migrate(b, d)
			if err != nil {
				return fmt.Errorf("migrate: %s: %w", d, err)
			}
			for _, s := range did {
				fmt.Fprintln(stdout, s)
			}
		}
	}
	return nil
}

// logCmd prints a run's log as CSV (runs.WriteCSV), whatever its format on disk.
func logCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: longmemory log DIR   prints DIR's log (log.gz or log.csv) as CSV")
		return errUsage
	}
	log, err := runs.ReadLog(runs.LogPath(args[0]))
	if err != nil {
		return err
	}
	return runs.WriteCSV(stdout, log)
}
