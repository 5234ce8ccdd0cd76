package runs

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// column is one column of a log: a field of train.Record.
type column struct {
	name string
	get  func(r *train.Record) float64
	set  func(r *train.Record, v float64)
}

// columns are a log's columns in order, every field of train.Record. Wall time comes last,
// so that logs of an interrupted and an uninterrupted run printed as CSV compare line by line
// without it.
var columns = []column{
	{"step", func(r *train.Record) float64 { return float64(r.Step) }, func(r *train.Record, v float64) { r.Step = int(v) }},
	{"loss", func(r *train.Record) float64 { return r.Loss }, func(r *train.Record, v float64) { r.Loss = v }},
	{"grad_norm", func(r *train.Record) float64 { return r.GradNorm }, func(r *train.Record, v float64) { r.GradNorm = v }},
	{"eval_loss", func(r *train.Record) float64 { return r.EvalLoss }, func(r *train.Record, v float64) { r.EvalLoss = v }},
	{"eval_accuracy", func(r *train.Record) float64 { return r.EvalAccuracy }, func(r *train.Record, v float64) { r.EvalAccuracy = v }},
	{"penalty", func(r *train.Record) float64 { return r.Penalty }, func(r *train.Record, v float64) { r.Penalty = v }},
	{"seconds", func(r *train.Record) float64 { return r.Seconds }, func(r *train.Record, v float64) { r.Seconds = v }},
}

// Header is the first line of a log as CSV (WriteCSV).
var Header = func() []string {
	var h []string
	for _, c := range columns {
		h = append(h, c.name)
	}
	return h
}()

// WriteLog writes every record to path in the compact format (EncodeLog), atomically
// (WriteFileAtomic).
func WriteLog(path string, log []train.Record) error {
	return WriteFileAtomic(path, func(f io.Writer) error { return EncodeLog(f, log) })
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

// formatValue is v as WriteCSV writes it: the shortest decimal that reads back as v. A value
// that is a float32 (the losses and norms of a float32 graph) is written as the shortest
// decimal that reads back as that float32 (strconv.ParseFloat(s, 32)): about 9 significant
// digits where float64's shortest takes 17 for the same number.
func formatValue(v float64) string {
	if float64(float32(v)) == v {
		return strconv.FormatFloat(v, 'g', -1, 32)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// ReadLog reads a log that WriteLog wrote (DecodeLog).
func ReadLog(path string) ([]train.Record, error) {
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
