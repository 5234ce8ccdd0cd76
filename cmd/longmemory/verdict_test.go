package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRun writes a run directory by hand: run.json with the baseline, log.csv with the
// held-out losses at steps 1, 2, ….
func writeRun(t *testing.T, dir string, baseline float64, losses ...float64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf(`{"Preset": {"Name": "p", "Model": {"Kind": "tanh", "Hidden": 4}}, "Task": "Copy(T=5)", "Baseline": %g}`, baseline)
	log := "step,loss,grad_norm,eval_loss,eval_accuracy,seconds\n"
	for i, l := range losses {
		log += fmt.Sprintf("%d,1,1,%g,NaN,%d\n", i+1, l, i+1)
	}
	for name, text := range map[string]string{"run.json": meta, "log.csv": log} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestVerdict(t *testing.T) {
	runs := t.TempDir()
	for s, l := range []float64{0.01, 0.02, 0.5} { // median 0.02: solved
		writeRun(t, filepath.Join(runs, "solver", fmt.Sprintf("seed-%d", s)), 1, 1, 0.5, 0.1, l)
	}
	writeRun(t, filepath.Join(runs, "flat"), 1, 1.1, 1.0, 1.0, 1.0) // at the baseline, not falling
	writeRun(t, filepath.Join(runs, "falling"), 1, 3, 2, 1.6, 1.2)  // above the baseline, still falling
	writeRun(t, filepath.Join(runs, "below"), 1, 1, 0.9, 0.8, 0.7)  // below the baseline, not solved
	claims := filepath.Join(t.TempDir(), "claims.tsv")
	text := "# statement\tlearn\tfail\tcriterion\n" +
		"A solves, B does not\tsolver\tflat\tsolved\n" +
		"B learns\tflat\t\tbaseline\n" +
		"C learns\tfalling\t\tbaseline\n" +
		"D does not learn\t\tbelow\tbaseline\n" +
		"C learns by the paper's horizon\tfalling\t\tbaseline\t24\n" +
		"C learns within its run\tfalling\t\tbaseline\t4\n" +
		"B learns, given 8 steps\tflat\t\tbaseline\t8\n" +
		"E learns\tsolver,unrun\t\tsolved\n" +
		"A solves, B never (horizon 8)\tsolver\tflat\tsolved\t8\n"
	if err := os.WriteFile(claims, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := cli("verdict", "-runs", runs, claims)
	if code != 0 {
		t.Fatalf("verdict: exit %d\n%s", code, out)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 11 {
		t.Fatalf("%d lines, want a header, a rule and 9 rows:\n%s", len(rows), out)
	}
	for i, want := range []string{
		"solver **0.0200** [0.0100–0.5000] (learns; baseline 1.0000); flat **1.0000** [1.0000–1.0000] (flat; baseline 1.0000) | **reproduced**",
		"flat **1.0000** [1.0000–1.0000] (flat; baseline 1.0000) | **not reproduced** at these lengths",
		"(still falling; baseline 1.0000) | **open**",
		"below **0.7000** [0.7000–0.7000] (learns; baseline 1.0000) | **not reproduced**",
		// 4 steps took 4 s: 20 more steps take 20 s.
		"**open**: a run that should learn has not yet after 4 steps; the horizon of 24 steps would take 0.0 h more of training here",
		"**open**: a run that should learn is still falling after 4 steps, its horizon of 4; longer runs decide",
		"(flat; baseline 1.0000) | **open**: a run that should learn has not yet after 4 steps; the horizon of 8 steps would take 0.0 h more of training here",
		"| **not run** yet (unrun) |",
		"| **open**: runs that should not learn have not reached their horizon: flat (4 of 8 steps) |",
	} {
		if !strings.Contains(rows[i+2], want) {
			t.Errorf("row %d: %q\nwant it to contain %q", i+1, rows[i+2], want)
		}
	}
	if !strings.Contains(rows[2], "solver: 3 seeds × 4 steps, 12 s of training") {
		t.Errorf("row 1 does not say the runs: %q", rows[2])
	}
	long := filepath.Join(t.TempDir(), "long.tsv")
	os.WriteFile(long, []byte("C\tfalling\t\tbaseline\t7204\n"), 0o644) // 7200 steps of 1 s to go: 2 h
	if _, out := cli("verdict", "-runs", runs, long); !strings.Contains(out, "would take 2.0 h more of training here") {
		t.Errorf("hours to the horizon: %q, want 2.0 h", out)
	}
	for _, h := range []string{"0", "many"} {
		os.WriteFile(long, []byte("C\tfalling\t\tbaseline\t"+h+"\n"), 0o644)
		if code, out := cli("verdict", "-runs", runs, long); code != 1 || !strings.Contains(out, "horizon \""+h+"\", want a number of steps >= 1") {
			t.Errorf("horizon %s: exit %d, %q", h, code, out)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.tsv")
	os.WriteFile(bad, []byte("x\tsolver\t\tbest\n"), 0o644)
	if code, out := cli("verdict", "-runs", runs, bad); code != 1 || !strings.Contains(out, `criterion "best", want baseline or solved`) {
		t.Errorf("a bad criterion: exit %d, %q", code, out)
	}
}
