package main

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/plots"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// cli runs the command and returns its exit code and output.
func cli(args ...string) (int, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String() + errOut.String()
}

func TestList(t *testing.T) {
	code, out := cli("list")
	if code != 0 || !strings.Contains(out, "arjovsky/copy-T100/urnn-128") || !strings.Contains(out, "henaff/varcopy-T100/lstm-80") ||
		strings.Contains(out, "T=0") || !strings.Contains(out, "mnist (784 pixels)") {
		t.Errorf("list: exit %d, output:\n%s", code, out)
	}
}

// TestTrainHelp checks the usage text: argument names come from backquoted words of the
// flag's description, so prose there must not be backquoted.
func TestTrainHelp(t *testing.T) {
	_, out := cli("train", "-h")
	for _, want := range []string{"-preset name", "-out directory", "-resume"} {
		if !strings.Contains(out, want) {
			t.Errorf("train -h does not show %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "-preset longmemory") {
		t.Errorf("train -h shows a command as the argument of -preset:\n%s", out)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fly"}, 2, `unknown command "fly"`},
		{[]string{"train", "-preset", "nope", "-out", dir}, 1, `no preset "nope"`},
		{[]string{"train", "-model", "urnn", "-hidden", "4", "-task", "copy", "-T", "5"}, 1, "-out DIR is required"},
		{[]string{"train", "-model", "urnn", "-hidden", "-3", "-task", "copy", "-T", "5", "-out", dir}, 1, "Hidden = -3"},
		{[]string{"train", "-model", "urnn", "-hidden", "4", "-task", "copy", "-T", "0", "-out", dir}, 1, "T = 0"},
		{[]string{"train", "-steps", "x"}, 2, "invalid value"},
		{[]string{"train", "-model", "tanh", "-hidden", "4", "-task", "adding", "-T", "5", "-steps", "1", "-out", "/proc/nope"}, 1, "-out: mkdir /proc/nope"},
		{[]string{"plot", filepath.Join(dir, "missing")}, 1, "not a run directory"},
		{[]string{"eval", filepath.Join(dir, "missing")}, 1, "not a run directory"},
		{[]string{"eval", "-n", "0", dir}, 1, "-n = 0"},
		{[]string{"summary", filepath.Join(dir, "missing")}, 1, "not a run directory"},
	} {
		code, out := cli(tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, output %q; want exit %d mentioning %q", tc.args, code, out, tc.code, tc.want)
		}
	}
}

// TestTrainResumePlot trains a tiny run in two parts (-resume) and in one, checks that the
// logs agree (same seed ⇒ same losses), that an existing run is not overwritten without
// -resume, and plots both runs.
func TestTrainResumePlot(t *testing.T) {
	base := []string{"train", "-model", "tanh", "-hidden", "6", "-task", "copy", "-T", "5", "-batch", "4",
		"-eval-every", "2", "-checkpoint-every", "2", "-chunk", "4", "-seed", "3", "-quiet"}
	split, whole := t.TempDir(), t.TempDir()
	if code, out := cli(append(base, "-steps", "4", "-out", split)...); code != 0 {
		t.Fatalf("first part: exit %d\n%s", code, out)
	}
	before, _ := os.ReadFile(filepath.Join(split, runs.LogFile))
	if code, out := cli(append(base, "-steps", "8", "-out", split)...); code != 1 || !strings.Contains(out, "-resume") {
		t.Errorf("training into an existing run without -resume: exit %d, %q", code, out)
	}
	if after, _ := os.ReadFile(filepath.Join(split, runs.LogFile)); !bytes.Equal(before, after) {
		t.Error("the refused run changed its log")
	}
	// -resume takes the run's settings from its run.json: only the new step count is given.
	if code, out := cli("train", "-out", split, "-resume", "-steps", "8", "-quiet"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	if code, out := cli("train", "-out", split, "-resume", "-preset", "arjovsky/copy-T100/urnn-128"); code != 1 ||
		!strings.Contains(out, `holds a run of preset "custom", not "arjovsky/copy-T100/urnn-128"`) {
		t.Errorf("resume with another preset: exit %d, %q", code, out)
	}
	if code, out := cli(append(base, "-steps", "8", "-out", whole)...); code != 0 {
		t.Fatalf("whole: exit %d\n%s", code, out)
	}
	a := readCols(t, filepath.Join(split, runs.LogFile))
	b := readCols(t, filepath.Join(whole, runs.LogFile))
	if len(a) != 9 || len(b) != 9 {
		t.Fatalf("logs have %d and %d lines, want 9 (header + 8 steps)", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("line %d: resumed %q, uninterrupted %q", i, a[i], b[i])
		}
	}
	// eval scores the final checkpoints: the same weights give the same test loss, and the
	// loss is the mean over batches of different sizes (7 = 3 + 3 + 1) of the same sequences.
	_, evalSplit := cli("eval", "-n", "7", "-batch", "3", split)
	_, evalWhole := cli("eval", "-n", "7", "-batch", "3", whole)
	_, evalOne := cli("eval", "-n", "7", "-batch", "7", whole)
	if !strings.Contains(evalSplit, "at step 8, 7 fresh sequences: loss ") || evalSplit != evalWhole {
		t.Errorf("eval: resumed run %q, uninterrupted %q", evalSplit, evalWhole)
	}
	if evalOne != evalWhole {
		t.Errorf("eval in batches of 3: %q, in one batch: %q", evalWhole, evalOne)
	}
	// summary: one row per run, with the final held-out loss (the median of the log's last
	// runs.EvalWindow evaluations); the two runs differ only in the run name and the wall time.
	_, table := cli("summary", split, whole)
	rows := strings.Split(strings.TrimSpace(table), "\n")
	var evals []float64
	for _, row := range a[1:] {
		if v, err := strconv.ParseFloat(strings.Split(row, ",")[3], 64); err == nil && !math.IsNaN(v) {
			evals = append(evals, v)
		}
	}
	lastEval := runs.Median(evals[max(0, len(evals)-runs.EvalWindow):])
	wall := regexp.MustCompile(`^\| [^|]* \|(.*)\| [0-9]+ s \|(.*)$`)
	if len(rows) != 4 || !wall.MatchString(rows[2]) || wall.ReplaceAllString(rows[2], "$1$2") != wall.ReplaceAllString(rows[3], "$1$2") ||
		!strings.Contains(rows[2], "| tanh 6 | Copy(T=5") || !strings.Contains(rows[2], "| 8 | ") ||
		!strings.Contains(rows[2], fmt.Sprintf("| %.4f |", lastEval)) {
		t.Errorf("summary: want a header and two rows with the final held-out loss %.4f, got\n%s", lastEval, table)
	}
	dir := t.TempDir()
	svg := filepath.Join(dir, "fig.svg")
	if code, out := cli("plot", "-o", svg, split, whole); code != 0 {
		t.Fatalf("plot: exit %d\n%s", code, out)
	}
	fig, _ := os.ReadFile(svg)
	if !strings.Contains(string(fig), "<svg") || !strings.Contains(string(fig), ">baseline<") || !strings.Contains(string(fig), "stroke-dasharray") {
		t.Errorf("plot: want an SVG with the dashed baseline")
	}
	// Two runs of the same model are labelled by their directories.
	if strings.Count(string(fig), ">"+filepath.Base(split)+"<") != 1 || strings.Count(string(fig), ">"+filepath.Base(whole)+"<") != 1 {
		t.Errorf("plot: want the legend to name %s and %s", filepath.Base(split), filepath.Base(whole))
	}
	// PNG by extension (720×400 at the plots' PNG scale); other extensions are refused.
	pngFile := filepath.Join(dir, "fig.png")
	if code, out := cli("plot", "-o", pngFile, split, whole); code != 0 {
		t.Fatalf("plot -o fig.png: exit %d\n%s", code, out)
	}
	f, err := os.Open(pngFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width != 720*plots.PNGScale || cfg.Height != 400*plots.PNGScale {
		t.Errorf("plot -o fig.png: %v, %dx%d", err, cfg.Width, cfg.Height)
	}
	if code, out := cli("plot", "-o", filepath.Join(dir, "fig.pdf"), split); code == 0 || !strings.Contains(out, `".pdf"`) {
		t.Errorf("plot -o fig.pdf: exit %d, want an error naming the extension:\n%s", code, out)
	}
	// -ymax sets the top of the y axis: its label is the highest tick; a bad value is refused.
	capped := filepath.Join(dir, "capped.svg")
	if code, out := cli("plot", "-ymax", "100", "-o", capped, split); code != 0 {
		t.Fatalf("plot -ymax 100: exit %d\n%s", code, out)
	}
	if fig, _ := os.ReadFile(capped); !strings.Contains(string(fig), ">100<") || strings.Contains(string(fig), ">120<") {
		t.Errorf("plot -ymax 100: want the y axis to end at the tick 100")
	}
	if code, out := cli("plot", "-ymax", "-1", "-o", capped, split); code != 1 || !strings.Contains(out, "-ymax -1") {
		t.Errorf("plot -ymax -1: exit %d, want an error naming the value:\n%s", code, out)
	}
	// -penalty draws the orthogonality penalty, which these runs do not log: an error that says so;
	// with -train as well, an error naming both.
	if code, out := cli("plot", "-penalty", "-o", capped, split); code != 1 || !strings.Contains(out, "orthogonality penalty") {
		t.Errorf("plot -penalty of runs without it: exit %d, want an error naming the penalty:\n%s", code, out)
	}
	if code, out := cli("plot", "-penalty", "-train", "-o", capped, split); code != 1 || !strings.Contains(out, "-train and -penalty") {
		t.Errorf("plot -penalty -train: exit %d, want an error naming both:\n%s", code, out)
	}
}

// readCols returns the log at path as CSV lines (runs.WriteCSV) without the wall-time column.
func readCols(t *testing.T, path string) []string {
	log, err := runs.ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	runs.WriteCSV(&b, log)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		out = append(out, l[:strings.LastIndex(l, ",")])
	}
	return out
}

// TestHost: `longmemory host` prints the machine as run.json records it.
func TestHost(t *testing.T) {
	code, out := cli("host")
	if code != 0 || strings.TrimSpace(out) != runs.Host() || !strings.Contains(out, "CPUs") {
		t.Errorf("host: exit %d, %q; want %q", code, out, runs.Host())
	}
}
