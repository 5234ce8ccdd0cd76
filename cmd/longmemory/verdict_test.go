package main

import (
	"fmt"
	"math"
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
	meta := fmt.Sprintf(`{"Preset": {"Name": "p", "Model": {"Kind": "tanh", "Hidden": 4}, "Task": {"Kind": "copy", "T": 5}}, "Task": "Copy(T=5)", "Baseline": %g}`, baseline)
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for i, l := range losses {
		rows = append(rows, fmt.Sprintf("%d,1,1,%g,NaN,%d", i+1, l, i+1))
	}
	writeLog(t, dir, rows...)
}

// writeLog writes dir/log.csv with the given rows (step,loss,grad_norm,eval_loss,eval_accuracy,seconds).
func writeLog(t *testing.T, dir string, rows ...string) {
	t.Helper()
	log := "step,loss,grad_norm,eval_loss,eval_accuracy,seconds\n"
	for _, r := range rows {
		log += r + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "log.csv"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
}

// verdictRows runs `longmemory verdict` on claims and checks that it prints a header, a rule
// and one row per want, row i containing want[i]; it returns the rows.
func verdictRows(t *testing.T, runs, claims string, want ...string) []string {
	t.Helper()
	code, out := cli("verdict", "-runs", runs, claims)
	if code != 0 {
		t.Fatalf("verdict: exit %d\n%s", code, out)
	}
	table, tally, ok := strings.Cut(strings.TrimSpace(out), "\n\n")
	counts, within, _ := strings.Cut(tally, "\n")
	if !ok || !strings.HasPrefix(counts, "Of ") || !strings.HasPrefix(within, "Open claims whose runs take at most 3 h") {
		t.Fatalf("want the table, a blank line, the tally of the verdicts and the open claims within 3 h:\n%s", out)
	}
	rows := strings.Split(table, "\n")
	if len(rows) != len(want)+2 {
		t.Fatalf("%d lines, want a header, a rule and %d rows:\n%s", len(rows), len(want), out)
	}
	for i, w := range want {
		if !strings.Contains(rows[i+2], w) {
			t.Errorf("row %d: %q\nwant it to contain %q", i+1, rows[i+2], w)
		}
	}
	return rows
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
	rows := verdictRows(t, runs, claims,
		"solver **0.0200** [0.0100–0.5000] (learns; baseline 1.0000); flat **1.0000** [1.0000–1.0000] (flat; baseline 1.0000) | **reproduced**",
		"flat **1.0000** [1.0000–1.0000] (flat; baseline 1.0000) | **not reproduced** at these lengths",
		"(still falling; baseline 1.0000) | **open**",
		"below **0.7000** [0.7000–0.7000] (learns; baseline 1.0000) | **not reproduced**",
		// 4 steps took 4 s: 20 more steps take 20 s.
		"**open**: a run that should learn has not yet after 4 steps; the horizon of 24 steps would take 0 min more of training here",
		"**open**: a run that should learn is still falling after 4 steps, its horizon of 4; longer runs decide",
		"(flat; baseline 1.0000) | **open**: a run that should learn has not yet after 4 steps; the horizon of 8 steps would take 0 min more of training here",
		"| **not run** yet (unrun) |",
		"| **open**: runs that should not learn have not reached their horizon: flat (4 of 8 steps); 0 min more of training here (the claim's runs one after another",
	)
	if _, out := cli("verdict", "-runs", runs, claims); !strings.Contains(out, "\nOf 9 claims: 1 reproduced, 2 not reproduced, 5 open, 1 not run.\n") {
		t.Errorf("the tally of the verdicts: %q", out)
	}
	if !strings.Contains(rows[2], "solver: 3 seeds × 4 steps, 4 s of training for the slowest replica (12 s the replicas' times added)") {
		t.Errorf("row 1 does not say the runs: %q", rows[2])
	}
	long := filepath.Join(t.TempDir(), "long.tsv")
	os.WriteFile(long, []byte("C\tfalling\t\tbaseline\t7204\n"), 0o644) // 7200 steps of 1 s to go: 2 h
	if _, out := cli("verdict", "-runs", runs, long); !strings.Contains(out, "would take 2.0 h more of training here") {
		t.Errorf("hours to the horizon: %q, want 2.0 h", out)
	}
	// Replicas train at once (train -seeds' default): the hours to the horizon are those of the
	// replicas' median speed, not their times added (3 replicas of 1 s a step: 2 h, not 6).
	for s := range 3 {
		writeRun(t, filepath.Join(runs, "falling3", fmt.Sprintf("seed-%d", s)), 1, 3, 2, 1.6, 1.2)
	}
	os.WriteFile(long, []byte("C\tfalling3\t\tbaseline\t7204\n"), 0o644)
	if _, out := cli("verdict", "-runs", runs, long); !strings.Contains(out, "would take 2.0 h more of training here") {
		t.Errorf("hours to the horizon of 3 replicas at once: %q, want 2.0 h", out)
	}
	// The runs of a claim train one after another: its hours are those of every run short of
	// its horizon added, the runs that should not learn with the others (2 h each here).
	os.WriteFile(long, []byte("C learns, B does not\tfalling3\tflat\tbaseline\t7204\n"), 0o644)
	if _, out := cli("verdict", "-runs", runs, long); !strings.Contains(out, "would take 4.0 h more of training here (the claim's runs one after another") {
		t.Errorf("hours to the horizon of a learn-run and a fail-run: %q, want 4.0 h", out)
	}
	// Still falling at its horizon: the verdict says what as many steps again would take (1 s a
	// step: another 7200 steps, 2 h), the hours #12 asks of an open claim.
	writeRun(t, filepath.Join(runs, "slow"), 1)
	writeLog(t, filepath.Join(runs, "slow"), "1800,1,1,3,NaN,1800", "3600,1,1,2,NaN,3600", "5400,1,1,1.6,NaN,5400", "7200,1,1,1.2,NaN,7200")
	os.WriteFile(long, []byte("C learns\tslow\t\tbaseline\t7200\n"), 0o644)
	if _, out := cli("verdict", "-runs", runs, long); !strings.Contains(out, "still falling after 7200 steps, its horizon of 7200; longer runs decide: another 7200 steps of each run would take 2.0 h more of training here") {
		t.Errorf("hours for as many steps again, still falling at the horizon: %q, want 2.0 h", out)
	}
	os.WriteFile(long, []byte("A solves, B never\tsolver\tflat\tsolved\t7204\n"), 0o644)
	if _, out := cli("verdict", "-runs", runs, long); !strings.Contains(out, "flat (4 of 7204 steps); 2.0 h more of training here") {
		t.Errorf("hours to the horizon of a fail-run: %q, want 2.0 h", out)
	}
	for _, h := range []string{"0", "many"} {
		os.WriteFile(long, []byte("C\tfalling\t\tbaseline\t"+h+"\n"), 0o644)
		if code, out := cli("verdict", "-runs", runs, long); code != 1 || !strings.Contains(out, "horizon \""+h+"\", want a number of steps >= 1") {
			t.Errorf("horizon %s: exit %d, %q", h, code, out)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.tsv")
	os.WriteFile(bad, []byte("x\tsolver\t\tbest\n"), 0o644)
	if code, out := cli("verdict", "-runs", runs, bad); code != 1 || !strings.Contains(out, `criterion "best", want baseline, solved or outperforms`) {
		t.Errorf("a bad criterion: exit %d, %q", code, out)
	}
}

// writeClassifier writes a run directory whose held-out accuracy at steps 1, 2, … is accs
// (held-out loss 1 − accuracy, chance 2.3).
func writeClassifier(t *testing.T, dir string, accs ...float64) {
	t.Helper()
	writeRun(t, dir, 2.3)
	var rows []string
	for i, a := range accs {
		rows = append(rows, fmt.Sprintf("%d,1,1,%g,%g,%d", i+1, 1-a, a, i+1))
	}
	writeLog(t, dir, rows...)
}

// TestVerdictOutperforms: criterion "outperforms" compares the median final held-out
// accuracies of classifiers (pixel MNIST): reproduced when the learn-runs end above the
// fail-runs at the horizon, not reproduced when not, open while short of it.
func TestVerdictOutperforms(t *testing.T) {
	runs := t.TempDir()
	for s, a := range []float64{0.9, 0.8, 0.85} { // median 0.85
		writeClassifier(t, filepath.Join(runs, "a", fmt.Sprintf("seed-%d", s)), 0.1, 0.5, 0.7, a)
	}
	writeClassifier(t, filepath.Join(runs, "b"), 0.1, 0.3, 0.6, 0.7)
	for s, a := range []float64{0.9, 0.8} { // and a third replica that diverged: median 0.8
		writeClassifier(t, filepath.Join(runs, "d", fmt.Sprintf("seed-%d", s)), 0.1, 0.5, 0.7, a)
	}
	writeRun(t, filepath.Join(runs, "d", "seed-2"), 2.3, 2, math.Inf(1))
	writeRun(t, filepath.Join(runs, "regression"), 1, 1, 0.9, 0.8, 0.7)
	claims := filepath.Join(t.TempDir(), "claims.tsv")
	os.WriteFile(claims, []byte("A beats B\ta\tb\toutperforms\t4\n"+
		"B beats A\tb\ta\toutperforms\t4\n"+
		"A beats B, given 8 steps\ta\tb\toutperforms\t8\n"+
		"C beats B\tc\tb\toutperforms\t4\n"), 0o644)
	verdictRows(t, runs, claims,
		"a **85.0%** [80.0–90.0%] held-out accuracy (loss 0.1500; chance 2.3000); b **70.0%** [70.0–70.0%] held-out accuracy (loss 0.3000; chance 2.3000) | **reproduced**",
		"| **not reproduced** at these lengths",
		"| **open**: the runs said to be more accurate are ahead so far; short of the horizon: a (4 of 8 steps), b (4 of 8 steps), 0 min more",
		"| **not run** yet (c) |",
	)
	if _, out := cli("verdict", "-runs", runs, claims); !strings.HasSuffix(out, "):\n\n- A beats B, given 8 steps (0 min)\n") {
		t.Errorf("an open outperforms claim within 3 h:\n%s", out)
	}
	os.WriteFile(claims, []byte("D beats B\td\tb\toutperforms\t4\n"), 0o644)
	verdictRows(t, runs, claims, "d **80.0%** [0.0–90.0%] held-out accuracy (loss 0.2000; chance 2.3000; 1 of 3 diverged, counted as 0%)")
	os.WriteFile(claims, []byte("R beats B\tregression\tb\toutperforms\t4\n"), 0o644)
	if code, out := cli("verdict", "-runs", runs, claims); code != 1 || !strings.Contains(out, "regression: no held-out accuracy") {
		t.Errorf("a regression run: exit %d, %q", code, out)
	}
}

// TestVerdictFlatInAllSeeds: a run that should learn rules a claim out only when every seed is
// flat over the second half of its training (issue #12: "flat … in all seeds"); one seed still
// falling leaves the claim open. A single noisy evaluation at the middle is not a fall.
func TestVerdictFlatInAllSeeds(t *testing.T) {
	runs := t.TempDir()
	flat := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	falling := []float64{1, 1, 1, 1, 1, 0.95, 0.93, 0.91, 0.9, 0.88} // 9% lost over the second half (medians 1 and 0.91)
	spike := []float64{1, 1, 1, 1, 1.4, 1, 1, 1, 1, 1}               // one noisy evaluation at the middle
	for s, l := range [][]float64{flat, flat, falling} {
		writeRun(t, filepath.Join(runs, "one-falls", fmt.Sprintf("seed-%d", s)), 2, l...)
	}
	for s, l := range [][]float64{flat, spike, flat} {
		writeRun(t, filepath.Join(runs, "spiky", fmt.Sprintf("seed-%d", s)), 2, l...)
	}
	claims := filepath.Join(t.TempDir(), "claims.tsv")
	os.WriteFile(claims, []byte("X solves\tone-falls\t\tsolved\t10\nY solves\tspiky\t\tsolved\t10\n"), 0o644)
	verdictRows(t, runs, claims,
		"one-falls **1.0000** [0.8800–1.0000] (still falling in 1 of 3 seeds; baseline 2.0000) | **open**: a run that should learn is still falling after 10 steps",
		"spiky **1.0000** [1.0000–1.0000] (flat; baseline 2.0000) | **not reproduced** at these lengths",
	)
}

// TestVerdictNotScored: a run none of whose replicas has a held-out loss yet (just started,
// or trained again from step 0 by train -restart, its logs moved aside) leaves its claim open,
// with the time it would take where its log can be timed, instead of failing the table.
func TestVerdictNotScored(t *testing.T) {
	runs := t.TempDir()
	for s := range 2 { // run.json and no log: train -restart has just moved the logs aside
		dir := filepath.Join(runs, "started", fmt.Sprintf("seed-%d", s))
		writeRun(t, dir, 1)
		os.Remove(filepath.Join(dir, "log.csv"))
	}
	unscored := filepath.Join(runs, "unscored", "seed-0")
	writeRun(t, unscored, 1)
	writeLog(t, unscored, "1,2,1,NaN,NaN,1", "2,2,1,NaN,NaN,2") // trained 2 steps, not evaluated yet
	writeRun(t, filepath.Join(runs, "solver"), 1, 1, 0.5, 0.01)
	writeClassifier(t, filepath.Join(runs, "net"), 0.5, 0.6)
	claims := filepath.Join(t.TempDir(), "claims.tsv")
	os.WriteFile(claims, []byte("S learns\tstarted\t\tsolved\t100\n"+
		"U learns\tunscored\t\tbaseline\t3602\n"+
		"A solves, S never\tsolver\tstarted\tsolved\t8\n"+
		"S beats net\tstarted\tnet\toutperforms\t2\n"+
		"A solves, S never (no horizon)\tsolver\tstarted\tsolved\n"+
		"S solves, U never\tstarted\tunscored\tsolved\t8\n"+
		"U learns, S never\tunscored\tstarted\tbaseline\t3602\n"), 0o644)
	verdictRows(t, runs, claims,
		"| started: 2 seed(s), none with a held-out loss yet (0 steps logged) | started: no held-out loss yet (baseline 1.0000) | **open**: a run that should learn has not yet after 0 steps; the horizon of 100 steps would take a time not measured yet",
		"| unscored: 1 seed(s), none with a held-out loss yet (2 steps logged) | unscored: no held-out loss yet (baseline 1.0000) | **open**: a run that should learn has not yet after 2 steps; the horizon of 3602 steps would take 1.0 h more",
		"| **open**: runs that should not learn have not reached their horizon: started (0 of 8 steps); a time not measured yet",
		"started: no held-out loss yet (chance 1.0000); net **60.0%** [60.0–60.0%] held-out accuracy (loss 0.4000; chance 2.3000) | **open**: the runs said to be more accurate are not comparable yet (a side has no held-out accuracy)",
		"| **open**: runs that should not learn have not reached their horizon: started (no held-out loss yet); 0 min more of training here",
		// The run that should learn, not scored yet, is named first, not only the other.
		"| **open**: a run that should learn has not yet after 0 steps; the horizon of 8 steps would take 0 min more of training here, and a time not measured yet for 1 run(s)",
		"| **open**: a run that should learn has not yet after 2 steps; the horizon of 3602 steps would take 1.0 h more of training here, and a time not measured yet for 1 run(s)",
	)
}

// TestVerdictDiverged: a replica whose log ends in a divergence (held-out loss +Inf) counts
// with that loss and does not hold its run short of the horizon; a replica not scored yet is
// left out of the loss and named, and holds its run short of the horizon: until every seed is
// scored, the claim waits (here seeds 4 and 5 might yet learn).
func TestVerdictDiverged(t *testing.T) {
	runs := t.TempDir()
	for s := range 3 {
		writeRun(t, filepath.Join(runs, "irnn", fmt.Sprintf("seed-%d", s)), 1, 1.1, 1.0, 1.0, 1.0)
	}
	writeRun(t, filepath.Join(runs, "irnn", "seed-3"), 1, 1.2, math.Inf(1)) // diverged at step 2
	writeRun(t, filepath.Join(runs, "irnn", "seed-4"), 1)                   // no step scored yet
	os.MkdirAll(filepath.Join(runs, "irnn", "seed-5"), 0o755)               // just starting: no files yet
	writeRun(t, filepath.Join(runs, "solver"), 1, 1, 0.5, 0.1, 0.01)
	claims := filepath.Join(t.TempDir(), "claims.tsv")
	os.WriteFile(claims, []byte("A solves, the IRNN never\tsolver\tirnn\tsolved\t4\n"), 0o644)
	code, out := cli("verdict", "-runs", runs, claims)
	if code != 0 {
		t.Fatalf("verdict: exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"irnn: 4 seeds × 0 steps",
		"not yet scored, left out: seed-4, seed-5",
		"irnn **1.0000** [1.0000–+Inf] (flat; 1 of 4 diverged; baseline 1.0000)",
		"| **open**: runs that should not learn have not reached their horizon: irnn (0 of 4 steps); 0 min more of training here",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verdict:\n%s\nwant it to contain %q", out, want)
		}
	}
	// Once they are scored and flat at the horizon, the IRNN has not learned: reproduced.
	writeRun(t, filepath.Join(runs, "irnn", "seed-4"), 1, 1.1, 1.0, 1.0, 1.0)
	writeRun(t, filepath.Join(runs, "irnn", "seed-5"), 1, 1.1, 1.0, 1.0, 1.0)
	if _, out := cli("verdict", "-runs", runs, claims); !strings.Contains(out, "irnn: 6 seeds × 4 steps") || !strings.Contains(out, "| **reproduced** |") {
		t.Errorf("verdict with every seed scored:\n%s", out)
	}
}

// TestVerdictSecondsBudget: a horizon in seconds ("6s") cuts each run's logs after the steps
// that budget buys at the run's own speed (the median seconds a step, so that a pause in the
// log does not count), so that models of different speeds compare at equal training time;
// each such row names the machines that timed the run.
func TestVerdictSecondsBudget(t *testing.T) {
	runs := t.TempDir()
	timed := func(dir string, perStep float64, pauseAfter int, losses ...float64) {
		writeRun(t, dir, 1)
		var rows []string
		sec := 0.0
		for i, l := range losses {
			if sec += perStep; i == pauseAfter {
				sec += 1000 // the process was stopped for a while
			}
			rows = append(rows, fmt.Sprintf("%d,1,1,%g,NaN,%g", i+1, l, sec))
		}
		writeLog(t, dir, rows...)
	}
	timed(filepath.Join(runs, "fast"), 1, 3, 1, 0.5, 0.05, 0.01, 0.01, 0.01) // solves at step 4, 4 s
	timed(filepath.Join(runs, "slow"), 3, -1, 1, 0.5, 0.05, 0.01)            // solves at step 4, 12 s
	// slow's steps were timed on two machines (run.json's spans name them), the others' on one
	// not recorded: the budget rows say which.
	meta := `{"Preset": {"Name": "p", "Model": {"Kind": "tanh", "Hidden": 4}, "Task": {"Kind": "copy", "T": 5}}, "Task": "Copy(T=5)", "Baseline": 1, ` +
		`"Spans": [{"From": 0, "Host": "machine A"}, {"From": 2, "Host": "machine B"}]}`
	if err := os.WriteFile(filepath.Join(runs, "slow", "run.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	timed(filepath.Join(runs, "short"), 300, -1, 1, 0.5) // 2 steps so far, 5 min a step
	timed(filepath.Join(runs, "one"), 1, -1, 1)          // one record: no speed yet
	// Evaluated only at step 8: a budget of 6 s (6 steps) is spent with no held-out loss in it.
	timed(filepath.Join(runs, "late"), 1, -1, math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), 0.01)
	claims := filepath.Join(t.TempDir(), "claims.tsv")
	os.WriteFile(claims, []byte("fast within 6 s\tfast\t\tsolved\t6s\n"+
		"slow within 6 s\tslow\t\tsolved\t6s\n"+
		"short within 3000 s\tshort\t\tsolved\t3000s\n"+
		"slow within 12 s\tslow\t\tsolved\t12s\n"+
		"fast and short within 6 s\tfast,short\t\tsolved\t6s\n"+
		"one within 6 s\tone\t\tsolved\t6s\n"+
		"late within 6 s\tlate\t\tsolved\t6s\n"+
		"slow and one within 6 s\tslow,one\t\tsolved\t6s\n"), 0o644)
	verdictRows(t, runs, claims,
		"the budget buys 6 steps at 1.00 s a step, timed on a machine not recorded | fast **0.0100** [0.0100–0.0100] (learns; baseline 1.0000) | **reproduced** |",
		"slow: 1 seeds × 2 steps, 6 s of training for the slowest replica (6 s the replicas' times added); the budget buys 2 steps at 3.00 s a step, timed on machine A and machine B | slow **0.5000** [0.5000–0.5000] (still falling; baseline 1.0000) | **not reproduced** within the budget of 6 s: still falling when it is spent, slow (2 steps at its speed) |",
		"| **open**: a run that should learn has not yet, short of the budget of 3000 s: short (2 of the 10 steps the budget buys at its speed); 40 min more of training here",
		"the budget buys 4 steps at 3.00 s a step, timed on machine A and machine B | slow **0.0100** [0.0100–0.0100] (learns; baseline 1.0000) | **reproduced** |",
		// Each run at its own budget: fast has learned within its 6 steps; short is judged at the
		// one step 6 s buy at 5 min a step (at least one), flat there: not reproduced.
		"the budget buys 1 steps at 300.00 s a step, timed on a machine not recorded | fast **0.0100** [0.0100–0.0100] (learns; baseline 1.0000); short **1.0000** [1.0000–1.0000] (flat; baseline 1.0000) | **not reproduced** at these lengths |",
		"| **open**: a run that should learn has not yet, short of the budget of 6 s: one (1 steps, too few to measure its speed)",
		"| **not reproduced** within the budget of 6 s: still falling when it is spent, late (6 steps at its speed, no held-out loss within them) |",
		// One run has spent its budget still falling: the claim fails, whatever the other does.
		"| **not reproduced** within the budget of 6 s: still falling when it is spent, slow (2 steps at its speed) |",
	)
	// Under the tally, the open claims within 3 h: short's (2 steps had at 5 min a step, 8 to go:
	// 50 min); not one's, whose speed is not measured yet.
	if _, out := cli("verdict", "-runs", runs, claims); !strings.HasSuffix(out, "):\n\n- short within 3000 s (50 min)\n") {
		t.Errorf("the open claims within 3 h:\n%s", out)
	}
	for _, h := range []string{"0s", "-5s", "xs", "1e400s", "3.5", "15OOs", "12xs", "0 steps", "3.5 steps", " steps", "3000steps"} {
		os.WriteFile(claims, []byte("C\tfast\t\tsolved\t"+h+"\n"), 0o644)
		if code, out := cli("verdict", "-runs", runs, claims); code != 1 || !strings.Contains(out, "horizon \""+h+"\", want a number of steps >= 1, alone or followed by \" steps\" (a budget of steps), or of seconds > 0 followed by s") {
			t.Errorf("horizon %s: exit %d, %q", h, code, out)
		}
	}
	for _, h := range []string{"6s", "6 steps"} {
		os.WriteFile(claims, []byte("C\tfast\tslow\toutperforms\t"+h+"\n"), 0o644)
		if code, out := cli("verdict", "-runs", runs, claims); code != 1 || !strings.Contains(out, "criterion outperforms takes a number of steps") {
			t.Errorf("outperforms with a budget %q: exit %d, %q", h, code, out)
		}
	}
}

// TestVerdictStepsBudget: a budget of steps ("4 steps") judges each run at that step, its logs
// cut there: a run that should learn and has not by then does not reproduce the claim, even
// when it is still falling or learns later; one short of it is open, with the hours to it.
func TestVerdictStepsBudget(t *testing.T) {
	runs := t.TempDir()
	writeRun(t, filepath.Join(runs, "quick"), 1, 1, 0.5, 0.05, 0.01, 0.01, 0.01) // solves at step 4
	writeRun(t, filepath.Join(runs, "late"), 1, 1, 0.8, 0.6, 0.4, 0.2, 0.01)     // still falling at step 4, solves at 6
	writeRun(t, filepath.Join(runs, "short"), 1, 1, 0.8)                         // 2 steps so far, 1 s a step
	writeRun(t, filepath.Join(runs, "falling"), 1, 1, 0.8, 0.6, 0.4)             // 4 steps, still falling
	claims := filepath.Join(t.TempDir(), "claims.tsv")
	os.WriteFile(claims, []byte("quick within 4 steps\tquick\t\tsolved\t4 steps\n"+
		"late within 4 steps\tlate\t\tsolved\t4 steps\n"+
		"late within 6 steps\tlate\t\tsolved\t6 steps\n"+
		"short within 4 steps\tshort\t\tsolved\t4 steps\n"+
		"late, horizon 4\tlate\t\tsolved\t4\n"+
		"falling within 4 steps\tfalling\t\tsolved\t4 steps\n"+
		"falling, horizon 4\tfalling\t\tsolved\t4\n"), 0o644)
	verdictRows(t, runs, claims,
		"quick: 1 seeds × 4 steps, 4 s of training for the slowest replica (4 s the replicas' times added) | quick **0.0100** [0.0100–0.0100] (learns; baseline 1.0000) | **reproduced** |",
		"late: 1 seeds × 4 steps, 4 s of training for the slowest replica (4 s the replicas' times added) | late **0.4000** [0.4000–0.4000] (still falling; baseline 1.0000) | **not reproduced** within the budget of 4 steps: still falling when it is spent, late (at step 4) |",
		"late **0.0100** [0.0100–0.0100] (learns; baseline 1.0000) | **reproduced** |",
		"| **open**: a run that should learn has not yet after 2 steps; the horizon of 4 steps would take 0 min more of training here",
		// A plain horizon is not a budget: a run trained beyond it is judged at its end, and one
		// still falling at it asks for a longer one.
		"late: 1 seeds × 6 steps, 6 s of training for the slowest replica (6 s the replicas' times added) | late **0.0100** [0.0100–0.0100] (learns; baseline 1.0000) | **reproduced** |",
		"| **not reproduced** within the budget of 4 steps: still falling when it is spent, falling (at step 4) |",
		"| **open**: a run that should learn is still falling after 4 steps, its horizon of 4; longer runs decide",
	)
}

// TestVerdictSolvedAdding: on the adding problem "solved" is a held-out MSE below 0.01 (issue
// #12), not a tenth of the baseline (0.0167): a run at 0.012 has learned but not solved it. A
// run the claim says does not solve the task refutes it once the median of its seeds' best
// losses held over 5 evaluations running (runs.HeldOut) is below that line, whatever it ends at;
// one evaluation's dip is not enough, nor a seed not scored yet.
func TestVerdictSolvedAdding(t *testing.T) {
	runs := t.TempDir()
	meta := `{"Preset": {"Name": "p", "Model": {"Kind": "tanh", "Hidden": 4}, "Task": {"Kind": "adding", "T": 5}}, "Task": "Adding(T=5)", "Baseline": 0.16666666666666666}`
	const e = 0.012
	for name, losses := range map[string][]float64{
		"near":            {0.2, e, e, e, e, e, e, e, e, e, e, e, e},
		"solver":          {0.2, 0.009, 0.009, 0.009, 0.009, 0.009, 0.009, 0.009, 0.009, 0.009, 0.009, 0.009, 0.009},
		"dip":             {0.2, 0.005, e, e, e, e, e, e, e, e, e, e, e},                 // one evaluation below: noise
		"held":            {0.2, 0.005, 0.004, 0.006, 0.005, 0.008, e, e, e, e, e, e, e}, // held below for 5 evaluations
		"unscored/seed-0": {0.2, 0.005, 0.004, 0.006, 0.005, 0.008, e, e, e, e, e, e, e},
	} {
		dir := filepath.Join(runs, name)
		writeRun(t, dir, 1/6.0, losses...)
		if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, seed := range []string{"seed-1", "seed-2"} { // logged, not evaluated yet
		dir := filepath.Join(runs, "unscored", seed)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "run.json"), []byte(meta), 0o644)
		writeLog(t, dir, "5,1,1,NaN,NaN,5")
	}
	claims := filepath.Join(t.TempDir(), "claims.tsv")
	text := "solves\tsolver\t\tsolved\t13\n" +
		"solves too\tnear\t\tsolved\t13\n" +
		"B never\tsolver\tnear\tsolved\t13\n" +
		"below the baseline\tnear\t\tbaseline\t13\n" +
		"B never finds it\tsolver\tdip\tsolved\t13\n" +
		"B never finds it\tsolver\theld\tsolved\t13\n" +
		"B never finds it, 1 of 3 seeds scored\tsolver\tunscored\tsolved\t13\n" +
		"held learns\theld\t\tsolved\t13\n"
	os.WriteFile(claims, []byte(text), 0o644)
	rows := verdictRows(t, runs, claims,
		"solver **0.0090** [0.0090–0.0090] (learns; baseline 0.1667) | **reproduced**",
		"near **0.0120** [0.0120–0.0120] (flat; baseline 0.1667) | **not reproduced**",
		"| **reproduced**",
		"near **0.0120** [0.0120–0.0120] (learns; baseline 0.1667) | **reproduced**",
		"dip **0.0120** [0.0120–0.0120] (flat; baseline 0.1667) | **reproduced**",
		"held **0.0120** [0.0120–0.0120] (flat; its best (a median of 5 evaluations running) below the solved loss in 1 of 1 seeds, median 0.0050; baseline 0.1667) | **not reproduced**",
		"not yet scored, left out: seed-1, seed-2 | solver **0.0090** [0.0090–0.0090] (learns; baseline 0.1667); unscored **0.0120** [0.0120–0.0120] (flat; baseline 0.1667) | **open**: runs that should not learn have not reached their horizon: unscored (5 of 13 steps)",
		"held **0.0120** [0.0120–0.0120] (flat; baseline 0.1667) | **not reproduced**", // no note on a learn-run
	)
	if strings.Contains(rows[8], "solved it for") || strings.Contains(rows[8], "**not reproduced**") {
		t.Errorf("a fail-run with 2 of 3 seeds not scored refutes the claim: %q", rows[8])
	}
}

// TestVerdictStillFallingHours: a claim still falling at its horizon gives the hours of as many
// steps again for each of its runs, those that should not learn too, and the hours of a run
// short of the horizon to it.
func TestVerdictStillFallingHours(t *testing.T) {
	runs := t.TempDir()
	curve := func(name string, steps int, losses ...float64) { // 1 s a step
		dir := filepath.Join(runs, name)
		writeRun(t, dir, 1)
		var rows []string
		for i, l := range losses {
			st := (i + 1) * steps / len(losses)
			rows = append(rows, fmt.Sprintf("%d,1,1,%g,NaN,%d", st, l, st))
		}
		writeLog(t, dir, rows...)
	}
	curve("falling", 3600, 3, 2, 1.6, 1.2)    // still falling at 3600
	curve("flatfail", 3600, 1, 1, 1, 1)       // should not learn, at the baseline at 3600
	curve("shortfail", 1800, 1, 1, 1, 1)      // should not learn, at 1800 of 3600
	curve("shortlearn", 1800, 3, 2, 1.6, 1.2) // should learn, at 1800 of 3600
	claims := filepath.Join(t.TempDir(), "claims.tsv")
	os.WriteFile(claims, []byte("A\tfalling\t\tbaseline\t3600\n"+
		"A, B never\tfalling\tflatfail\tbaseline\t3600\n"+
		"A, C never\tfalling\tshortfail\tbaseline\t3600\n"+
		"A and D\tfalling,shortlearn\t\tbaseline\t3600\n"), 0o644)
	verdictRows(t, runs, claims,
		"still falling after 3600 steps, its horizon of 3600; longer runs decide: another 3600 steps of each run would take 1.0 h more",
		"longer runs decide: another 3600 steps of each run would take 2.0 h more", // B trains on too
		"longer runs decide: another 3600 steps of each run would take 1.5 h more", // and C to its horizon
		// D first, and then as many steps again for A, still falling at the horizon.
		"a run that should learn has not yet after 1800 steps; the horizon of 3600 steps would take 30 min more of training here (the claim's runs one after another, each with its replicas at once, at its median speed so far); a run that should learn is still falling at it: another 3600 steps of each run at it would take 1.0 h more",
	)
	// The claims whose machine time, the training their runs have had and the hours their verdict
	// names, is at most 3 h: issue #12's claims to run (A, B never: 2 h had, 2 h more).
	want := "take at most 3 h of machine time here, per claim: the training they have had and the training the verdict names, at their measured pace" +
		" (the project trains those to a verdict, by docs/run_*.sh, and leaves the others open; claims that share runs share hours):\n\n- A (2.0 h)\n- A, C never (3.0 h)\n- A and D (3.0 h)\n"
	if _, out := cli("verdict", "-runs", runs, claims); !strings.HasSuffix(out, want) {
		t.Errorf("the claims within 3 h:\n%s\nwant it to end with %q", out, want)
	}
	os.WriteFile(claims, []byte("A, B never\tfalling\tflatfail\tbaseline\t3600\n"), 0o644) // 4 h
	if _, out := cli("verdict", "-runs", runs, claims); !strings.HasSuffix(out, "share hours): none.\n") {
		t.Errorf("no open claim within 3 h:\n%s", out)
	}
}

// TestClaimLabel: a claim is named by its statement up to the first colon outside brackets and
// quotes.
func TestClaimLabel(t *testing.T) {
	for statement, want := range map[string]string{
		`Henaff §4.3 (copy, T = 500, Fig. 4): "The LT-ORNN …"`:                                        "Henaff §4.3 (copy, T = 500, Fig. 4)",
		`Arjovsky §4.3 (pixel MNIST; the final paper: "LSTM 98.2%"): the LSTM 128 ends more accurate`: `Arjovsky §4.3 (pixel MNIST; the final paper: "LSTM 98.2%")`,
		`the ESN, 128 units, solves copy T = 500 within 3000 steps`:                                   `the ESN, 128 units, solves copy T = 500 within 3000 steps`,
		`A says "x: y" here: z`: `A says "x: y" here`,
	} {
		if got := claimLabel(statement); got != want {
			t.Errorf("claimLabel(%q) = %q, want %q", statement, got, want)
		}
	}
}
