package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// TestFile is the file in a replica's directory that records its score on its task's test
// split (`longmemory eval -save`, which `longmemory sweep` runs at the horizon for the runs
// whose then column says eval): the papers' test accuracy on pixel MNIST, which the claims
// compare (pkg/claims, rule 6).
const TestFile = "test.json"

// Test is a replica's score on its task's test split, from its checkpoint of Step, as TestFile
// records it. It is on the whole split when Examples = Split > 0.
type Test struct {
	Step     int      // the step of the checkpoint scored
	Examples int      // the test examples scored (pixel MNIST: the first Examples test images)
	Split    int      // the test split's size (pixel MNIST: 10 000); 0 for fresh sequences, a task without one
	Loss     float64  // mean loss over them
	Accuracy *float64 `json:",omitempty"` // for classification tasks
	Baseline float64  // the task's memoryless baseline loss
	Host     string   // the machine (Host)
	Backend  string   // the backend that scored it
}

// WriteTest records t in dir's TestFile, atomically; a loss that is not finite is refused.
func WriteTest(dir string, t Test) error {
	if math.IsNaN(t.Loss) || math.IsInf(t.Loss, 0) {
		return fmt.Errorf("runs: %s: test loss %g at step %d, want a finite loss (the model diverged)", dir, t.Loss, t.Step)
	}
	return writeJSON(filepath.Join(dir, TestFile), t)
}

// ReadTest reads the score recorded in dir's TestFile (an error wrapping os.ErrNotExist when
// the replica has not been scored).
func ReadTest(dir string) (Test, error) {
	var t Test
	err := readJSON(filepath.Join(dir, TestFile), &t)
	return t, err
}

// writeJSON writes v to path as indented JSON, atomically (WriteFileAtomic).
func writeJSON(path string, v any) error {
	return WriteFileAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// readJSON decodes the JSON file at path into v; a missing file's error wraps os.ErrNotExist.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// TestSummary describes in one line the test scores of the replicas of the run in dir (TestFile):
// how many are scored, at which steps, and the median and range of their losses and accuracies;
// "" when none is.
func TestSummary(dir string) (string, error) {
	reps := RunDirs(dir)
	var losses, accs []float64
	var steps, examples []int
	for _, rep := range reps {
		t, err := ReadTest(rep)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		losses = append(losses, t.Loss)
		if t.Accuracy != nil {
			accs = append(accs, *t.Accuracy)
		}
		steps, examples = append(steps, t.Step), append(examples, t.Examples)
	}
	if len(losses) == 0 {
		return "", nil
	}
	span := func(v []int) string {
		if lo, hi := slices.Min(v), slices.Max(v); lo != hi {
			return fmt.Sprintf("%d–%d", lo, hi)
		}
		return fmt.Sprint(v[0])
	}
	text := fmt.Sprintf("%d of %d seeds scored at step %s on %s test examples: loss median %.4f [%.4f–%.4f]",
		len(losses), len(reps), span(steps), span(examples), Median(losses), slices.Min(losses), slices.Max(losses))
	if len(accs) > 0 {
		text += fmt.Sprintf(", accuracy median %.2f%% [%.2f–%.2f%%]", 100*Median(accs), 100*slices.Min(accs), 100*slices.Max(accs))
	}
	return text, nil
}
