package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/sweep"
)

// fixture is a docs directory and its runs, made once by TestMain: runs a, b and esn trained
// a few steps by the project's sweep (tiny models, 2 seeds), esn's readouts fitted in closed
// form, a's replicas scored on a test split (test.json); run starting has a replica with a run.json and no log yet; run
// later is in runs.tsv but not trained, and run absent in figures.tsv only.
var fixture struct {
	docs, runs string
}

const runsTSV = "# the fixture's runs\nname\tpreset\toverrides\tseeds\tsteps\tthen\n" +
	"a\tarjovsky/copy-T100/tanh-80\t-hidden 4 -T 5 -batch 4 -eval-every 1 -checkpoint-every 6\t2\t6\teval\n" +
	"b\tarjovsky/copy-T100/tanh-80\t-hidden 6 -T 5 -batch 4 -eval-every 1 -checkpoint-every 6 -lr 1e-2\t2\t6\t-\n" +
	"esn\tsuccessors/copy-T500/esn-128\t-hidden 4 -T 5 -batch 4 -eval-every 1 -checkpoint-every 6\t2\t6\tfit -sequences 20 -beta 1\n" +
	"later\tarjovsky/copy-T100/tanh-80\t-hidden 4 -T 5\t2\t3000\teval\n" +
	"pen\thenaff/copy-T500/lt-ornn-80-pool\t-hidden 4 -T 5 -batch 4 -eval-every 1 -checkpoint-every 6\t2\t6\t-\n"

const figuresTSV = "# the fixture's figures\n" + "report\tname\ttitle\tymax\truns\n" +
	"VERDICTS.md\tfig-ab\tcopy, a against b\t-\ta,b\n" +
	"VERDICTS.md\tfig-absent\tnever drawn\t-\ta,absent\n" +
	"VERDICTS.md\tfig-starting\tnothing to draw yet\t-\tstarting\n" +
	"SUCCESSORS.md\tsucc\tcopy: after the uRNN\t2.5\tb, esn\n" +
	"ABLATIONS.md\tablation-b\tD0 the learning rate, tanh copy T = 5\t-\ta,b\n" +
	"ABLATIONS.md\tablation-absent\tD1 an arm not run, tanh copy T = 5\t-\ta,absent\n" +
	"ABLATIONS.md\tablation-pen\tD2 the orthogonality penalty, LT-ORNN copy T = 5\t-\ta,pen\n" +
	"VERDICTS.md\tfig-a-late\ta, and a run with nothing to draw yet\t-\ta,starting\n"

const resultsMD = "# Results\n\nBefore.\n\n" +
	"<!-- verdicts: written by longmemory reports; do not edit by hand -->\nthe old verdicts\n<!-- end of verdicts -->\n\n" +
	"Between.\n\n" +
	"<!-- successors: written by longmemory reports -->\nthe old successors\nmore of it\n<!-- end of successors -->\n\nAfter.\n"

var docsFiles = map[string]string{
	ClaimsFile:     "c1\tPaper §1\ta solves copy\tsolves\ta\t-\t-\t6\tbaseline\n",
	VariantsFile:   "v1\tPaper §1\tb solves copy\tsolves\tb\t-\t-\t6\tbaseline\n",
	SuccessorsFile: "s1\tQuestion\tthe ESN solves copy\tsolves\tesn\t-\t-\t6\tbaseline\n",
	FiguresFile:    figuresTSV,
	RunsFile:       runsTSV,
	Results:        resultsMD,
}

func TestMain(m *testing.M) {
	root, err := os.MkdirTemp("", "reports-test")
	if err != nil {
		panic(err)
	}
	err = makeFixture(root)
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, "making the fixture:", err)
	}
	os.RemoveAll(root)
	os.Exit(code)
}

func makeFixture(root string) error {
	fixture.docs, fixture.runs = filepath.Join(root, "docs"), filepath.Join(root, "runs")
	if err := writeDocs(fixture.docs, docsFiles); err != nil {
		return err
	}
	rs, err := sweep.Parse(strings.NewReader(runsTSV), RunsFile)
	if err != nil {
		return err
	}
	rs = slices.DeleteFunc(rs, func(r sweep.Run) bool { return r.Name == "later" })
	b := backend.MustNew()
	if err := sweep.Train(context.Background(), fixture.runs, rs, sweep.Options{Train: runs.Options{Backend: b}}); err != nil {
		return err
	}
	for _, rep := range runs.Replicas(filepath.Join(fixture.runs, "esn")) {
		if _, err := runs.FitRidge(b, rep, 20, 1); err != nil {
			return err
		}
	}
	starting := filepath.Join(fixture.runs, "starting", "seed-0")
	if err := os.MkdirAll(starting, 0o755); err != nil {
		return err
	}
	meta, err := os.ReadFile(filepath.Join(fixture.runs, "a", "seed-0", runs.MetaFile))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(starting, runs.MetaFile), meta, 0o644); err != nil {
		return err
	}
	for i, rep := range runs.Replicas(filepath.Join(fixture.runs, "a")) {
		acc := 0.5 + 0.024*float64(i)
		t := runs.Test{Step: 6, Examples: 10, Loss: 1 + 0.2*float64(i), Accuracy: &acc, Baseline: 2.3}
		if err := runs.WriteTest(rep, t); err != nil {
			return err
		}
	}
	return nil
}

func writeDocs(dir string, files map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// write runs Write on the fixture into a new directory and returns it and the log.
func write(t *testing.T, docs string) (string, string, error) {
	t.Helper()
	out := t.TempDir()
	var log bytes.Buffer
	err := Write(Options{Runs: fixture.runs, Docs: docs, Out: out, Log: &log})
	return out, log.String(), err
}

// TestWriteRemovesStaleFigures: a figure left out (a run missing, or none drawable yet)
// leaves no file of an earlier drawing behind; the figures drawn are written over.
func TestWriteRemovesStaleFigures(t *testing.T) {
	out := t.TempDir()
	figures := filepath.Join(out, FiguresDir)
	if err := os.MkdirAll(figures, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fig-absent", "fig-starting", "fig-ab"} {
		if err := os.WriteFile(filepath.Join(figures, name+".png"), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	if err := Write(Options{Runs: fixture.runs, Docs: fixture.docs, Out: out, Log: &log}); err != nil {
		t.Fatalf("Write: %v\n%s", err, log.String())
	}
	for _, name := range []string{"fig-absent", "fig-starting"} {
		path := filepath.Join(figures, name+".png")
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left out, but its old file is still there (%v)", name, err)
		}
		if w := "removed " + path + ": an earlier drawing of a figure left out now"; !strings.Contains(log.String(), w) {
			t.Errorf("the log lacks %q:\n%s", w, log.String())
		}
	}
	if b, err := os.ReadFile(filepath.Join(figures, "fig-ab.png")); err != nil || string(b) == "old" {
		t.Errorf("fig-ab.png is drawn, but not written over: %q, %v", b, err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWrite: every report is written, with its verdicts, tables and the links of the figures
// drawn; a figure with a run missing, or with no log to draw yet, is left out (no file, no
// link, a line in the log); the docs directory is only read.
func TestWrite(t *testing.T) {
	out, log, err := write(t, fixture.docs)
	if err != nil {
		t.Fatalf("Write: %v\n%s", err, log)
	}
	want := map[string][]string{
		Verdicts: {
			"# Verdicts: the papers' claims against the seeds of their runs",
			"Written by `longmemory reports` from the run directories under `" + fixture.runs + "`",
			"The rules (pkg/claims):", "| c1 Paper §1: \"a solves copy\" | solves, 6 steps |",
			"Of 1 claims:",
			"- a: 2 of 2 seeds scored at step 6 on 10 test examples: loss median 1.1000 [1.0000–1.2000], accuracy median 51.20% [50.00–52.40%]\n",
			"- later: not yet (scored once all its replicas reach 3000 steps)\n",
			"| a (2 seeds) | tanh 4 |", "| b (2 seeds) | tanh 6 |", "| esn (2 seeds) | esn 4 |",
			"| starting (1 seeds, no held-out loss yet) | tanh 4 |",
			"## Figures (median and min–max band over the seeds; the baseline dashed)\n\n![fig-ab](figures/fig-ab.png)\n",
			"\n![fig-a-late](figures/fig-a-late.png)\n\nNot drawn: starting: 0 steps, 0 held-out evaluation(s), too few to draw.\n",
		},
		Successors: {
			"Written by `longmemory reports` from the run directories under `" + fixture.runs + "`",
			"| s1 Question", "## Runs", "| b (2 seeds) | tanh 6 |", "| esn (2 seeds) | esn 4 |",
			"## The ESN's readout in closed form", "| esn | 2 of 2 | 20, 1 |", "The fits ran on ",
			"![succ](figures/succ.png)\n",
		},
		Ablations: {
			"Written by `longmemory reports` from the run directories under `" + fixture.runs + "`",
			"## Setting variants of the papers' claims", "| v1 Paper §1",
			"## D0 the learning rate, tanh copy T = 5\n\n| run |", "![ablation-b](figures/ablation-b.png)\n",
			"## D1 an arm not run, tanh copy T = 5\n\n| run |", "\nNot run yet: absent.\n",
			"## D2 the orthogonality penalty, LT-ORNN copy T = 5\n\n| run |", "![ablation-pen](figures/ablation-pen.png)\n",
			"How far each arm's V is from orthogonal", "![ablation-pen-penalty](figures/ablation-pen-penalty.png)\n",
		},
		Results: {
			"# Results\n\nBefore.\n\n<!-- verdicts: written by longmemory reports; do not edit by hand -->\n| claim |",
			"Of 1 claims:", "<!-- end of verdicts -->\n\nBetween.\n\n<!-- successors: written by longmemory reports -->\n| claim |",
			"| s1 Question", "<!-- end of successors -->\n\nAfter.\n",
		},
	}
	for name, wants := range want {
		text := read(t, filepath.Join(out, name))
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, text)
			}
		}
		if strings.Contains(text, "absent.png") || strings.Contains(text, "starting.png") || strings.Contains(text, "the old") {
			t.Errorf("%s links a figure left out, or keeps the old tables:\n%s", name, text)
		}
	}
	// Only the ablation with an arm that logs the penalty gets its penalty figure.
	if a := read(t, filepath.Join(out, Ablations)); strings.Contains(a, "ablation-b-penalty") {
		t.Errorf("%s links a penalty figure of arms trained without the penalty:\n%s", Ablations, a)
	}
	if _, err := os.Stat(filepath.Join(out, FiguresDir, "ablation-pen-penalty.png")); err != nil {
		t.Errorf("the penalty figure: %v", err)
	}
	if v := read(t, filepath.Join(out, Verdicts)); strings.Contains(v, "| s1") || strings.Contains(v, "| v1") {
		t.Errorf("%s holds the successors' or the variants' verdicts:\n%s", Verdicts, v)
	}
	var js struct {
		Claims, Variants []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(read(t, filepath.Join(out, JSONFile))), &js); err != nil || len(js.Claims) != 1 || js.Claims[0].ID != "c1" || len(js.Variants) != 1 || js.Variants[0].ID != "v1" {
		t.Errorf("%s: %+v, %v", JSONFile, js, err)
	}
	figs, _ := filepath.Glob(filepath.Join(out, FiguresDir, "*"))
	for i := range figs {
		figs[i] = filepath.Base(figs[i])
	}
	if w := []string{"ablation-b.png", "ablation-pen-penalty.png", "ablation-pen.png", "fig-a-late.png", "fig-ab.png", "succ.png"}; !slices.Equal(figs, w) {
		t.Errorf("figures %v, want %v", figs, w)
	}
	for _, w := range []string{
		fmt.Sprintf("figure fig-absent left out: %s does not exist yet", filepath.Join(fixture.runs, "absent")),
		fmt.Sprintf("figure ablation-absent left out: %s does not exist yet", filepath.Join(fixture.runs, "absent")),
		"figure fig-starting left out: none of its runs can be drawn yet (starting: 0 steps, 0 held-out evaluation(s), too few to draw)",
	} {
		if !strings.Contains(log, w) {
			t.Errorf("the log lacks %q:\n%s", w, log)
		}
	}
	for name, text := range docsFiles {
		if got := read(t, filepath.Join(fixture.docs, name)); got != text {
			t.Errorf("Write changed %s in the docs directory", name)
		}
	}
	if entries, _ := os.ReadDir(fixture.docs); len(entries) != len(docsFiles) {
		t.Errorf("Write wrote into the docs directory: %v", entries)
	}
}

// TestWriteDeterministic: two runs of Write give the same bytes, figures included.
func TestWriteDeterministic(t *testing.T) {
	one, _, err := write(t, fixture.docs)
	if err != nil {
		t.Fatal(err)
	}
	two, _, err := write(t, fixture.docs)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.WalkDir(one, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(one, path)
		if a, b := read(t, path), read(t, filepath.Join(two, rel)); a != b {
			t.Errorf("%s differs from one run to the next", rel)
		}
		n++
		return nil
	})
	if n != 11 { // 5 reports, 6 figures
		t.Errorf("%d files written, want 11", n)
	}
}

// TestWriteRefusesResultsWithoutMarkers: a RESULTS.md that lacks a marker is an error naming
// the file and the marker, before anything is written.
func TestWriteRefusesResultsWithoutMarkers(t *testing.T) {
	for _, tc := range []struct{ results, want string }{
		{strings.Replace(resultsMD, "<!-- successors:", "<!-- successor:", 1), `no line starting "<!-- successors:"`},
		{strings.Replace(resultsMD, "<!-- end of verdicts -->", "", 1), `no line starting "<!-- end of verdicts -->" after line 5`},
	} {
		docs := filepath.Join(t.TempDir(), "docs")
		files := maps.Clone(docsFiles)
		files[Results] = tc.results
		if err := writeDocs(docs, files); err != nil {
			t.Fatal(err)
		}
		out, _, err := write(t, docs)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(docs, Results)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Write = %v, want an error naming %s and containing %q", err, filepath.Join(docs, Results), tc.want)
		}
		if written, _ := os.ReadDir(out); len(written) > 0 {
			t.Errorf("Write refused RESULTS.md but wrote %v", written)
		}
	}
}

func TestSplice(t *testing.T) {
	text := "a\n<!-- t: by me -->\nold 1\nold 2\n<!-- end of t -->\nb\n<!-- end of t -->\n"
	for _, tc := range []struct{ table, want string }{
		{"new 1\nnew 2\n", "a\n<!-- t: by me -->\nnew 1\nnew 2\n<!-- end of t -->\nb\n<!-- end of t -->\n"},
		{"no newline", "a\n<!-- t: by me -->\nno newline\n<!-- end of t -->\nb\n<!-- end of t -->\n"},
		{"", "a\n<!-- t: by me -->\n<!-- end of t -->\nb\n<!-- end of t -->\n"},
	} {
		got, err := Splice([]byte(text), "t", []byte(tc.table))
		if err != nil || string(got) != tc.want {
			t.Errorf("Splice(%q) = %q, %v; want %q", tc.table, got, err, tc.want)
		}
	}
	// The text around the markers is kept byte for byte, a last line without a newline too.
	if got, err := Splice([]byte("x\r\n<!-- t:\n\n<!-- end of t --> trailing\nno newline"), "t", []byte("T\n")); err != nil || string(got) != "x\r\n<!-- t:\nT\n<!-- end of t --> trailing\nno newline" {
		t.Errorf("Splice = %q, %v", got, err)
	}
	for _, tc := range []struct{ text, want string }{
		{"a\n<!-- end of t -->\n", `no line starting "<!-- t:"`},
		{"a\n<!-- end of t -->\n<!-- t: x\nb\n", `no line starting "<!-- end of t -->" after line 3 ("<!-- t: x")`},
		{"<!-- t:\n<!-- end of t -->\n<!-- t:\n<!-- end of t -->\n", `a second line starting "<!-- t:" (line 3; the first is line 1)`},
		{"<!-- tt:\n<!-- end of tt -->\n", `no line starting "<!-- t:"`},
	} {
		if _, err := Splice([]byte(tc.text), "t", []byte("T\n")); err == nil || err.Error() != tc.want {
			t.Errorf("Splice(%q) = %v, want the error %q", tc.text, err, tc.want)
		}
	}
}

func TestParseFigures(t *testing.T) {
	figs, err := ParseFigures(strings.NewReader(figuresTSV), FiguresFile)
	if err != nil || len(figs) != 8 {
		t.Fatalf("ParseFigures = %v, %v", figs, err)
	}
	if f := figs[3]; f.Report != Successors || f.Name != "succ" || f.Title != "copy: after the uRNN" || f.YMax == nil || *f.YMax != 2.5 ||
		!slices.Equal(f.Runs, []string{"b", "esn"}) || f.Line != 6 {
		t.Errorf("figure succ: %+v", f)
	}
	if f := figs[0]; f.YMax != nil {
		t.Errorf("figure fig-ab, ymax -: YMax = %v, want nil (automatic)", *f.YMax)
	}
	const header = "report\tname\ttitle\tymax\truns\n"
	for _, tc := range []struct{ file, want string }{
		{"", "figures.tsv: no header line"},
		{"report\tname\ttitle\truns\n", "figures.tsv:1: header"},
		{header + "VERDICTS.md\tx\ty\ta\n", "figures.tsv:2: 4 tab-separated columns, want 5"},
		{header + "RESULTS.md\tx\ty\t-\ta\n", `figures.tsv:2: report "RESULTS.md"`},
		{header + "VERDICTS.md\tdir/x\ty\t-\ta\n", `figures.tsv:2: name "dir/x"`},
		{header + "VERDICTS.md\tx\ty\t-\t \n", "figures.tsv:2: figure x names no run"},
		{header + "VERDICTS.md\tx\ty\t-\ta\nABLATIONS.md\tx\tz\t-\tb\n", "figures.tsv:3: figure x is already on line 2"},
		{header + "VERDICTS.md\tx\ty\t0\ta\n", `figures.tsv:2: figure x: ymax "0", want a positive number`},
		{header + "VERDICTS.md\tx\ty\tten\ta\n", `figures.tsv:2: figure x: ymax "ten", want a positive number`},
		{header + "VERDICTS.md\tx\ty\t+Inf\ta\n", `figures.tsv:2: figure x: ymax "+Inf", want a positive number`},
	} {
		if _, err := ParseFigures(strings.NewReader(tc.file), FiguresFile); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFigures(%q) = %v, want an error containing %q", tc.file, err, tc.want)
		}
	}
}

// TestDocsFigures: the project's figures file parses, and holds every figure the reports in
// docs/ link, for the report that links it (an ablation's penalty figure, NAME-penalty, by its
// ablation NAME).
func TestDocsFigures(t *testing.T) {
	docs := filepath.Join("..", "..", "docs")
	figs, err := ReadFigures(filepath.Join(docs, FiguresFile))
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(` + FiguresDir + `/([^)]+)\.png\)`)
	for _, report := range []string{Verdicts, Successors, Ablations} {
		text, err := os.ReadFile(filepath.Join(docs, report))
		if err != nil {
			t.Fatal(err)
		}
		links := link.FindAllStringSubmatch(string(text), -1)
		if len(links) == 0 {
			t.Errorf("%s links no figure", report)
		}
		for _, m := range links {
			name := m[1]
			if report == Ablations {
				name = strings.TrimSuffix(name, PenaltyFigure)
			}
			if !slices.ContainsFunc(figs, func(f Figure) bool { return f.Name == name && f.Report == report }) {
				t.Errorf("%s links figure %s, which %s does not list for it", report, m[1], FiguresFile)
			}
		}
	}
}
