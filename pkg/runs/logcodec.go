package runs

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/urnn-notebooks/longmemory/pkg/shuffle"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// logMagic starts a compact log (log.gz) once it is unzipped.
const logMagic = "LMLOG\x01"

// logSegment is the number of records in each gzip member of log.gz but the last.
const logSegment = 2000

// EncodeLog writes log in the compact format of log.gz: gzip members (RFC 1952 §2.2: a gzip
// file is a series of members) of logSegment records each, the last of the rest. Records
// fall into the same members at every write, so that a run's log written again after more
// steps begins with the same bytes, and git stores only its end anew: the log a commit of a
// continued run adds grows with the steps added, not with the run's length. A member holds
// logMagic, its number of records n (uvarint), then the columns one after the other:
//
//	step          n uvarints, each the difference from the step before (the first from 0)
//	every value   a width byte, 4 or 8, then n values byte-shuffled (package shuffle): as
//	column        float32 when every value of the column is one (the float32 graph's losses
//	              and norms, NaN where absent), as float64 otherwise; so it reads back bit for bit
//	seconds       n varints, each the difference of the wall time in hundredths of a second
//	              from the one before
//
// The value columns are those of the CSV form but step and seconds, in the order of Header.
// Wall time is the one value rounded: to 1/100 s.
func EncodeLog(w io.Writer, log []train.Record) error {
	prev := 0
	for i := range log {
		if log[i].Step < prev {
			return fmt.Errorf("runs: log record %d has step %d after step %d: steps must not decrease", i, log[i].Step, prev)
		}
		prev = log[i].Step
	}
	for start := 0; start == 0 || start < len(log); start += logSegment {
		if err := encodeSegment(w, log[start:min(start+logSegment, len(log))]); err != nil {
			return err
		}
	}
	return nil
}

// encodeSegment writes log as one gzip member (see EncodeLog).
func encodeSegment(w io.Writer, log []train.Record) error {
	var b []byte
	b = append(b, logMagic...)
	b = binary.AppendUvarint(b, uint64(len(log)))
	prev := 0
	for i := range log {
		b = binary.AppendUvarint(b, uint64(log[i].Step-prev))
		prev = log[i].Step
	}
	v := make([]float64, len(log))
	for _, c := range valueColumns() {
		narrow := true
		for i := range log {
			v[i] = c.get(&log[i])
			narrow = narrow && (float64(float32(v[i])) == v[i] || math.IsNaN(v[i]))
		}
		if narrow {
			f := make([]float32, len(v))
			for i, x := range v {
				f[i] = float32(x)
			}
			b = shuffle.Encode(append(b, 4), f)
		} else {
			b = shuffle.Encode(append(b, 8), v)
		}
	}
	var last int64
	for i := range log {
		cs := int64(math.Round(log[i].Seconds * 100))
		b = binary.AppendVarint(b, cs-last)
		last = cs
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(b); err != nil {
		return err
	}
	return zw.Close()
}

// DecodeLog reads a log that EncodeLog wrote; the error says where it is cut or malformed.
func DecodeLog(data []byte) ([]train.Record, error) {
	r := bytes.NewReader(data)
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a compact log: %w", err)
	}
	var log []train.Record
	for member := 1; ; member++ {
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("compact log cut short in gzip member %d: %w", member, err)
		}
		seg, err := decodeSegment(b)
		if err != nil {
			return nil, fmt.Errorf("gzip member %d: %w", member, err)
		}
		if len(log) > 0 && len(seg) > 0 && seg[0].Step < log[len(log)-1].Step {
			return nil, fmt.Errorf("gzip member %d starts at step %d, after step %d", member, seg[0].Step, log[len(log)-1].Step)
		}
		log = append(log, seg...)
		if err := zr.Reset(r); err == io.EOF {
			return log, nil
		} else if err != nil {
			return nil, fmt.Errorf("compact log: after gzip member %d: %w", member, err)
		}
	}
}

// decodeSegment reads one member's unzipped bytes b (see EncodeLog).
func decodeSegment(b []byte) ([]train.Record, error) {
	var err error
	if !bytes.HasPrefix(b, []byte(logMagic)) {
		return nil, errors.New("not a compact log (no LMLOG header)")
	}
	b = b[len(logMagic):]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errors.New("compact log: bad record count")
	}
	b = b[k:]
	log := make([]train.Record, n)
	step := uint64(0)
	for i := range log {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, fmt.Errorf("compact log: step %d of %d cut short", i, n)
		}
		step += d
		log[i].Step, b = int(step), b[k:]
	}
	for _, c := range valueColumns() {
		if len(b) == 0 {
			return nil, fmt.Errorf("compact log: column %s missing", c.name)
		}
		width := b[0]
		b = b[1:]
		switch width {
		case 4:
			var f []float32
			if f, b, err = shuffle.Decode[float32](b, int(n)); err != nil {
				return nil, fmt.Errorf("compact log: column %s: %w", c.name, err)
			}
			for i := range log {
				c.set(&log[i], float64(f[i]))
			}
		case 8:
			var f []float64
			if f, b, err = shuffle.Decode[float64](b, int(n)); err != nil {
				return nil, fmt.Errorf("compact log: column %s: %w", c.name, err)
			}
			for i := range log {
				c.set(&log[i], f[i])
			}
		default:
			return nil, fmt.Errorf("compact log: column %s has width %d, want 4 or 8", c.name, width)
		}
	}
	var cs int64
	for i := range log {
		d, k := binary.Varint(b)
		if k <= 0 {
			return nil, fmt.Errorf("compact log: seconds of record %d of %d cut short", i, n)
		}
		cs += d
		log[i].Seconds, b = float64(cs)/100, b[k:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("compact log: %d bytes after the last column", len(b))
	}
	return log, nil
}

// valueColumns are the columns EncodeLog stores as values: all but step and seconds.
func valueColumns() []column {
	var out []column
	for _, c := range columns {
		if c.name != "step" && c.name != "seconds" {
			out = append(out, c)
		}
	}
	return out
}
