// Package tsv reads the project's tab-separated data files (docs/runs.tsv, docs/figures.tsv):
// blank lines and lines starting with # are comments, the first other line is the header
// naming the columns, then one record a line with exactly those columns.
package tsv

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Line is one record: its line number in the file and its columns.
type Line struct {
	N    int
	Cols []string
	name string
}

// Errorf returns an error naming the file and the line: "name:N: message".
func (l Line) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", l.name, l.N, fmt.Sprintf(format, args...))
}

// Read reads the file from r, name its name in errors, checks its header against columns and
// calls record for every record in order; record's error ends the reading and is returned.
// The errors name the file, the line and what is wrong.
func Read(r io.Reader, name string, columns []string, record func(Line) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	header := false
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l := Line{N: n, Cols: strings.Split(text, "\t"), name: name}
		if !header {
			if text != strings.Join(columns, "\t") {
				return l.Errorf("header %q, want the columns %q", text, strings.Join(columns, "\t"))
			}
			header = true
			continue
		}
		if len(l.Cols) != len(columns) {
			return l.Errorf("%d tab-separated columns, want %d (%s)", len(l.Cols), len(columns), strings.Join(columns, ", "))
		}
		if err := record(l); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if !header {
		return fmt.Errorf("%s: no header line (%s)", name, strings.Join(columns, "\t"))
	}
	return nil
}
