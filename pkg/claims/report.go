package claims

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// Rules are the package doc's rules, as every report prints them in its header.
func Rules() []string {
	return []string{
		"**Horizon.** Every run of a claim is judged at the claim's horizon (a number of steps, or a budget of seconds of training: the steps it buys at the run's measured speed, its replicas at once), its log cut there. A run short of it leaves the claim open, with the hours it still needs at its measured speed (a run not started or too new to time, on a budget of seconds: what is left of the budget). Seconds are a machine's: on a budget of seconds, a rank comparison (rules below) counts only between two runs timed on one machine; a claim whose comparisons are otherwise passed stays open while one pair was timed on two. The verdict names the machines.",
		fmt.Sprintf("**Final loss.** A seed's final loss is the median of its last %d held-out evaluations at or before the horizon (+Inf for a seed that diverged); a run's final is the median over its seeds, with the min and max.", FinalK),
		fmt.Sprintf("**Levels** (\"go well below the baseline\"). A run is below its line (the memoryless baseline, or the variable-length copy's timing plateau S·ln K/(T + 2S)) when its final median is under (1 − m)·line, m = max(%.0f%%, 3·√(π/2)·CV/√(N·seeds)): three standard errors of that median for a model at the line (one evaluation of N held-out sequences has a relative standard error of CV/√N, the median of the seeds' finals √(π/2) times that over √seeds; CV = %.2f on adding, measured on sampled sequences as derived, so m = %.1f%% for N = 100 and 8 seeds and %.0f%% for N = 1000; CV = 0 on copy, where the memoryless loss is the same on every sequence). A run blows up (\"particularly unstable\") when its final median is over (1 + m)·line, a seed that diverged counting +Inf.", 100*MinMargin, lossCV["adding"], 100*Margin("adding", 100, 8), 100*Margin("adding", 1000, 8)),
		"**Thresholds** (\"solves\", \"perfect performance\", \"never able to find the solution\"). A run solves the task when its final median is under the solved line (a tenth of the reference on copy, an MSE of 0.01 on adding). A run said never to solve it fails that when any of its seeds reaches the line by the horizon (rule of speed below).",
		fmt.Sprintf("**Speed** (\"efficiently\", \"only after a very long time\"). A seed's steps to the line are the first evaluation step where the median of its last %d evaluations (all so far, when fewer) is under the solved line, on the evaluation steps all the compared runs share, censored at the horizon (a horizon in steps). Faster means: the fast runs reach the line in at least half their seeds, and against each slow run a one-sided Mann–Whitney test over the seeds (censored times tied after every observed one: Gehan's test) gives p < %g and the slow run's median steps to the line are at least %g times the fast run's (or not reached).", FinalK, Alpha, FasterRatio),
		fmt.Sprintf("**Comparisons** of levels (\"achieves lower error\") compare the seeds' final losses, and of accuracies the seeds' accuracies, by the same one-sided test at α = %g. Accuracies are on the task's whole test split (pixel MNIST's 10 000 test images), each seed scored from its checkpoint at the horizon (`longmemory eval -save`, which the sweep runs there); a run at the horizon not yet scored leaves the claim open; a seed that diverged scores 0.", Alpha),
		fmt.Sprintf("**Trend.** A seed is still falling when the Theil–Sen slope of its log-loss over the second half of the judged window (the median of pairwise slopes, which a spike cannot move) takes more than %.0f%% off its loss across that half (a seed already under the solved line is not counted). Reported; the verdict is still decided at the horizon.", 100*FallingDrop),
		"A claim is **reproduced** when every run passes its side of the test, **not reproduced** when the runs are at the horizon and one does not (or earlier, whatever the runs still short of it do, as soon as a run at the horizon fails its side: its own test, or a comparison with a run of the other side that is at the horizon too), **open** while a run is short of the horizon (or, on accuracies, not yet scored there), and **not run** while a run has no directory.",
	}
}

// WriteRules writes Rules as a Markdown list.
func WriteRules(w io.Writer) {
	for _, r := range Rules() {
		fmt.Fprintf(w, "- %s\n", r)
	}
}

// WriteTable writes verdicts as a Markdown table, then their tally.
func WriteTable(w io.Writer, vs []Verdict) {
	fmt.Fprintln(w, "| claim | test | runs at the horizon: final held-out loss, median [min–max] over seeds | verdict |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, v := range vs {
		c := v.Claim
		test := string(c.LearnTest)
		if c.FailTest != None {
			test += " / " + string(c.FailTest)
		}
		test += ", " + c.HorizonText()
		var rs []string
		for _, s := range v.Runs {
			rs = append(rs, s.cell())
		}
		fmt.Fprintf(w, "| %s %s: \"%s\" | %s | %s | **%s**: %s |\n", c.ID, c.Source, c.Quote, test, strings.Join(rs, "; "), v.Outcome.Text(), v.Reason)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, Tally(vs))
}

// ReadFile reads the claims file at path (Read).
func ReadFile(path string) ([]Claim, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// JudgeAll judges every claim of cs (Judge) against the runs LoadAll read.
func JudgeAll(cs []Claim, byName map[string]*Run) []Verdict {
	var out []Verdict
	for _, c := range cs {
		out = append(out, Judge(c, byName))
	}
	return out
}

// WriteReport writes verdicts in Markdown as `longmemory verdict` prints them and the reports
// show them: with rules the rules first (WriteRules), then the table and its tally
// (WriteTable), then the open and not-run claims by the training their runs still need
// (HoursToGo, the untimed last) and the sweep command that trains those runs (ToTrain).
func WriteReport(w io.Writer, vs []Verdict, rules bool) {
	if rules {
		fmt.Fprintln(w, "The rules (pkg/claims):")
		fmt.Fprintln(w)
		WriteRules(w)
		fmt.Fprintln(w)
	}
	WriteTable(w, vs)
	var open []Verdict
	for _, v := range vs {
		if v.Outcome == Open || v.Outcome == NotRun {
			open = append(open, v)
		}
	}
	slices.SortStableFunc(open, func(a, b Verdict) int { return cmpHours(a.HoursToGo, b.HoursToGo) })
	if len(open) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Open and not-run claims, by the training their runs still need to reach the horizon (one run after another, each with its replicas at once, at its measured speed; a run not started on a budget of seconds needs the whole budget), and the command that trains those runs (add `-slurm` to submit them to a Slurm cluster as a job array):")
		fmt.Fprintln(w)
		for _, v := range open {
			hours := HoursText(v.HoursToGo)
			switch {
			case v.Outcome == NotRun && math.IsNaN(v.HoursToGo):
				hours = "not run yet, its time not measured"
			case len(v.ToScore) > 0 && len(v.ToScore) == len(v.ToTrain): // trained to the horizon (rule 6)
				hours = "trained; the sweep scores " + strings.Join(v.ToScore, ", ") + " on the test split"
			}
			if len(v.ToTrain) == 0 { // at the horizon, but not decidable as they stand (timed on different machines)
				fmt.Fprintf(w, "- %s: %s\n", v.Claim.ID, v.Reason)
				continue
			}
			fmt.Fprintf(w, "- %s: %s; `longmemory sweep -only %s docs/runs.tsv`\n", v.Claim.ID, hours, strings.Join(v.ToTrain, ","))
		}
	}
}

// cmpHours orders hours with the untimed (NaN) last.
func cmpHours(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	case math.IsNaN(b):
		return -1
	}
	return cmp.Compare(a, b)
}

// cell writes a run's statistics for a table cell.
func (s RunStats) cell() string {
	side := "succeed"
	if s.Fail {
		side = "fail"
	}
	text := fmt.Sprintf("%s (said to %s): %d seeds, %d of %d steps", s.Name, side, s.Seeds, min(s.Steps, s.StepsJudged), s.StepsJudged)
	switch {
	case s.Diverged > 0 && s.Diverged == s.Seeds: // no seed is at a step: each ended when it diverged
		text = fmt.Sprintf("%s (said to %s): %d seeds, all diverged", s.Name, side, s.Seeds)
	case s.Diverged > 0:
		text += fmt.Sprintf(" (%d of %d seeds diverged)", s.Diverged, s.Seeds)
	}
	if !math.IsNaN(s.FinalMedian) {
		text += fmt.Sprintf(", final %s", s.finalText())
		// On the held-out batches, the median accuracy of the seeds that did not diverge (a diverged
		// seed's is 0, whatever the task); on the test split, of every seed, as rule 6 compares them,
		// once they are all at the horizon and scored.
		var accs []float64
		for i, a := range s.Accuracies {
			if (s.TestSplit && !s.pending()) || (!s.TestSplit && !math.IsInf(s.Finals[i], 1)) {
				accs = append(accs, a)
			}
		}
		label := "accuracy"
		if s.TestSplit {
			label = "test accuracy"
		}
		if a := runs.Median(accs); !math.IsNaN(a) {
			text += fmt.Sprintf(", %s %.1f%%", label, 100*a)
			if s.TestSplit && s.Diverged > 0 {
				text += " (diverged seeds score 0)"
			}
		}
		if s.Unscored > 0 {
			text += fmt.Sprintf(", %d of %d seeds not scored on the test split", s.Unscored, s.Seeds)
		}
	}
	if s.Reached > 0 {
		text += fmt.Sprintf(", %d reach the solved line (median step %s)", s.Reached, medianSteps(s.StepsToLine))
	}
	return text
}

// Tally counts verdicts by outcome, in a sentence.
func Tally(vs []Verdict) string {
	n := map[Outcome]int{}
	for _, v := range vs {
		n[v.Outcome]++
	}
	return fmt.Sprintf("Of %d claims: %d reproduced, %d not reproduced, %d open, %d not run.", len(vs), n[Reproduced], n[NotReproduced], n[Open], n[NotRun])
}

// jsonVerdicts is docs/verdicts.json.
type jsonVerdicts struct {
	FinalK      int           `json:"final_k"`
	Alpha       float64       `json:"alpha"`
	MinMargin   float64       `json:"min_margin"`
	FallingDrop float64       `json:"falling_drop"`
	FasterRatio float64       `json:"faster_ratio"`
	Rules       []string      `json:"rules"`
	Claims      []jsonVerdict `json:"claims"`
	Variants    []jsonVerdict `json:"variants"`
}

type jsonVerdict struct {
	ID        string    `json:"id"`
	Paper     string    `json:"paper"`
	Quote     string    `json:"quote"`
	Outcome   Outcome   `json:"outcome"`
	Horizon   string    `json:"horizon"`
	Reason    string    `json:"reason"`
	HoursToGo *float64  `json:"hours_to_go,omitempty"`
	ToTrain   []string  `json:"to_train,omitempty"`
	ToScore   []string  `json:"to_score,omitempty"`
	Runs      []jsonRun `json:"runs"`
}

type jsonRun struct {
	Name             string   `json:"name"`
	Side             string   `json:"side"`
	Test             Test     `json:"test"`
	Seeds            int      `json:"seeds"`
	StepsJudged      int      `json:"steps_judged"`
	Steps            int      `json:"steps"`
	FinalMedian      *float64 `json:"final_median"`
	FinalMin         *float64 `json:"final_min"`
	FinalMax         *float64 `json:"final_max"`
	Line             float64  `json:"line"`
	Margin           float64  `json:"margin"`
	StepsToThreshold []*int   `json:"steps_to_threshold"`
	// TestAccuracies are the seeds' accuracies on the whole test split at the horizon, on an
	// accuracy claim (rule 6; null: not scored yet), and Unscored the seeds at the horizon not scored.
	TestAccuracies []*float64 `json:"test_accuracies,omitempty"`
	Unscored       int        `json:"unscored,omitempty"`
	Falling        int        `json:"falling"`
	Diverged       int        `json:"diverged"`
	// Pass is whether the run meets its side of the test; null where that is not decided yet or
	// not the run's own (decided).
	Pass        *bool      `json:"pass"`
	Comparisons []jsonComp `json:"comparisons,omitempty"`
}

type jsonComp struct {
	Against string   `json:"against"`
	Test    string   `json:"test"`
	U       float64  `json:"u"`
	PValue  float64  `json:"p_value"`
	Ratio   *float64 `json:"ratio,omitempty"` // speed: the other run's median steps to the line over this one's (null: not reached)
}

// decided reports whether run s of verdict v has a pass or fail of its own: it has a test of
// its own (not the fail side of a comparison), is at the horizon and scored, was judged (the
// claim is not waiting on a run not started), and, on a comparison, was compared with every
// run of the other side in a claim that is not open.
func decided(v Verdict, s RunStats) bool {
	if s.Test.comparative() && (v.Outcome == Open || len(s.Comparisons) < len(v.Claim.Fail)) {
		return false
	}
	return s.Test != None && !s.pending() && v.Outcome != NotRun
}

// num is v for JSON: null when NaN or infinite (a diverged run's final).
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func toJSON(vs []Verdict) []jsonVerdict {
	out := []jsonVerdict{}
	for _, v := range vs {
		j := jsonVerdict{ID: v.Claim.ID, Paper: v.Claim.Source, Quote: v.Claim.Quote, Outcome: v.Outcome,
			Horizon: v.Claim.HorizonText(), Reason: v.Reason, Runs: []jsonRun{}}
		if v.Outcome == Open || v.Outcome == NotRun {
			j.HoursToGo, j.ToTrain, j.ToScore = num(v.HoursToGo), v.ToTrain, v.ToScore
		}
		for _, s := range v.Runs {
			side := "succeeds"
			if s.Fail {
				side = "fails"
			}
			r := jsonRun{Name: s.Name, Side: side, Test: s.Test, Seeds: s.Seeds, StepsJudged: s.StepsJudged, Steps: min(s.Steps, s.StepsJudged),
				FinalMedian: num(s.FinalMedian), FinalMin: num(s.FinalMin), FinalMax: num(s.FinalMax), Line: s.Line, Margin: s.Margin,
				Falling: s.Falling, Diverged: s.Diverged, StepsToThreshold: []*int{}}
			if decided(v, s) {
				r.Pass = &s.Pass
			}
			for _, n := range s.StepsToLine {
				if n < 0 {
					r.StepsToThreshold = append(r.StepsToThreshold, nil)
				} else {
					r.StepsToThreshold = append(r.StepsToThreshold, &n)
				}
			}
			if s.TestSplit {
				r.Unscored = s.Unscored
				for _, a := range s.Accuracies {
					r.TestAccuracies = append(r.TestAccuracies, num(a))
				}
			}
			for _, c := range s.Comparisons {
				r.Comparisons = append(r.Comparisons, jsonComp{Against: c.Against, Test: c.Test, U: c.U, PValue: c.P, Ratio: num(c.Ratio)})
			}
			j.Runs = append(j.Runs, r)
		}
		out = append(out, j)
	}
	return out
}

// WriteJSON writes docs/verdicts.json: the rules' constants, the claims' verdicts and, apart,
// the setting variants'.
func WriteJSON(w io.Writer, claims, variants []Verdict) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(jsonVerdicts{FinalK: FinalK, Alpha: Alpha, MinMargin: MinMargin, FallingDrop: FallingDrop, FasterRatio: FasterRatio,
		Rules: Rules(), Claims: toJSON(claims), Variants: toJSON(variants)})
}
