package runs

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// column is one column of log.csv: a field of train.Record.
type column struct {
	name     string
	get      func(r *train.Record) float64
	set      func(r *train.Record, v float64)
	optional bool // absent from older logs; NaN then
	graph    bool // a value of the graph: a float32 in a float32 graph (see ReadLog)
}

// columns are log.csv's columns in order, every field of train.Record. Wall time comes last,
// so that logs of an interrupted and an uninterrupted run compare line by line without it.
var columns = []column{
	{"step", func(r *train.Record) float64 { return float64(r.Step) }, func(r *train.Record, v float64) { r.Step = int(v) }, false, false},
	{"loss", func(r *train.Record) float64 { return r.Loss }, func(r *train.Record, v float64) { r.Loss = v }, false, true},
	{"grad_norm", func(r *train.Record) float64 { return r.GradNorm }, func(r *train.Record, v float64) { r.GradNorm = v }, false, true},
	{"eval_loss", func(r *train.Record) float64 { return r.EvalLoss }, func(r *train.Record, v float64) { r.EvalLoss = v }, false, true},
	{"eval_accuracy", func(r *train.Record) float64 { return r.EvalAccuracy }, func(r *train.Record, v float64) { r.EvalAccuracy = v }, false, false},
	{"penalty", func(r *train.Record) float64 { return r.Penalty }, func(r *train.Record, v float64) { r.Penalty = v }, true, true},
	{"seconds", func(r *train.Record) float64 { return r.Seconds }, func(r *train.Record, v float64) { r.Seconds = v }, false, false},
}

// Header is the first line of a log as CSV (WriteCSV, ReadLog of a log.csv).
var Header = func() []string {
	var h []string
	for _, c := range columns {
		h = append(h, c.name)
	}
	return h
}()

// WriteLog writes every record to path, atomically (WriteFileAtomic): in the compact format
// (EncodeLog) when path ends in ".gz", as CSV (WriteCSV) otherwise.
func WriteLog(path string, log []train.Record) error {
	return WriteFileAtomic(path, func(f io.Writer) error {
		if strings.HasSuffix(path, ".gz") {
			return EncodeLog(f, log)
		}
		return WriteCSV(f, log)
	})
}

// WriteCSV writes every record as CSV: Header, then a line per record (NaN where a value is
// absent), each value written by formatValue.
func WriteCSV(f io.Writer, log []train.Record) error {
	w := csv.NewWriter(f)
	w.Write(Header)
	line := make([]string, len(columns))
	for i := range log {
		for k, c := range columns {
			line[k] = formatValue(c.get(&log[i]))
		}
		w.Write(line)
	}
	w.Flush()
	return w.Error()
}

// formatValue is v as log.csv writes it: the shortest decimal that reads back as v. A value
// that is a float32 (the losses and norms of a float32 graph) is written as the shortest
// decimal that reads back as that float32 (strconv.ParseFloat(s, 32)): about 9 significant
// digits where float64's shortest takes 17 for the same number, and log.csv is the bulk of
// what docs/runs commits.
func formatValue(v float64) string {
	if float64(float32(v)) == v {
		return strconv.FormatFloat(v, 'g', -1, 32)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// ReadLog reads a log that WriteLog wrote: the compact format when path ends in ".gz"
// (DecodeLog), CSV otherwise. A CSV log may lack the penalty column (older logs; Penalty is
// NaN then); its columns are found by their names in the header. A value of the graph (loss,
// norm, penalty) written as a float32's shortest decimal (formatValue) is read as that
// float32, so that the records are the run's own, bit for bit; every other value is the
// float64 its decimal names. (A float64 graph's value of 9 digits or fewer would be read as a
// float32 too: its losses take 17.)
func ReadLog(path string) ([]train.Record, error) {
	if strings.HasSuffix(path, ".gz") {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		log, err := DecodeLog(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return log, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	notLog := fmt.Errorf("%s is not a training log (header %v)", path, Header)
	if len(rows) == 0 {
		return nil, notLog
	}
	at := make([]int, len(columns)) // column k of Header is at[k] in the file, -1 if absent
	for k, c := range columns {
		at[k] = slices.Index(rows[0], c.name)
		if at[k] < 0 && !c.optional {
			return nil, notLog
		}
	}
	out := make([]train.Record, 0, len(rows)-1)
	for i, row := range rows[1:] {
		var r train.Record
		for k, c := range columns {
			v := nan
			if at[k] >= 0 {
				text := row[at[k]]
				if v, err = strconv.ParseFloat(text, 64); err != nil {
					return nil, fmt.Errorf("%s line %d: bad number %q", path, i+2, text)
				}
				if f, _ := strconv.ParseFloat(text, 32); c.graph && strconv.FormatFloat(f, 'g', -1, 32) == text {
					v = f
				}
			}
			c.set(&r, v)
		}
		out = append(out, r)
	}
	return out, nil
}

// WrapWriter wraps the file every WriteFileAtomic writes through; it is the identity, and
// fault-injection tests replace it with a writer that fails part-way, as a full disk does.
var WrapWriter = func(w io.Writer) io.Writer { return w }

// WriteFileAtomic writes path through write into path + ".tmp", then renames it into place:
// path is either left as it was or replaced whole. On any failure the temporary file is
// removed.
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := errors.Join(write(WrapWriter(f)), f.Sync(), f.Close()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
