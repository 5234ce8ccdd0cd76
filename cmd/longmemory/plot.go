package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/urnn-notebooks/longmemory/pkg/plots"
)

func plot(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "loss.svg", "output SVG file")
	title := fs.String("title", "", "figure title (default: the first run's task)")
	train := fs.Bool("train", false, "plot the training loss of every step instead of the held-out loss")
	logy := fs.Bool("logy", false, "log-scale y axis")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("plot: give one or more run directories (written by `longmemory train -out DIR`)")
	}
	chart := plots.Chart{Title: *title, XLabel: "iteration", YLabel: "loss", LogY: *logy, Width: 720, Height: 400}
	baseline := math.NaN()
	for _, dir := range fs.Args() {
		var meta runFile
		b, err := os.ReadFile(filepath.Join(dir, "run.json"))
		if err != nil {
			return fmt.Errorf("plot: %s is not a run directory: %w", dir, err)
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			return fmt.Errorf("plot: %s: %w", filepath.Join(dir, "run.json"), err)
		}
		steps, loss, err := readLog(filepath.Join(dir, "log.csv"), *train)
		if err != nil {
			return err
		}
		if chart.Title == "" {
			chart.Title = meta.Task
		}
		if math.IsNaN(baseline) {
			baseline = meta.Baseline
		}
		name := fmt.Sprintf("%s %d", meta.Preset.Model.Kind, meta.Preset.Model.Hidden)
		chart.Series = append(chart.Series, plots.Series{Name: name, X: steps, Y: loss})
	}
	if !math.IsNaN(baseline) {
		last := 0.0
		for _, s := range chart.Series {
			if n := len(s.X); n > 0 {
				last = math.Max(last, s.X[n-1])
			}
		}
		chart.Series = append(chart.Series, plots.Series{Name: "baseline", X: []float64{0, last}, Y: []float64{baseline, baseline}, Dashed: true, Color: "#555555"})
	}
	tmp := *out + ".tmp"
	if err := os.WriteFile(tmp, []byte(chart.SVG()), 0o644); err != nil {
		return fmt.Errorf("plot: -o: %w", err)
	}
	if err := os.Rename(tmp, *out); err != nil {
		return fmt.Errorf("plot: -o: %w", err)
	}
	fmt.Fprintln(stdout, "wrote", *out)
	return nil
}

// readLog returns the steps and losses of a log.csv: held-out losses at evaluation steps,
// or the training loss of every step.
func readLog(path string, trainLoss bool) (steps, loss []float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("plot: %w", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("plot: %s: %w", path, err)
	}
	if len(rows) == 0 || len(rows[0]) != len(logHeader) || rows[0][0] != "step" {
		return nil, nil, fmt.Errorf("plot: %s is not a training log (header %v)", path, logHeader)
	}
	col := 3
	if trainLoss {
		col = 1
	}
	for i, r := range rows[1:] {
		s, err1 := strconv.ParseFloat(r[0], 64)
		v, err2 := strconv.ParseFloat(r[col], 64)
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("plot: %s line %d: bad number", path, i+2)
		}
		if !math.IsNaN(v) {
			steps, loss = append(steps, s), append(loss, v)
		}
	}
	return steps, loss, nil
}
