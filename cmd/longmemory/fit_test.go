package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// TestFit fits the readout of a two-seed ESN run in closed form: each replica records a fit
// that beats its readout trained by a few gradient steps on the same reservoir, a second fit
// with the same settings is left as it is, other settings fit again, the same settings give
// the same numbers, and bad input is refused with the accepted range.
func TestFit(t *testing.T) {
	dir := t.TempDir()
	if code, out := cli("train", "-model", "esn", "-hidden", "24", "-task", "adding", "-T", "6", "-batch", "8", "-steps", "4",
		"-eval-every", "2", "-seeds", "2", "-seed", "3", "-quiet", "-out", dir); code != 0 {
		t.Fatalf("train: exit %d\n%s", code, out)
	}
	code, table := cli("fit", "-sequences", "300", "-beta", "0.01", dir)
	if code != 0 || !strings.Contains(table, "| "+filepath.Base(dir)+" | 2 of 2 | 300, 0.01 | ") || !strings.Contains(table, "(below 0.0100)") {
		t.Fatalf("fit: exit %d\n%s", code, table)
	}
	first := map[string]runs.Ridge{}
	for _, rep := range runs.Replicas(dir) {
		r, err := runs.ReadRidge(rep)
		if err != nil {
			t.Fatal(err)
		}
		_, log, err := runs.Read(rep)
		if err != nil {
			t.Fatal(err)
		}
		grad, _, _ := runs.HeldOut(log)
		if r.Sequences != 300 || r.Beta != 0.01 || r.Rows != 300 || r.Accuracy != nil || r.Host == "" {
			t.Errorf("%s: ridge.json %+v, want 300 sequences, β 0.01, one scored step per sequence, no accuracy (regression), a host", rep, r)
		}
		// Least squares on 300 sequences against 4 RMSProp steps from a random readout: the fit
		// must be far better on the same held-out batch.
		if !(r.Loss < grad/2) {
			t.Errorf("%s: closed-form held-out MSE %.4f, gradient readout after 4 steps %.4f: want the fit below half of it", rep, r.Loss, grad)
		}
		first[rep] = r
	}
	// The same settings again: nothing is refitted (the recorded seconds stay).
	if code, out := cli("fit", "-sequences", "300", "-beta", "0.01", dir); code != 0 || strings.Contains(out, "fit "+dir) {
		t.Errorf("a second fit with the same settings: exit %d\n%s", code, out)
	}
	for rep, r := range first {
		if again, _ := runs.ReadRidge(rep); again.Seconds != r.Seconds {
			t.Errorf("%s was fitted again with the same settings", rep)
		}
	}
	// Other settings fit again; the first ones again give the same losses, bit for bit.
	if code, out := cli("fit", "-sequences", "300", "-beta", "1", dir); code != 0 {
		t.Fatalf("-beta 1: exit %d\n%s", code, out)
	}
	for rep := range first {
		if r, _ := runs.ReadRidge(rep); r.Beta != 1 {
			t.Errorf("%s: β %g after fitting with -beta 1", rep, r.Beta)
		}
	}
	if code, out := cli("fit", "-sequences", "300", "-beta", "0.01", dir); code != 0 {
		t.Fatalf("refit: exit %d\n%s", code, out)
	}
	for rep, r := range first {
		if again, _ := runs.ReadRidge(rep); again.Loss != r.Loss {
			t.Errorf("%s: refitted with the same settings and seed, held-out loss %v, first %v", rep, again.Loss, r.Loss)
		}
	}
	// -report fits nothing: a run without fits shows 0 of its replicas.
	bare := t.TempDir()
	if code, out := cli("train", "-model", "esn", "-hidden", "8", "-task", "adding", "-T", "4", "-batch", "4", "-steps", "2",
		"-eval-every", "1", "-seeds", "2", "-quiet", "-out", bare); code != 0 {
		t.Fatalf("train: exit %d\n%s", code, out)
	}
	if code, out := cli("fit", "-report", bare); code != 0 || !strings.Contains(out, "| "+filepath.Base(bare)+" | 0 of 2 |") {
		t.Errorf("-report of a run without fits: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(runs.Replicas(bare)[0], runs.RidgeFile)); err == nil {
		t.Error("-report wrote a ridge.json")
	}
	tanh := t.TempDir()
	if code, out := cli(tinyRun("-steps", "2", "-out", tanh)...); code != 0 {
		t.Fatalf("train: exit %d\n%s", code, out)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"-sequences", "0", dir}, "-sequences 0, want >= 1"},
		{[]string{"-beta", "-1", dir}, "-beta -1, want a finite β >= 0"},
		{[]string{"-beta", "NaN", dir}, "-beta NaN, want a finite β >= 0"},
		{[]string{filepath.Join(dir, "nothing")}, "is not a run directory"},
		{[]string{tanh}, "has no linear readout"},
	} {
		if code, out := cli(append([]string{"fit"}, bad.args...)...); code != 1 || !strings.Contains(out, bad.want) {
			t.Errorf("fit %v: exit %d, %q, want an error containing %q", bad.args, code, out, bad.want)
		}
	}
}
