package reports

import (
	"fmt"
	"strings"
)

// Markers returns the lines that open and close the part named name of a hand-written
// report: a line starting "<!-- name:" (the rest of it free: who writes the part) and a line
// starting "<!-- end of name -->".
func Markers(name string) (begin, end string) {
	return "<!-- " + name + ":", "<!-- end of " + name + " -->"
}

// Splice returns text with the lines between its markers of name (Markers) replaced by
// table, both marker lines and everything around them kept as they are. It is an error when
// text lacks either marker (the end one after the begin one) or holds the begin marker twice.
func Splice(text []byte, name string, table []byte) ([]byte, error) {
	begin, end := Markers(name)
	lines := strings.SplitAfter(string(text), "\n")
	b, e := -1, -1
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, begin) && b >= 0:
			return nil, fmt.Errorf("a second line starting %q (line %d; the first is line %d)", begin, i+1, b+1)
		case strings.HasPrefix(l, begin):
			b = i
		case strings.HasPrefix(l, end) && b >= 0 && e < 0:
			e = i
		}
	}
	if b < 0 {
		return nil, fmt.Errorf("no line starting %q", begin)
	}
	if e < 0 {
		return nil, fmt.Errorf("no line starting %q after line %d (%q)", end, b+1, strings.TrimSuffix(lines[b], "\n"))
	}
	var out strings.Builder
	for _, l := range lines[:b+1] {
		out.WriteString(l)
	}
	out.Write(table)
	if len(table) > 0 && table[len(table)-1] != '\n' {
		out.WriteString("\n")
	}
	for _, l := range lines[e:] {
		out.WriteString(l)
	}
	return []byte(out.String()), nil
}
