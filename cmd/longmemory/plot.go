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
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/plots"
)

func plot(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "loss.png", "output file: .png or .svg")
	title := fs.String("title", "", "figure title (default: the first run's task)")
	train := fs.Bool("train", false, "plot the training loss of every step instead of the held-out loss")
	logy := fs.Bool("logy", false, "log-scale y axis")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("plot: give one or more run directories (written by `longmemory train -out DIR`)")
	}
	ext := strings.ToLower(filepath.Ext(*out))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("plot: -o %s: unknown figure format %q (want .png or .svg)", *out, ext)
	}
	chart := plots.Chart{Title: *title, XLabel: "iteration", YLabel: "loss", LogY: *logy, Width: 720, Height: 400}
	baseline := math.NaN()
	for _, dir := range fs.Args() {
		reps := replicaDirs(dir)
		if len(reps) == 0 {
			reps = []string{dir}
		}
		// A multi-seed run (train -seeds) is drawn as the median over its replicas with the
		// min–max band; a single run as its curve.
		var xs []float64
		var curves [][]float64
		var meta runFile
		for _, rep := range reps {
			m, rows, err := readRun(rep)
			if err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			meta = m
			steps, loss := lossCurve(rows, *train)
			if len(steps) > len(xs) {
				xs = steps
			}
			curves = append(curves, loss)
		}
		if chart.Title == "" {
			chart.Title = meta.Task
		}
		if math.IsNaN(baseline) {
			baseline = meta.Baseline
		}
		name := fmt.Sprintf("%s %d", meta.Preset.Model.Kind, meta.Preset.Model.Hidden)
		if len(curves) == 1 && len(replicaDirs(dir)) == 0 {
			chart.Series = append(chart.Series, plots.Series{Name: name, X: xs, Y: curves[0]})
			continue
		}
		chart.Series = append(chart.Series, plots.Band(fmt.Sprintf("%s, %d seeds", name, len(curves)), xs, curves, 0))
	}
	// Runs of the same model are told apart by their directory names.
	names := map[string]int{}
	for _, s := range chart.Series {
		names[s.Name]++
	}
	for i := range chart.Series {
		if names[chart.Series[i].Name] > 1 {
			chart.Series[i].Name = filepath.Base(filepath.Clean(fs.Arg(i)))
		}
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
	fig := []byte(nil)
	if ext == ".png" {
		b, err := chart.PNG()
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		fig = b
	} else {
		fig = []byte(chart.SVG())
	}
	if err := writeFileAtomic(*out, func(w io.Writer) error { _, err := w.Write(fig); return err }); err != nil {
		return fmt.Errorf("plot: -o: %w", err)
	}
	fmt.Fprintln(stdout, "wrote", *out)
	return nil
}

// logRow is one line of log.csv (NaN where the held-out batch was not scored).
type logRow struct {
	Step, Loss, GradNorm, EvalLoss, EvalAccuracy, Seconds float64
}

// readLog returns the rows of a log.csv written by train.
func readLog(path string) ([]logRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 || len(rows[0]) != len(logHeader) || rows[0][0] != "step" {
		return nil, fmt.Errorf("%s is not a training log (header %v)", path, logHeader)
	}
	out := make([]logRow, 0, len(rows)-1)
	for i, r := range rows[1:] {
		var v [6]float64
		for k := range v {
			if v[k], err = strconv.ParseFloat(r[k], 64); err != nil {
				return nil, fmt.Errorf("%s line %d: bad number %q", path, i+2, r[k])
			}
		}
		out = append(out, logRow{v[0], v[1], v[2], v[3], v[4], v[5]})
	}
	return out, nil
}

// lossCurve returns the steps and losses of a log: held-out losses at evaluation steps, or
// the training loss of every step.
func lossCurve(rows []logRow, trainLoss bool) (steps, loss []float64) {
	for _, r := range rows {
		v := r.EvalLoss
		if trainLoss {
			v = r.Loss
		}
		if !math.IsNaN(v) {
			steps, loss = append(steps, r.Step), append(loss, v)
		}
	}
	return steps, loss
}

// readRunFile reads DIR/run.json; the error wraps os.ErrNotExist when there is none.
func readRunFile(dir string) (runFile, error) {
	var meta runFile
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return meta, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return meta, fmt.Errorf("%s: %w", filepath.Join(dir, "run.json"), err)
	}
	return meta, nil
}

// readRun reads DIR/run.json and DIR/log.csv.
func readRun(dir string) (runFile, []logRow, error) {
	meta, err := readRunFile(dir)
	if err != nil {
		return meta, nil, err
	}
	rows, err := readLog(filepath.Join(dir, "log.csv"))
	return meta, rows, err
}
