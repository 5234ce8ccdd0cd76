package reports

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/tsv"
)

// The reports a figures file's lines name.
const (
	Verdicts   = "VERDICTS.md"
	Successors = "SUCCESSORS.md"
	Ablations  = "ABLATIONS.md"
	Results    = "RESULTS.md"
)

// Figure is one line of a figures file (docs/figures.tsv).
type Figure struct {
	Report string   // the report that shows it: Verdicts, Successors or Ablations (a section each)
	Name   string   // the file name in the figures directory, without .png
	Title  string   // the figure's title; an ablation's heading
	YMax   *float64 // the top of the y axis, the curves above it cut at the edge; nil: automatic
	Runs   []string // the run directories' names, in the legend's order; an ablation's arms
	Line   int      // the line of the figures file
}

// FigureColumns are a figures file's columns, its header line.
var FigureColumns = []string{"report", "name", "title", "ymax", "runs"}

// ReadFigures reads the figures file at path (ParseFigures).
func ReadFigures(path string) ([]Figure, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseFigures(f, path)
}

// ParseFigures reads a figures file from r, name its name in errors: lines starting with # and
// blank lines are comments; the first other line is the header (FigureColumns), then one
// figure a line, tab-separated, its runs comma-separated. A figure is named once, its report
// is one of Verdicts, Successors and Ablations, and its ymax is a positive number or "-"
// (automatic).
func ParseFigures(r io.Reader, name string) ([]Figure, error) {
	var out []Figure
	seen := map[string]int{}
	err := tsv.Read(r, name, FigureColumns, func(l tsv.Line) error {
		cols := l.Cols
		f := Figure{Report: cols[0], Name: cols[1], Title: cols[2], Line: l.N}
		if !slices.Contains([]string{Verdicts, Successors, Ablations}, f.Report) {
			return l.Errorf("report %q, want %s, %s or %s", f.Report, Verdicts, Successors, Ablations)
		}
		if f.Name == "" || strings.ContainsAny(f.Name, `/\`) || f.Name != strings.TrimSpace(f.Name) {
			return l.Errorf("name %q: want a file name without a directory", f.Name)
		}
		if prev, ok := seen[f.Name]; ok {
			return l.Errorf("figure %s is already on line %d", f.Name, prev)
		}
		seen[f.Name] = l.N
		if cols[3] != "-" {
			y, err := strconv.ParseFloat(cols[3], 64)
			if err != nil || !(y > 0) || math.IsInf(y, 0) {
				return l.Errorf("figure %s: ymax %q, want a positive number, or - for an automatic y axis", f.Name, cols[3])
			}
			f.YMax = &y
		}
		for _, r := range strings.Split(cols[4], ",") {
			if r = strings.TrimSpace(r); r != "" {
				f.Runs = append(f.Runs, r)
			}
		}
		if len(f.Runs) == 0 {
			return l.Errorf("figure %s names no run", f.Name)
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// missing returns the first of f's runs that has no directory under root, "" when all have.
func (f Figure) missing(root string) string {
	for _, r := range f.Runs {
		if st, err := os.Stat(filepath.Join(root, r)); err != nil || !st.IsDir() {
			return r
		}
	}
	return ""
}

// draw writes f to figures/NAME.png from the runs under root as `longmemory plot -title TITLE`
// draws it: the held-out loss (runs.Chart), the figure's title and, with YMax, `-ymax YMAX`. A run with
// too few held-out evaluations to draw (runs.TooFewToDraw) is left out of the figure and
// named in undrawn, with why; a figure whose runs do not all exist yet, or none of whose runs
// can be drawn, is left out (false), and say tells why.
func (f Figure) draw(root, figures string, say func(string, ...any)) (drawn bool, undrawn []string, err error) {
	if r := f.missing(root); r != "" {
		say("figure %s left out: %s does not exist yet", f.Name, filepath.Join(root, r))
		return false, nil, nil
	}
	dirs, undrawn := f.drawable(root)
	if len(dirs) == 0 {
		say("figure %s left out: none of its runs can be drawn yet (%s)", f.Name, strings.Join(undrawn, "; "))
		return false, nil, nil
	}
	chart, err := runs.Chart(dirs, runs.HeldOutLoss)
	if errors.Is(err, runs.ErrNoLog) {
		say("figure %s left out: %v", f.Name, err)
		return false, nil, nil
	}
	if err != nil {
		return false, nil, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	chart.Title, chart.LogY, chart.YMax = f.Title, false, f.YMax
	path := filepath.Join(figures, f.Name+".png")
	if err := runs.WriteFigure(path, chart); err != nil {
		return false, nil, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	say("wrote %s", path)
	return true, undrawn, nil
}

// drawable returns the directories of f's runs under root that can be drawn, and for each of
// the others, too few held-out evaluations to draw (runs.TooFewToDraw), the run and why.
func (f Figure) drawable(root string) (dirs, undrawn []string) {
	for _, r := range f.Runs {
		if why := runs.TooFewToDraw(filepath.Join(root, r)); why != "" {
			undrawn = append(undrawn, r+": "+why)
			continue
		}
		dirs = append(dirs, filepath.Join(root, r))
	}
	return dirs, undrawn
}

// PenaltyFigure is the suffix of the name of an ablation's second figure: the orthogonality
// penalty its arms log (runs.Penalty), drawn when one of them logs it.
const PenaltyFigure = "-penalty"

// drawPenalty writes figures/NAME-penalty.png: the orthogonality penalty f's runs log at their
// evaluations, as `longmemory plot -penalty -logy -title "TITLE: …"` draws it, leaving out the
// runs draw leaves out and those trained without the penalty. It returns false, and writes
// nothing, when none of the runs logs it.
func (f Figure) drawPenalty(root, figures string, say func(string, ...any)) (bool, error) {
	dirs, _ := f.drawable(root)
	if len(dirs) == 0 {
		return false, nil
	}
	chart, err := runs.Chart(dirs, runs.Penalty)
	if errors.Is(err, runs.ErrNoLog) {
		return false, nil // no arm logs the penalty: an ablation of something else
	}
	if err != nil {
		return false, fmt.Errorf("figure %s: %w", f.Name+PenaltyFigure, err)
	}
	chart.Title = f.Title + ": the orthogonality penalty"
	path := filepath.Join(figures, f.Name+PenaltyFigure+".png")
	if err := runs.WriteFigure(path, chart); err != nil {
		return false, fmt.Errorf("figure %s: %w", f.Name+PenaltyFigure, err)
	}
	say("wrote %s", path)
	return true, nil
}

// removeStale removes path, an earlier drawing of a figure that is left out now: no report
// links it, and it would show its runs as they stood then. A path that does not exist is no
// error.
func removeStale(path string, say func(string, ...any)) error {
	err := os.Remove(path)
	switch {
	case err == nil:
		say("removed %s: an earlier drawing of a figure left out now", path)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return err
}
