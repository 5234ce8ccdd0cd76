package runs

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/plots"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// TestCompactLog: every field of train.Record goes through log.gz and back bit for bit (the
// wall time to 1/100 s), float64 columns stay float64, and a cut or altered file is refused.
func TestCompactLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogFile)
	var log []train.Record
	for s := 1; s <= 2000; s++ {
		r := train.Record{Step: s, Loss: float64(float32(0.17 * math.Exp(-float64(s)/700))), GradNorm: float64(float32(1 / float64(s))),
			EvalLoss: math.NaN(), EvalAccuracy: math.NaN(), Penalty: math.NaN(), Seconds: float64(s) * 0.137}
		if s%100 == 0 {
			r.EvalLoss, r.EvalAccuracy = float64(float32(r.Loss*1.1)), 0.1*float64(s/100)
		}
		log = append(log, r)
	}
	log[len(log)-1].EvalLoss = math.Inf(1)
	if err := WriteLog(path, log); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLog(path)
	if err != nil || len(got) != len(log) {
		t.Fatalf("ReadLog: %d records, %v", len(got), err)
	}
	for i := range log {
		w, g := log[i], got[i]
		if math.Abs(g.Seconds-w.Seconds) > 0.005+1e-9 {
			t.Fatalf("record %d: seconds %v, want %v to 1/100", i, g.Seconds, w.Seconds)
		}
		g.Seconds, w.Seconds = 0, 0
		if fmt.Sprintf("%v", g) != fmt.Sprintf("%v", w) || math.Float64bits(g.Loss) != math.Float64bits(w.Loss) || math.Float64bits(g.EvalAccuracy) != math.Float64bits(w.EvalAccuracy) {
			t.Fatalf("record %d: %+v, want %+v", i, got[i], log[i])
		}
	}
	b, _ := os.ReadFile(path)
	t.Logf("log.gz: %d bytes for %d steps (%.1f B a step)", len(b), len(log), float64(len(b))/float64(len(log)))
	if perStep := float64(len(b)) / float64(len(log)); perStep > 12 {
		t.Errorf("log.gz takes %.1f bytes a step, want at most 12", perStep)
	}
	for name, bad := range map[string][]byte{"cut": b[:len(b)/2], "not gzip": []byte("step,loss\n")} {
		os.WriteFile(path, bad, 0o644)
		if _, err := ReadLog(path); err == nil {
			t.Errorf("ReadLog of a %s log: no error", name)
		}
	}
	if err := WriteLog(path, []train.Record{{Step: 2}, {Step: 1}}); err == nil || !strings.Contains(err.Error(), "step 1 after step 2") {
		t.Errorf("WriteLog of decreasing steps: %v", err)
	}
}

// TestLogSegments: a log longer than a segment is written as several gzip members and read
// back whole; the log of the same run written again after more steps begins with the same
// bytes up to its last full member (so that git stores only the end anew); a log written as
// one member (before segments) is still read; a cut member is refused.
func TestLogSegments(t *testing.T) {
	var log []train.Record
	for s := 1; s <= 2*logSegment+7; s++ {
		log = append(log, train.Record{Step: s, Loss: float64(float32(1 / float64(s))), GradNorm: float64(float32(math.Sqrt(float64(s)))),
			EvalLoss: math.NaN(), EvalAccuracy: math.NaN(), Penalty: math.NaN(), Seconds: float64(s) / 4})
	}
	encode := func(log []train.Record) []byte {
		var b bytes.Buffer
		if err := EncodeLog(&b, log); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	whole, shorter := encode(log), encode(log[:logSegment+3])
	got, err := DecodeLog(whole)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(log) {
		t.Fatalf("DecodeLog of %d records in segments: %d records, %v", len(log), len(got), err)
	}
	sealed := encode(log[:logSegment])
	if !bytes.HasPrefix(shorter, sealed) || !bytes.HasPrefix(whole, sealed) {
		t.Errorf("logs of %d and %d records do not begin with the %d bytes of their first full segment", logSegment+3, len(log), len(sealed))
	}
	var one bytes.Buffer
	if err := encodeSegment(&one, log); err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeLog(one.Bytes()); err != nil || fmt.Sprint(got) != fmt.Sprint(log) {
		t.Errorf("DecodeLog of one member: %d records, %v", len(got), err)
	}
	if _, err := DecodeLog(whole[:len(sealed)+10]); err == nil || !strings.Contains(err.Error(), "member 2") {
		t.Errorf("DecodeLog of a log cut in its second member: %v", err)
	}
	if got, err := DecodeLog(encode(nil)); err != nil || len(got) != 0 {
		t.Errorf("DecodeLog of an empty log: %v, %v", got, err)
	}
}

// TestWriteCSV: a log printed as CSV (longmemory log) has Header and a line per record; a
// float32 value takes the digits that identify the float32, not float64's 17, and a value
// that is no float32 (a wall time, an accuracy, a float64 graph's norm) is written exactly.
func TestWriteCSV(t *testing.T) {
	loss := float64(float32(0.012131083756685257))
	var b strings.Builder
	if err := WriteCSV(&b, []train.Record{
		{Step: 1, Loss: 0.5, GradNorm: 2, EvalLoss: math.NaN(), EvalAccuracy: math.NaN(), Seconds: 0.25, Penalty: 0.125},
		{Step: 40000, Loss: loss, GradNorm: 0.30000000000000004, EvalLoss: math.Inf(1), EvalAccuracy: 1.0 / 3, Seconds: 251.848203425, Penalty: math.NaN()},
	}); err != nil {
		t.Fatal(err)
	}
	want := "step,loss,grad_norm,eval_loss,eval_accuracy,penalty,seconds\n" +
		"1,0.5,2,NaN,NaN,0.125,0.25\n" +
		"40000,0.012131084,0.30000000000000004,+Inf,0.3333333333333333,NaN,251.848203425\n"
	if b.String() != want {
		t.Errorf("WriteCSV:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestOpen: a second Open of a locked directory fails naming the holder; after Close it
// succeeds. A lock file left by a dead process is taken over and the temporary files of a
// killed run are removed, both told in Notices.
func TestOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	d, err := Open(dir)
	if err != nil || len(d.Notices) != 0 {
		t.Fatalf("Open: %v, %v", err, d.Notices)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("in use by PID %d", os.Getpid())) {
		t.Errorf("second Open: %v", err)
	}
	d.Close()
	os.WriteFile(filepath.Join(dir, LockFile), []byte("PID 1 on elsewhere\n"), 0o644)
	os.MkdirAll(CheckpointDir(dir), 0o755)
	stale := []string{filepath.Join(dir, LogFile+".tmp"), filepath.Join(CheckpointDir(dir), train.TempPrefix+"1")}
	for _, p := range stale {
		os.WriteFile(p, nil, 0o644)
	}
	d, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	notices := strings.Join(d.Notices, "\n")
	if !strings.Contains(notices, "taking over the stale lock of PID 1 on elsewhere") {
		t.Errorf("notices %q", notices)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil || !strings.Contains(notices, "removed "+p) {
			t.Errorf("%s: %v, notices %q", p, err, notices)
		}
	}
}

// TestSetAside: checkpoints, log, run.json and the scores of the weights move into one new
// directory; nothing is lost, and no score is left beside a run that starts afresh.
func TestSetAside(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	os.MkdirAll(CheckpointDir(dir), 0o755)
	os.WriteFile(filepath.Join(CheckpointDir(dir), "ckpt-000000001.gob"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, LogFile), []byte("y"), 0o644)
	if err := WriteTest(dir, Test{Step: 1, Examples: 3, Loss: 0.5}); err != nil {
		t.Fatal(err)
	}
	aside, err := d.SetAside("unreadable")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(aside), "unreadable-") || filepath.Dir(aside) != dir {
		t.Errorf("set aside into %s, want %s/unreadable-<time>", aside, dir)
	}
	if b, err := os.ReadFile(filepath.Join(aside, Checkpoints, "ckpt-000000001.gob")); err != nil || string(b) != "x" {
		t.Errorf("checkpoint aside: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(aside, LogFile)); err != nil || string(b) != "y" {
		t.Errorf("log aside: %q, %v", b, err)
	}
	if HasCheckpoints(dir) {
		t.Error("checkpoints left in place")
	}
	if _, err := ReadTest(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the test score left in place: %v", err)
	}
	if sc, err := ReadTest(aside); err != nil || sc.Examples != 3 {
		t.Errorf("test score aside: %+v, %v", sc, err)
	}
}

func TestReplicas(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"seed-10", "seed-9", "seed-x", "other"} {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "seed-3"), nil, 0o644) // a file, not a replica
	got := Replicas(dir)
	if len(got) != 2 || filepath.Base(got[0]) != "seed-9" || filepath.Base(got[1]) != "seed-10" || ReplicaSeed(got[1]) != 10 {
		t.Errorf("Replicas = %v", got)
	}
	if ReplicaDir(dir, 9) != got[0] || len(RunDirs(filepath.Join(dir, "other"))) != 1 {
		t.Errorf("ReplicaDir, RunDirs")
	}
}

// TestKeyAndDiff: Key leaves out zero fields and the name (where the run lives is not part of
// a preset); Diff leaves out bookkeeping and compares with defaults applied.
func TestKeyAndDiff(t *testing.T) {
	p, err := experiments.Lookup("arjovsky/copy-T100/urnn-128")
	if err != nil {
		t.Fatal(err)
	}
	k := Key(p)
	if !strings.HasPrefix(k, "preset/1 Model.Kind=urnn Model.Hidden=128 Task.Kind=copy Task.T=100 Train.Steps=3000") ||
		strings.Contains(k, "Pooling") || strings.Contains(k, "Orthogonality") || strings.Contains(k, "arjovsky") {
		t.Errorf("Key = %q", k)
	}
	q := p
	q.Name, q.Paper = "other", "other"
	if Key(q) != k {
		t.Errorf("Key depends on the name: %q", Key(q))
	}
	q.Train.Optimizer.LR = 0.5
	if Key(q) == k {
		t.Error("Key ignores the learning rate")
	}
	if c := Diff(p, q); len(c) != 1 || c[0].Field != "Train.Optimizer.LR" || c[0].Now != 0.5 {
		t.Errorf("Diff = %+v", c)
	}
	r := p
	r.Train.Steps, r.Train.Batch = 5, 0 // bookkeeping; the default batch (20) is the preset's
	if c := Diff(p, r); len(c) != 0 {
		t.Errorf("Diff = %+v, want none", c)
	}
}

// TestChartNames: runs of the same model are named by their directories, less the part the
// names share up to a word boundary; other runs keep the model's name.
func TestChartNames(t *testing.T) {
	root := t.TempDir()
	write := func(name, kind string) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		kind, pool, _ := strings.Cut(kind, "+")
		meta := fmt.Sprintf(`{"Preset": {"Model": {"Kind": %q, "Hidden": 4, "Pooling": %t}}, "Task": "Adding(T=5)", "Baseline": 0.167}`, kind, pool == "pool")
		if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := WriteLog(filepath.Join(dir, LogFile), []train.Record{{Step: 1, Loss: 1, EvalLoss: 0.5, EvalAccuracy: math.NaN(), Penalty: math.NaN()}}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dirs := []string{write("adding-lt-irnn", "lt-irnn"), write("adding-lt-irnn-lr1e-3", "lt-irnn"), write("adding-lt-ornn", "lt-ornn"),
		write("adding-lt-ornn-pool", "lt-ornn+pool")}
	c, err := Chart(dirs, HeldOutLoss)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range c.Series {
		got = append(got, s.Name)
	}
	if want := "irnn|irnn-lr1e-3|lt-ornn 4|lt-ornn 4 pool|baseline"; strings.Join(got, "|") != want {
		t.Errorf("series names %q, want %q", strings.Join(got, "|"), want)
	}
	// Multi-seed runs of one model keep their seed count when named by directory.
	for _, d := range []string{"x-a/seed-0", "x-a/seed-1", "x-b/seed-0", "x-b/seed-1"} {
		write(d, "lt-irnn")
	}
	c, err = Chart([]string{filepath.Join(root, "x-a"), filepath.Join(root, "x-b")}, HeldOutLoss)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Series[0].Name + "|" + c.Series[1].Name; got != "a, 2 seeds|b, 2 seeds" {
		t.Errorf("multi-seed series names %q, want %q", got, "a, 2 seeds|b, 2 seeds")
	}
}

// TestChunkIsBookkeeping: the BPTT chunk neither names a run (Key) nor counts as a changed
// setting on resume (Diff), since backpropagation is exact across chunks.
func TestChunkIsBookkeeping(t *testing.T) {
	p, err := experiments.Lookup("arjovsky/copy-T500/urnn-128")
	if err != nil {
		t.Fatal(err)
	}
	q := p
	q.Train.Chunk = 64
	if Key(p) != Key(q) {
		t.Errorf("Key changes with the chunk:\n%s\n%s", Key(p), Key(q))
	}
	if d := Diff(p, q); len(d) != 0 {
		t.Errorf("Diff of presets that differ only in the chunk = %v, want none", d)
	}
}

// TestSuccessorsShareArjovskyRuns: the uRNN and the LSTM of the presets "successors/…" train
// what Arjovsky's presets at the same task and T train (same Key, no Diff), so
// docs/runs.tsv lists each of those runs once, for the claims and the successors alike.
func TestSuccessorsShareArjovskyRuns(t *testing.T) {
	for _, pair := range [][2]string{
		{"successors/copy-T500/urnn-128", "arjovsky/copy-T500/urnn-128"},
		{"successors/copy-T500/lstm-peephole-40", "arjovsky/copy-T500/lstm-peephole-40"},
		{"successors/adding-T400/urnn-512", "arjovsky/adding-T400/urnn-512"},
		{"successors/adding-T400/lstm-peephole-128", "arjovsky/adding-T400/lstm-peephole-128"},
	} {
		p, err := experiments.Lookup(pair[0])
		if err != nil {
			t.Fatal(err)
		}
		q, err := experiments.Lookup(pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if Key(p) != Key(q) || len(Diff(p, q)) != 0 {
			t.Errorf("%s and %s train different things: %v", pair[0], pair[1], Diff(p, q))
		}
	}
}

// TestSummaryDiverged: a replica whose log ends in a divergence (held-out loss +Inf) counts
// in the median with that loss and among the seeds ending above the baseline, and its steps
// are not the run's.
func TestSummaryDiverged(t *testing.T) {
	dir := t.TempDir()
	meta := `{"Preset": {"Model": {"Kind": "irnn", "Hidden": 4}}, "Task": "Adding(T=5)", "Baseline": 0.167}`
	logs := map[string][]train.Record{
		"seed-0": {{Step: 1, EvalLoss: 0.3}, {Step: 2, EvalLoss: 0.1}, {Step: 3, EvalLoss: 0.05}}, // final 0.1, below the baseline
		"seed-1": {{Step: 1, EvalLoss: 0.3}, {Step: 2, EvalLoss: 0.25}, {Step: 3, EvalLoss: 0.2}},
		"seed-2": {{Step: 1, EvalLoss: 0.3}, {Step: 2, EvalLoss: math.Inf(1)}},
	}
	for name, log := range logs {
		rep := filepath.Join(dir, name)
		os.MkdirAll(rep, 0o755)
		os.WriteFile(filepath.Join(rep, MetaFile), []byte(meta), 0o644)
		for i := range log {
			log[i].EvalAccuracy, log[i].Penalty = math.NaN(), math.NaN()
		}
		if err := WriteLog(filepath.Join(rep, LogFile), log); err != nil {
			t.Fatal(err)
		}
	}
	var table strings.Builder
	if err := Summary(&table, dir); err != nil {
		t.Fatal(err)
	}
	if want := "| irnn 4 | Adding(T=5) | 3 | 0 s | 0.2500 [0.1000–+Inf] | 2 of 3 |"; !strings.Contains(table.String(), want) {
		t.Errorf("summary:\n%s\nwant it to contain %q", table.String(), want)
	}
}

// TestReportSkipsStartingReplicas: a replica directory without its files yet (a replica just
// starting) is left out of Chart and Summary instead of failing them.
func TestReportSkipsStartingReplicas(t *testing.T) {
	dir := t.TempDir()
	rep := filepath.Join(dir, "seed-0")
	os.MkdirAll(rep, 0o755)
	os.WriteFile(filepath.Join(rep, MetaFile), []byte(`{"Preset": {"Model": {"Kind": "tanh", "Hidden": 4}}, "Task": "Adding(T=5)", "Baseline": 0.167}`), 0o644)
	if err := WriteLog(filepath.Join(rep, LogFile), []train.Record{{Step: 1, EvalLoss: 0.5, EvalAccuracy: math.NaN(), Penalty: math.NaN()}}); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "seed-1"), 0o755) // starting: no files yet
	var table strings.Builder
	if err := Summary(&table, dir); err != nil || !strings.Contains(table.String(), "| 0.5000 [0.5000–0.5000] |") || !strings.Contains(table.String(), "(1 seeds)") {
		t.Errorf("Summary: %v\n%s", err, table.String())
	}
	if c, err := Chart([]string{dir}, HeldOutLoss); err != nil || len(c.Series) != 2 {
		t.Errorf("Chart: %v, %d series", err, len(c.Series))
	}
	// A run none of whose replicas has a log yet (train -restart moved the logs aside, or it
	// has just started): a row that says so, and left out of a chart with other runs.
	again := filepath.Join(t.TempDir(), "again")
	for s := range 2 {
		rep := filepath.Join(again, fmt.Sprintf("seed-%d", s))
		os.MkdirAll(rep, 0o755)
		os.WriteFile(filepath.Join(rep, MetaFile), []byte(`{"Preset": {"Model": {"Kind": "lt-ornn", "Hidden": 8}}, "Task": "Copy(T=9)", "Baseline": 0.25}`), 0o644)
	}
	// and a replica trained but not evaluated yet is left out of its run's row like one starting.
	unscored := filepath.Join(dir, "seed-2")
	os.MkdirAll(unscored, 0o755)
	os.WriteFile(filepath.Join(unscored, MetaFile), []byte(`{"Preset": {"Model": {"Kind": "tanh", "Hidden": 4}}, "Task": "Adding(T=5)", "Baseline": 0.167}`), 0o644)
	if err := WriteLog(filepath.Join(unscored, LogFile), []train.Record{{Step: 1, Loss: 0.4, EvalLoss: math.NaN(), EvalAccuracy: math.NaN(), Penalty: math.NaN()}}); err != nil {
		t.Fatal(err)
	}
	table.Reset()
	if err := Summary(&table, dir, again); err != nil || !strings.Contains(table.String(), "(1 seeds) | tanh 4 | Adding(T=5) | 1 | 0 s | 0.5000 [0.5000–0.5000] |") ||
		!strings.Contains(table.String(), "| again (2 seeds, no held-out loss yet) | lt-ornn 8 | Copy(T=9) | 0 | 0 s | – | – | – | – | 0.2500 |") {
		t.Errorf("Summary of a run with no log yet: %v\n%s", err, table.String())
	}
	if c, err := Chart([]string{again, dir}, HeldOutLoss); err != nil || len(c.Series) != 2 || c.Series[0].Name != "tanh 4" || c.Title != "Adding(T=5)" {
		t.Errorf("Chart with a run with no log yet: %v, %+v", err, c.Series)
	}
	// Left out, it does not shift the names of the runs after it: two runs of the same model
	// are told apart by their own directories.
	other := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+"-lr1e-3")
	os.CopyFS(other, os.DirFS(dir))
	if c, err := Chart([]string{again, dir, other}, HeldOutLoss); err != nil || len(c.Series) != 3 ||
		!strings.HasPrefix(c.Series[0].Name, filepath.Base(dir)) || !strings.HasPrefix(c.Series[1].Name, filepath.Base(other)) {
		t.Errorf("Chart names after a run left out: %v, %+v", err, c.Series)
	}
	if _, err := Chart([]string{again}, HeldOutLoss); err == nil || !strings.Contains(err.Error(), "no replica has a log yet") {
		t.Errorf("Chart of a run with no log yet alone: %v, want an error", err)
	}
	// Too few evaluations to draw: the phrase gives the logged replicas' steps from the least to
	// the most advanced, one number when they agree (seed-0 and seed-2 at step 1; seed-1 has no log).
	if got, want := TooFewToDraw(dir), "1 steps, 1 held-out evaluation(s), too few to draw"; got != want {
		t.Errorf("TooFewToDraw = %q, want %q", got, want)
	}
	uneven := filepath.Join(t.TempDir(), "uneven")
	for s, last := range []int{25, 24} {
		rep := filepath.Join(uneven, fmt.Sprintf("seed-%d", s))
		os.MkdirAll(rep, 0o755)
		os.WriteFile(filepath.Join(rep, MetaFile), []byte(`{"Preset": {"Model": {"Kind": "tanh", "Hidden": 4}}, "Task": "Adding(T=5)", "Baseline": 0.167}`), 0o644)
		if err := WriteLog(filepath.Join(rep, LogFile), []train.Record{{Step: last, Loss: 0.4, EvalLoss: math.NaN(), EvalAccuracy: math.NaN(), Penalty: math.NaN()}}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := TooFewToDraw(uneven), "24–25 steps, 0 held-out evaluation(s), too few to draw"; got != want {
		t.Errorf("TooFewToDraw of replicas at different steps = %q, want %q", got, want)
	}
	if got, want := TooFewToDraw(again), "0 steps, 0 held-out evaluation(s), too few to draw"; got != want {
		t.Errorf("TooFewToDraw of a run with no log = %q, want %q", got, want)
	}
}

// TestStepSeconds: the median seconds a step over a log's consecutive records, so that a
// pause (or a compilation after a resume) in the seconds column does not count.
func TestStepSeconds(t *testing.T) {
	nan := math.NaN()
	log := []train.Record{{Step: 1, Seconds: 2, EvalLoss: nan}, {Step: 2, Seconds: 2.5, EvalLoss: nan}, {Step: 4, Seconds: 3.5, EvalLoss: nan},
		{Step: 5, Seconds: 903.5, EvalLoss: nan}, {Step: 6, Seconds: 904, EvalLoss: nan}}
	if got := StepSeconds(log); got != 0.5 {
		t.Errorf("StepSeconds = %g, want 0.5 (the 900 s pause left out)", got)
	}
	if got := StepSeconds(log[:1]); !math.IsNaN(got) {
		t.Errorf("StepSeconds of one record = %g, want NaN", got)
	}
	// Steps of 4 ms, the wall time kept to 1/100 s (as log.gz keeps it), a held-out evaluation
	// of 1 s every 50 steps and one pause of 100 s: 4 ms a step.
	log = nil
	clock := 0.0
	for s := 1; s <= 10000; s++ {
		clock += 0.004
		r := train.Record{Step: s, EvalLoss: nan}
		if s%50 == 0 {
			clock += 1
			r.EvalLoss = 0.1
		}
		if s == 5000 {
			clock += 100
		}
		r.Seconds = math.Round(clock*100) / 100
		log = append(log, r)
	}
	if got := StepSeconds(log); math.Abs(got-0.004) > 0.0002 {
		t.Errorf("StepSeconds of 4 ms steps logged to 1/100 s = %g, want 0.004", got)
	}
}

// TestHeldOut: the final held-out loss is the median of the last EvalWindow evaluations and the
// best the lowest median of EvalWindow evaluations running, so that one evaluation's dip is
// neither a run's final nor its best.
func TestHeldOut(t *testing.T) {
	log := func(losses ...float64) []train.Record {
		var l []train.Record
		for i, v := range losses {
			l = append(l, train.Record{Step: i + 1, EvalLoss: v, EvalAccuracy: 1 - v}, train.Record{Step: i + 1, EvalLoss: math.NaN()})
		}
		return l
	}
	for _, tc := range []struct {
		losses           []float64
		final, best, acc float64
	}{
		{[]float64{1, 0.1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5}, 0.5, 0.5, 0.5}, // the dip to 0.1 is not held
		{[]float64{1, 0.2, 0.2, 0.2, 1, 1}, 0.2, 0.2, 0.8},                   // held for 3 of the last 5: their median
		{[]float64{1, 1, 1, 1, 1, 0.01}, 1, 1, 0},                            // one low evaluation at the end is not the final
		{[]float64{3, 2}, 2.5, 2.5, -1.5},                                    // fewer than 5: their median
		{[]float64{0.5, 0.4, 0.3, 0.2, 0.1}, 0.3, 0.3, 0.7},                  // exactly 5, still falling: the median of the 5
		{[]float64{1.2, math.Inf(1)}, math.Inf(1), 1.2, 0},                   // diverged: the final loss is +Inf (accuracy 0), not part of the best
	} {
		final, best, acc := HeldOut(log(tc.losses...))
		if final != tc.final || math.Abs(best-tc.best) > 1e-12 || math.Abs(acc-tc.acc) > 1e-12 {
			t.Errorf("HeldOut(%v) = %v, %v, %v; want %v, %v, %v", tc.losses, final, best, acc, tc.final, tc.best, tc.acc)
		}
	}
	if final, best, acc := HeldOut([]train.Record{{Step: 1, EvalLoss: math.NaN()}}); !math.IsNaN(final) || !math.IsInf(best, 1) || !math.IsNaN(acc) {
		t.Errorf("never scored: %v, %v, %v; want NaN, +Inf, NaN", final, best, acc)
	}
}

// TestColorByModel: a model's colour follows its kind, not its place in the chart; a second
// series of the same kind gets another colour; the dashed baseline keeps its own.
func TestColorByModel(t *testing.T) {
	a := plots.Chart{Series: []plots.Series{{Name: "urnn 128"}, {Name: "irnn 80, 8 seeds"}}}
	b := plots.Chart{Series: []plots.Series{{Name: "irnn 80"}, {Name: "lt-ornn 80"}, {Name: "lt-ornn 80 pool"}, {Name: "baseline", Dashed: true, Color: "#555555"}}}
	ColorByModel(&a)
	ColorByModel(&b)
	if a.Series[1].Color != b.Series[0].Color || a.Series[1].Color == "" {
		t.Errorf("the IRNN is %q in one chart and %q in another", a.Series[1].Color, b.Series[0].Color)
	}
	if b.Series[1].Color == b.Series[2].Color || b.Series[3].Color != "#555555" {
		t.Errorf("colours %q, %q, baseline %q: want two different ones and the baseline's own", b.Series[1].Color, b.Series[2].Color, b.Series[3].Color)
	}
	// Every kind has a colour of its own, whichever other models share its chart.
	seen := map[string]string{}
	for _, kind := range experiments.Kinds {
		c := plots.Chart{Series: []plots.Series{{Name: kind + " 8"}}}
		ColorByModel(&c)
		if other, ok := seen[c.Series[0].Color]; ok {
			t.Errorf("kinds %s and %s share the colour %s", other, kind, c.Series[0].Color)
		}
		seen[c.Series[0].Color] = kind
	}
	// The linear recurrences' colours are far from every other kind's, as the palette's doc
	// says: they are charted beside the uRNN and the LSTMs.
	for _, kind := range []string{"lru", "s4d", "lru-deep", "s4d-deep"} {
		k := slices.Index(experiments.Kinds, kind)
		for j, b := range modelColors {
			if d := plots.DeltaE(modelColors[k], b); j != k && d < 27 {
				t.Errorf("%s's colour %s is %.1f from %s's %s (plots.DeltaE), want at least 27", kind, modelColors[k], d, experiments.Kinds[j], b)
			}
		}
	}
	// Variants of a kind leave the other kinds in the chart their own colours: the uRNN keeps
	// its colour beside three deep LRUs listed before it.
	v := plots.Chart{Series: []plots.Series{{Name: "lru-deep 64"}, {Name: "lru-deep 64 no γ"}, {Name: "lru-deep 64 default ring"}, {Name: "urnn 128"}, {Name: "lstm-peephole 40"}}}
	ColorByModel(&v)
	for i, kind := range []string{"lru-deep", "", "", "urnn", "lstm-peephole"} {
		if want := modelColors[max(0, slices.Index(experiments.Kinds, kind))]; kind != "" && v.Series[i].Color != want {
			t.Errorf("%s is %s beside the LRU's variants, want its own %s", v.Series[i].Name, v.Series[i].Color, want)
		}
	}
	for i, a := range v.Series {
		for _, b := range v.Series[i+1:] {
			if d := plots.DeltaE(a.Color, b.Color); d < minColorDistance {
				t.Errorf("series %q %s and %q %s are %.1f apart, want at least %d", a.Name, a.Color, b.Name, b.Color, d, minColorDistance)
			}
		}
	}
	// Series of one kind take colours apart from the others in the chart: the uRNN's
	// neighbours in the palette are skipped when they are too near a colour already taken.
	c := plots.Chart{Series: []plots.Series{{Name: "baseline", Dashed: true, Color: "#555555"}}}
	for range 6 {
		c.Series = append(c.Series, plots.Series{Name: "urnn 128"})
	}
	ColorByModel(&c)
	if c.Series[1].Color != modelColors[0] {
		t.Errorf("the first uRNN is %s, want its own %s", c.Series[1].Color, modelColors[0])
	}
	for i, a := range c.Series {
		for _, b := range c.Series[i+1:] {
			if d := plots.DeltaE(a.Color, b.Color); d < minColorDistance {
				t.Errorf("series %q %s and %q %s are %.1f apart, want at least %d", a.Name, a.Color, b.Name, b.Color, d, minColorDistance)
			}
		}
	}
}

// TestChartPlateau: a chart of variable-length copy runs draws the timing plateau S·ln K/(T + 2S)
// dashed beside the baseline, across the runs' steps; a chart of another task does not.
func TestChartPlateau(t *testing.T) {
	root := t.TempDir()
	write := func(name, task string) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		meta := fmt.Sprintf(`{"Preset": {"Model": {"Kind": "lstm", "Hidden": 4}, "Task": {"Kind": %q, "T": 30}}, "Task": "x", "Baseline": 0.5}`, task)
		if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
		log := []train.Record{{Step: 10, Loss: 1, EvalLoss: 0.6, EvalAccuracy: math.NaN(), Penalty: math.NaN()},
			{Step: 20, Loss: 1, EvalLoss: 0.4, EvalAccuracy: math.NaN(), Penalty: math.NaN()}}
		if err := WriteLog(filepath.Join(dir, LogFile), log); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	c, err := Chart([]string{write("varcopy-lstm", "varcopy")}, HeldOutLoss)
	if err != nil {
		t.Fatal(err)
	}
	want := 10 * math.Log(8) / (30 + 20)
	var plateau *plots.Series
	for i := range c.Series {
		if c.Series[i].Name == "timing plateau" {
			plateau = &c.Series[i]
		}
	}
	switch {
	case plateau == nil:
		t.Fatalf("no timing plateau among %d series", len(c.Series))
	case !plateau.Dashed || math.Abs(plateau.Y[0]-want) > 1e-12 || plateau.Y[1] != plateau.Y[0] || plateau.X[1] != 20:
		t.Errorf("plateau %+v, want dashed at %g from 0 to step 20", *plateau, want)
	}
	if !strings.Contains(c.SVG(), ">timing plateau<") {
		t.Error("the plateau is not named in the legend")
	}
	if c.DataPoints() != 2 {
		t.Errorf("DataPoints = %d, want 2: the plateau is a reference line", c.DataPoints())
	}
	c, err = Chart([]string{write("copy-lstm", "copy")}, HeldOutLoss)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Series {
		if s.Name == "timing plateau" {
			t.Error("a copy chart draws a timing plateau")
		}
	}
	if got := Plateau(tasks.Pool{Task: tasks.VariableCopy{T: 30}, N: 5, Seed: 1}); math.Abs(got-want) > 1e-12 {
		t.Errorf("Plateau of a pooled variable-length copy = %g, want %g", got, want)
	}
	if got := Plateau(tasks.Adding{T: 30}); !math.IsNaN(got) {
		t.Errorf("Plateau of adding = %g, want NaN", got)
	}
}

// TestPenaltyChart: the Penalty curve draws the logged orthogonality penalty at the evaluation
// steps only, on the y axis it names, without the loss's baseline; a run without the penalty
// is not drawn, and runs none of which has it are an error that says so.
func TestPenaltyChart(t *testing.T) {
	root := t.TempDir()
	write := func(name string, penalty float64) string {
		dir := filepath.Join(root, name)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, MetaFile), []byte(`{"Preset": {"Model": {"Kind": "lt-ornn", "Hidden": 4, "Pooling": true}}, "Task": "Adding(T=5)", "Baseline": 0.167}`), 0o644)
		log := []train.Record{
			{Step: 1, Loss: 1, EvalLoss: math.NaN(), Penalty: penalty},
			{Step: 2, Loss: 1, EvalLoss: 0.5, Penalty: 2 * penalty},
			{Step: 3, Loss: 1, EvalLoss: math.NaN(), Penalty: 3 * penalty},
			{Step: 4, Loss: 1, EvalLoss: 0.4, Penalty: 4 * penalty},
		}
		for i := range log {
			log[i].EvalAccuracy = math.NaN()
		}
		if err := WriteLog(filepath.Join(dir, LogFile), log); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	with, without := write("pool", 0.01), write("plain", math.NaN())
	c, err := Chart([]string{without, with}, Penalty)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Series) != 1 || c.YLabel != "orthogonality penalty" {
		t.Fatalf("penalty chart: %d series (want 1: the run with the penalty, no baseline), y axis %q", len(c.Series), c.YLabel)
	}
	if s := c.Series[0]; !slices.Equal(s.X, []float64{2, 4}) || !slices.Equal(s.Y, []float64{0.02, 0.04}) {
		t.Errorf("penalty series %v, %v; want the penalty at the evaluation steps 2 and 4: 0.02, 0.04", s.X, s.Y)
	}
	if _, err := Chart([]string{without}, Penalty); !errors.Is(err, ErrNoLog) || !strings.Contains(err.Error(), "orthogonality penalty") {
		t.Errorf("penalty chart of a run without it: %v, want ErrNoLog naming the penalty", err)
	}
	if c, err := Chart([]string{with}, HeldOutLoss); err != nil || len(c.Series) != 2 || !slices.Equal(c.Series[0].Y, []float64{0.5, 0.4}) {
		t.Errorf("held-out chart of the same run: %v, %+v; want the held-out losses 0.5, 0.4 and the baseline", err, c.Series)
	}
}

// TestSummaryAboveBaselineUnscored: a single run not evaluated yet has no final loss, so its
// count of seeds above the baseline is "–", not "0 of 1".
func TestSummaryAboveBaselineUnscored(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, MetaFile), []byte(`{"Preset": {"Model": {"Kind": "tanh", "Hidden": 4}}, "Task": "Adding(T=5)", "Baseline": 0.167}`), 0o644)
	if err := WriteLog(filepath.Join(dir, LogFile), []train.Record{{Step: 1, Loss: 0.5, EvalLoss: math.NaN(), EvalAccuracy: math.NaN(), Penalty: math.NaN()}}); err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := Summary(&table, dir); err != nil {
		t.Fatal(err)
	}
	if want := "| NaN | – | +Inf | – | 0.1670 |"; !strings.Contains(table.String(), want) {
		t.Errorf("summary of a run not evaluated:\n%s\nwant it to contain %q", table.String(), want)
	}
}
