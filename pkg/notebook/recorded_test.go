package notebook

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/plots"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// TestShowRecorded: the recorded runs are read from $LONGMEMORY_ROOT/docs/runs and
// summarised (outside a notebook, printed); a run not recorded, or with too few held-out
// evaluations to draw, is named; without LONGMEMORY_ROOT the error says so.
func TestShowRecorded(t *testing.T) {
	t.Setenv(QuickEnv, "")
	root := t.TempDir()
	t.Setenv("LONGMEMORY_ROOT", root)
	p := tinyPreset("test/recorded")
	p.Train.Steps = 6
	run, err := Train(p)
	if err != nil {
		t.Fatal(err)
	}
	stub, err := Train(tinyPreset("test/stub")) // 2 evaluations: too few to draw
	if err != nil {
		t.Fatal(err)
	}
	recorded := filepath.Join(root, "docs", "runs")
	if err := os.MkdirAll(recorded, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(run.Dir, filepath.Join(recorded, "rec")); err != nil {
		t.Fatal(err)
	}
	if err := runs.WriteTest(filepath.Join(recorded, "rec"), runs.Test{Step: 6, Examples: 50, Loss: 0.125}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(stub.Dir, filepath.Join(recorded, "stub")); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	err = ShowRecorded("recorded", "rec", "absent", "stub")
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| rec | tanh 4 | Adding(T=5) | 6 |", "absent: not recorded yet", "stub: 2 steps, 2 held-out evaluation(s), too few to draw",
		"rec on the test split: 1 of 1 seeds scored at step 6 on 50 test examples: loss median 0.1250 [0.1250–0.1250]\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("ShowRecorded printed:\n%s\nwant it to contain %q", out, want)
		}
	}
	// ShowRecordedWith hands the chart to adjust before showing it: a y range, say.
	var adjusted []string
	if err := ShowRecordedWith("recorded", func(c *plots.Chart) {
		for _, s := range c.Series {
			adjusted = append(adjusted, s.Name)
		}
	}, "rec", "stub"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(adjusted, "|"); got != "tanh 4|baseline" {
		t.Errorf("adjust saw the series %q, want %q", got, "tanh 4|baseline")
	}
	// ShowRecordedPenalty: a run trained with it is drawn, a run without it is
	// left out, a run not recorded is named; only runs none of which has it are an error.
	p = tinyPreset("test/penalty")
	p.Train.Steps, p.Train.Orthogonality = 6, train.Orthogonality{Points: 3, LR: 1e-3}
	pen, err := Train(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(pen.Dir, filepath.Join(recorded, "pen")); err != nil {
		t.Fatal(err)
	}
	r, w, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout = w
	err = ShowRecordedPenalty("drift", "rec", "pen", "absent")
	os.Stdout = stdout
	w.Close()
	out, _ = io.ReadAll(r)
	if err != nil || !strings.Contains(string(out), "absent: not recorded yet") || !strings.Contains(string(out), "rec: trained without the orthogonality penalty") ||
		strings.Contains(string(out), "pen:") {
		t.Errorf("ShowRecordedPenalty of rec, pen, absent: %v, printed %q; want no error, absent and rec named, pen drawn", err, out)
	}
	if err := ShowRecordedPenalty("drift", "rec"); err == nil || !strings.Contains(err.Error(), "orthogonality penalty") {
		t.Errorf("ShowRecordedPenalty of a run without it: %v, want an error naming the penalty", err)
	}
	t.Setenv("LONGMEMORY_ROOT", "")
	if err := ShowRecorded("recorded", "rec"); err == nil || !strings.Contains(err.Error(), "LONGMEMORY_ROOT is not set") {
		t.Errorf("without LONGMEMORY_ROOT: %v", err)
	}
}
