package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReportsFlags: reports takes flags only, and says which input it lacks (package reports
// tests the reports themselves).
func TestReportsFlags(t *testing.T) {
	if code, out := cli("reports", "docs"); code != 2 || !strings.Contains(out, "usage: longmemory reports") {
		t.Errorf("reports docs: exit %d, want 2 and the usage:\n%s", code, out)
	}
	dir := t.TempDir()
	code, out := cli("reports", "-runs", dir, "-docs", dir)
	if want := "longmemory: reports: open " + filepath.Join(dir, "figures.tsv"); code != 1 || !strings.Contains(out, want) {
		t.Errorf("reports on an empty directory: exit %d, want 1 and %q:\n%s", code, want, out)
	}
}
