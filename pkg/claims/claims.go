package claims

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// The rules' constants (the package doc states the rules).
const (
	// FinalK is how many of a seed's last held-out evaluations its final loss is the median of.
	FinalK = runs.EvalWindow
	// Alpha is the level of the one-sided rank tests of speed, level and accuracy comparisons.
	Alpha = 0.05
	// FasterRatio is how many times the fast side's median steps to the solved line the slow
	// side's must be ("only after a very long time, or not at all"), beside the rank test.
	FasterRatio = 2.0
	// MinMargin is the least relative margin under a line that counts as below it ("well below
	// the baseline").
	MinMargin = 0.10
	// FallingDrop is the share of its loss a seed must lose across the second half of the judged
	// window, on its Theil–Sen trend, to count as still falling.
	FallingDrop = 0.05
)

// Test is what a side of a claim must show.
type Test string

// The tests. Solves, Below, Above, Faster, Lower and MoreAccurate are for the runs a claim says
// succeed; NoSolve and NotBelow for those it says fail. Faster, Lower and MoreAccurate compare
// the two sides, so their fail side has no test of its own.
const (
	Solves       Test = "solves"        // final median under the solved line (rule 4)
	Below        Test = "below"         // final median under (1 − m)·reference (rule 3)
	Above        Test = "above"         // final median over (1 + m)·reference, "blowing up" (rule 3)
	Faster       Test = "faster"        // reaches the solved line sooner than the fail side (rule 5)
	Lower        Test = "lower"         // ends with lower losses than the fail side (rule 6)
	MoreAccurate Test = "more-accurate" // ends with higher accuracies than the fail side (rule 6)
	NoSolve      Test = "no-solve"      // no seed reaches the solved line by the horizon (rule 4)
	NotBelow     Test = "not-below"     // final median not under (1 − m)·reference (rule 3)
	None         Test = "-"             // no runs on this side
)

var (
	learnTests = []Test{Solves, Below, Above, Faster, Lower, MoreAccurate}
	failTests  = []Test{NoSolve, NotBelow, None}
)

// comparative reports whether t compares the two sides.
func (t Test) comparative() bool { return t == Faster || t == Lower || t == MoreAccurate }

// Reference names the line a claim's levels are measured against.
type Reference string

const (
	// Baseline is the task's memoryless baseline (run.json's Baseline).
	Baseline Reference = "baseline"
	// Plateau is the variable-length copy's timing plateau S·ln K/(T + 2S): the loss of a network
	// that knows when to answer but not what (tasks.VariableCopy.RecallBaseline).
	Plateau Reference = "plateau"
)

// Claim is one statement of a paper and the runs that test it: the runs of Learn must pass
// LearnTest, those of Fail FailTest (or lose the comparison of a comparative LearnTest).
type Claim struct {
	ID        string // short and stable: "arjovsky-copy-T200"
	Source    string // paper and section: "Arjovsky et al. 2016 §4.1, Fig. 1"
	Quote     string // the paper's words, verbatim, with the lengths the runs use
	LearnTest Test
	Learn     []string // run names (directories under the runs directory)
	FailTest  Test
	Fail      []string
	Horizon   int     // steps; or 0 with Seconds
	Seconds   float64 // a budget of seconds of training (each run's replicas at once); 0 with Horizon
	Reference Reference
}

// HorizonText writes the claim's horizon: "10000 steps" or "1500 s of training".
func (c Claim) HorizonText() string {
	if c.Seconds > 0 {
		return fmt.Sprintf("%g s of training", c.Seconds)
	}
	return fmt.Sprintf("%d steps", c.Horizon)
}

// Validate names the first field out of range.
func (c Claim) Validate() error {
	switch {
	case c.ID == "" || strings.ContainsAny(c.ID, " \t"):
		return fmt.Errorf("claims: ID %q, want a non-empty name without spaces", c.ID)
	case !slices.Contains(learnTests, c.LearnTest):
		return fmt.Errorf("claims: %s: learn test %q, want one of %v", c.ID, c.LearnTest, learnTests)
	case !slices.Contains(failTests, c.FailTest):
		return fmt.Errorf("claims: %s: fail test %q, want one of %v", c.ID, c.FailTest, failTests)
	case len(c.Learn) == 0:
		return fmt.Errorf("claims: %s: no runs that should succeed", c.ID)
	case c.LearnTest.comparative() && (len(c.Fail) == 0 || c.FailTest != None):
		return fmt.Errorf("claims: %s: learn test %q compares with the fail runs: give fail runs and fail test %q", c.ID, c.LearnTest, None)
	case !c.LearnTest.comparative() && (len(c.Fail) == 0) != (c.FailTest == None):
		return fmt.Errorf("claims: %s: fail test %q with %d fail runs: %q goes with none, another test with some", c.ID, c.FailTest, len(c.Fail), None)
	case c.LearnTest == Faster && c.Seconds > 0:
		return fmt.Errorf("claims: %s: learn test %q with a budget of seconds: runs cut at different steps have no common censoring time; give a horizon in steps", c.ID, c.LearnTest)
	case (c.Horizon > 0) == (c.Seconds > 0) || c.Horizon < 0 || c.Seconds < 0:
		return fmt.Errorf("claims: %s: horizon %d steps and %g s, want one of them > 0", c.ID, c.Horizon, c.Seconds)
	case c.Reference != Baseline && c.Reference != Plateau:
		return fmt.Errorf("claims: %s: reference %q, want %q or %q", c.ID, c.Reference, Baseline, Plateau)
	}
	return nil
}

// Columns are the tab-separated fields of a line of a claims file, in order.
var Columns = []string{"id", "source", "quote", "learn test", "learn runs", "fail test", "fail runs", "horizon", "reference"}

// Read parses a claims file: one claim a line, the fields of Columns separated by tabs (runs
// comma-separated, "-" for none; horizon a number of steps or seconds followed by "s"); blank
// lines and lines starting with # are left out. name is for error messages.
func Read(r io.Reader, name string) ([]Claim, error) {
	var out []Claim
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != len(Columns) {
			return nil, fmt.Errorf("%s:%d: %d tab-separated fields, want %d (%s)", name, line, len(f), len(Columns), strings.Join(Columns, ", "))
		}
		c := Claim{ID: f[0], Source: f[1], Quote: f[2], LearnTest: Test(f[3]), Learn: list(f[4]),
			FailTest: Test(f[5]), Fail: list(f[6]), Reference: Reference(f[8])}
		var err error
		if c.Horizon, c.Seconds, err = ParseHorizon(f[7]); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if seen[c.ID] {
			return nil, fmt.Errorf("%s:%d: claim %q named twice", name, line, c.ID)
		}
		seen[c.ID] = true
		out = append(out, c)
	}
	return out, sc.Err()
}

func list(s string) []string {
	if s = strings.TrimSpace(s); s == "" || s == "-" {
		return nil
	}
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// ParseHorizon reads a horizon: a number of steps >= 1 ("10000") or of seconds > 0 followed
// by s ("1500s").
func ParseHorizon(text string) (steps int, seconds float64, err error) {
	bad := fmt.Errorf("horizon %q, want a number of steps >= 1, or of seconds > 0 followed by s", text)
	if num, ok := strings.CutSuffix(text, "s"); ok {
		if seconds, err = strconv.ParseFloat(num, 64); err != nil || !(seconds > 0) || math.IsInf(seconds, 0) {
			return 0, 0, bad
		}
		return 0, seconds, nil
	}
	if steps, err = strconv.Atoi(text); err != nil || steps < 1 {
		return 0, 0, bad
	}
	return steps, 0, nil
}

// Run is what the judge reads of a run: its seeds' logs and what they were trained on.
type Run struct {
	Name      string
	Task      string  // experiments.Task.Kind: "copy", "adding", …
	Baseline  float64 // the memoryless baseline
	Plateau   float64 // the variable-length copy's timing plateau (NaN for other tasks)
	EvalBatch int     // held-out sequences per evaluation
	Seeds     []Seed
	Hosts     []string // the machines that trained it
}

// Seed is one replica's log, and its score on the task's test split when it has one (rule 6).
type Seed struct {
	Seed uint64
	Log  []train.Record
	Test *runs.Test // runs.TestFile; nil when not scored
}

// StepSeconds is the run's training time per step, its replicas at once: the median over its
// seeds of runs.StepSeconds (NaN when no log is long enough to time).
func (r Run) StepSeconds() float64 {
	var logs [][]train.Record
	for _, s := range r.Seeds {
		logs = append(logs, s.Log)
	}
	return runs.ReplicasStepSeconds(logs...)
}
