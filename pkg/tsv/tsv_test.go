package tsv

import (
	"errors"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	cols := []string{"a", "b"}
	var got []string
	err := Read(strings.NewReader("# comment\n\na\tb\n1\t2\n# another\n3\t4\n"), "f.tsv", cols, func(l Line) error {
		got = append(got, strings.Join(l.Cols, "+"))
		if l.N != 4 && l.N != 6 {
			t.Errorf("record on line %d, want 4 or 6", l.N)
		}
		return nil
	})
	if err != nil || strings.Join(got, " ") != "1+2 3+4" {
		t.Errorf("Read: %q, %v", got, err)
	}
	stop := errors.New("stop")
	for _, tc := range []struct {
		file, want string
		record     func(Line) error
	}{
		{"b\ta\n", `f.tsv:1: header "b\ta"`, nil},
		{"a\tb\n1\n", "f.tsv:2: 1 tab-separated columns, want 2 (a, b)", nil},
		{"# only a comment\n", "f.tsv: no header line", nil},
		{"a\tb\n1\t2\n", "f.tsv:2: bad value", func(l Line) error { return l.Errorf("bad value") }},
		{"a\tb\n1\t2\n", "stop", func(Line) error { return stop }},
	} {
		record := tc.record
		if record == nil {
			record = func(Line) error { return nil }
		}
		if err := Read(strings.NewReader(tc.file), "f.tsv", cols, record); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%q) = %v, want an error containing %q", tc.file, err, tc.want)
		}
	}
}
