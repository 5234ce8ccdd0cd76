package main

import (
	"io"
	"math"
	"strings"
	"testing"
)

// TestGrowth checks the growth lines on rows that follow power laws exactly: the exponents
// come back, rows below longT, with replicas or alone in their series are left out.
func TestGrowth(t *testing.T) {
	var rs []Result
	for _, T := range []int{500, 1000, 2000, 5000, 10000} {
		x := float64(T)
		rs = append(rs,
			Result{Model: "lru", Hidden: 64, Task: "copy", T: T, Replicas: 1, Scan: true, StepMs: 0.5 * x, PeakMiB: 3 * math.Sqrt(x)},
			Result{Model: "lru", Hidden: 64, Task: "copy", T: T, Replicas: 2, Scan: true, StepMs: 7, PeakMiB: 7},
			Result{Model: "urnn", Hidden: 128, Task: "copy", T: T, Replicas: 1, StepMs: 2 * x * x, PeakMiB: 100})
	}
	rs = append(rs, Result{Model: "lstm", Hidden: 40, Task: "copy", T: 2000, Replicas: 1, StepMs: 10, PeakMiB: 10})
	got := growth(rs)
	want := []string{
		"growth in T: lru scan 64 copy, T 1000–10000 (4 rows): step time ∝ T^1.00 (×10.0), peak memory ∝ T^0.50 (×3.2)",
		"growth in T: urnn 128 copy, T 1000–10000 (4 rows): step time ∝ T^2.00 (×100.0), peak memory ∝ T^0.00 (×1.0)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("growth =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAgainstBadInput checks that -against names a bad pair count and a missing reference build.
func TestAgainstBadInput(t *testing.T) {
	for _, tc := range []struct {
		ref   string
		pairs int
		want  string
	}{
		{"main.go", 0, "-pairs 0: want at least 1"},
		{"no-such-bench", 3, "-against: stat no-such-bench"},
	} {
		_, err := against(io.Discard, tc.ref, []string{"tanh:80:copy:100"}, 1, 1, -1, tc.pairs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("against(%q, pairs %d) = %v, want an error containing %q", tc.ref, tc.pairs, err, tc.want)
		}
	}
}
