package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

func plot(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "loss.png", "output file: .png or .svg")
	title := fs.String("title", "", "figure title (default: the first run's task)")
	train := fs.Bool("train", false, "plot the training loss of every step instead of the held-out loss")
	penalty := fs.Bool("penalty", false, "plot the orthogonality penalty at the evaluation steps instead of the held-out loss (runs trained with it)")
	logy := fs.Bool("logy", false, "log-scale y axis")
	ymax := fs.Float64("ymax", 0, "the top of the y axis, the curves above it cut at the edge (0: automatic)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *ymax < 0 || math.IsNaN(*ymax) || math.IsInf(*ymax, 0) {
		return fmt.Errorf("plot: -ymax %g, want a positive number, or 0 for an automatic y axis", *ymax)
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("plot: give one or more run directories (written by `longmemory train -out DIR`)")
	}
	ext := strings.ToLower(filepath.Ext(*out))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("plot: -o %s: unknown figure format %q (want .png or .svg)", *out, ext)
	}
	curve := runs.HeldOutLoss
	switch {
	case *train && *penalty:
		return fmt.Errorf("plot: -train and -penalty both given; want one curve")
	case *train:
		curve = runs.TrainingLoss
	case *penalty:
		curve = runs.Penalty
	}
	chart, err := runs.Chart(fs.Args(), curve)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if *title != "" {
		chart.Title = *title
	}
	chart.LogY = *logy
	if *ymax > 0 {
		chart.YMax = ymax
	}
	if err := runs.WriteFigure(*out, chart); err != nil {
		return fmt.Errorf("plot: -o: %w", err)
	}
	fmt.Fprintln(stdout, "wrote", *out)
	return nil
}
