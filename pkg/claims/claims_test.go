package claims

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

const every = 100 // steps between the synthetic runs' evaluations

// curve is a seed's held-out losses at steps every, 2·every, …; +Inf ends it in a divergence.
type curve []float64

// synth builds a run from curves: one evaluation every `every` steps, a training step taking
// 0.1 s, eval batch n.
func synth(name, task string, baseline float64, n int, seeds ...curve) *Run {
	r := &Run{Name: name, Task: task, Baseline: baseline, Plateau: math.NaN(), EvalBatch: n}
	for i, c := range seeds {
		var log []train.Record
		for j, l := range c {
			step := (j + 1) * every
			log = append(log, train.Record{Step: step, EvalLoss: l, EvalAccuracy: math.NaN(), Seconds: 0.1 * float64(step)})
		}
		r.Seeds = append(r.Seeds, Seed{Seed: uint64(i), Log: log})
	}
	return r
}

// eight repeats f(seed) over 8 seeds.
func eight(f func(seed int) curve) []curve {
	var out []curve
	for s := range 8 {
		out = append(out, f(s))
	}
	return out
}

// shape returns n evaluations of v(i, n).
func shape(n int, v func(i, n int) float64) curve {
	c := make(curve, n)
	for i := range c {
		c[i] = v(i, n)
	}
	return c
}

func flat(level float64) func(int) curve {
	return func(s int) curve {
		return shape(50, func(i, _ int) float64 { return level * (1 + 0.01*math.Sin(float64(i+s))) })
	}
}

func judge(t *testing.T, c Claim, rs ...*Run) Verdict {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	m := map[string]*Run{}
	for _, r := range rs {
		m[r.Name] = r
	}
	return Judge(c, m)
}

func claim(test Test, learn []string, failTest Test, fail []string, horizon int) Claim {
	return Claim{ID: "c", LearnTest: test, Learn: learn, FailTest: failTest, Fail: fail, Horizon: horizon, Reference: Baseline}
}

// Rule 1: a run is judged at the horizon; one that solves only after it does not count, and
// one short of it leaves the claim open with its hours.
func TestHorizon(t *testing.T) {
	late := eight(func(s int) curve { // at the baseline to step 5000, solved from 6000 on
		return shape(100, func(i, _ int) float64 {
			if i < 60 {
				return 0.17
			}
			return 0.001
		})
	})
	r := synth("late", "copy", 0.17, 100, late...)
	if v := judge(t, claim(Solves, []string{"late"}, None, nil, 5000), r); v.Outcome != NotReproduced {
		t.Errorf("solved after the horizon: %s (%s), want not reproduced", v.Outcome, v.Reason)
	}
	if v := judge(t, claim(Solves, []string{"late"}, None, nil, 10000), r); v.Outcome != Reproduced {
		t.Errorf("solved before the horizon: %s (%s), want reproduced", v.Outcome, v.Reason)
	}
	// A run at the horizon that fails its side decides, whatever a run still short of it does;
	// one that passes its side leaves the claim open.
	long := func(level float64) func(int) curve { // 15 000 steps
		return func(int) curve { return shape(150, func(int, int) float64 { return level }) }
	}
	flatRun := synth("flat", "copy", 0.17, 100, eight(long(0.17))...)
	if v := judge(t, claim(Solves, []string{"late"}, NotBelow, []string{"flat"}, 15000), r, flatRun); v.Outcome != Open {
		t.Errorf("a fail-run passing its side, a learn-run short: %s (%s), want open", v.Outcome, v.Reason)
	}
	solvedRun := synth("solved", "copy", 0.17, 100, eight(long(0.001))...)
	if v := judge(t, claim(Solves, []string{"late"}, NotBelow, []string{"solved"}, 15000), r, solvedRun); v.Outcome != NotReproduced ||
		v.HoursToGo != 0 || len(v.ToTrain) != 0 {
		t.Errorf("a fail-run at its horizon below the line, a learn-run short: %s (%s), %g h, to train %q; want not reproduced, nothing to train",
			v.Outcome, v.Reason, v.HoursToGo, v.ToTrain)
	}
	// The same for a comparison: a run at the horizon that is not lower than a run of the other
	// side also at the horizon decides; one that is lower than it leaves the claim open.
	high, low := synth("high", "copy", 0.17, 100, eight(long(0.17))...), synth("low", "copy", 0.17, 100, eight(long(0.001))...)
	if v := judge(t, claim(Lower, []string{"high"}, None, []string{"low", "late"}, 15000), high, low, r); v.Outcome != NotReproduced ||
		!strings.Contains(v.Reason, "fails \"lower\", against low (median 0.1700 against 0.0010, p = 1.000)") || strings.Contains(v.Reason, "against late") {
		t.Errorf("not lower than a run at the horizon, another short: %s (%s), want not reproduced against low alone", v.Outcome, v.Reason)
	}
	if v := judge(t, claim(Lower, []string{"low"}, None, []string{"high", "late"}, 15000), high, low, r); v.Outcome != Open {
		t.Errorf("lower than the run at the horizon, another short: %s (%s), want open", v.Outcome, v.Reason)
	}
	v := judge(t, claim(Solves, []string{"late"}, None, nil, 15000), r)
	if v.Outcome != Open || math.Abs(v.HoursToGo-0.1*5000/3600) > 1e-9 || !slices.Equal(v.ToTrain, []string{"late"}) {
		t.Errorf("short of the horizon: %s, %g h (%s), to train %q; want open with %g h, to train [late]", v.Outcome, v.HoursToGo, v.Reason, v.ToTrain, 0.1*5000/3600)
	}
	// A run missing: not run. Its time is unknown on a horizon in steps; on a budget of
	// seconds it is the budget, added to the time of the runs short of it.
	if v := judge(t, claim(Solves, []string{"late", "missing"}, None, nil, 15000), r); v.Outcome != NotRun || !math.IsNaN(v.HoursToGo) ||
		!slices.Equal(v.ToTrain, []string{"late", "missing"}) {
		t.Errorf("a run missing at 15000 steps: %s, %g h, to train %q; want not run, untimed, to train [late missing]", v.Outcome, v.HoursToGo, v.ToTrain)
	}
	// A run started on a budget of seconds but too new to time (one evaluation, 10 s in): what
	// is left of the budget.
	fresh := synth("fresh", "copy", 0.17, 100, eight(func(int) curve { return curve{0.17} })...)
	young := claim(Solves, []string{"fresh"}, None, nil, 0)
	young.Horizon, young.Seconds = 0, 1800
	if v := judge(t, young, fresh); v.Outcome != Open || math.Abs(v.HoursToGo-(1800-10)/3600.0) > 1e-9 || !slices.Equal(v.ToTrain, []string{"fresh"}) {
		t.Errorf("a run too new to time on a budget of 1800 s: %s, %g h (%s), to train %q; want open, %g h, to train [fresh]",
			v.Outcome, v.HoursToGo, v.Reason, v.ToTrain, (1800-10)/3600.0)
	}
	budget := claim(Solves, []string{"late", "missing"}, None, nil, 0)
	budget.Horizon, budget.Seconds = 0, 1800 // 18 000 steps at late's 0.1 s a step: 8000 more than its 10 000
	if v := judge(t, budget, r); v.Outcome != NotRun || math.Abs(v.HoursToGo-(0.1*8000+1800)/3600) > 1e-9 ||
		!slices.Equal(v.ToTrain, []string{"late", "missing"}) || !strings.Contains(v.Reason, "min more of training") {
		t.Errorf("a run missing on a budget of 1800 s: %s, %g h (%s), to train %q; want not run, %g h, to train [late missing]",
			v.Outcome, v.HoursToGo, v.Reason, v.ToTrain, (0.1*8000+1800)/3600)
	}
	// A budget of seconds buys steps at the run's speed (0.1 s a step): 500 s is 5000 steps.
	c := claim(Solves, []string{"late"}, None, nil, 0)
	c.Horizon, c.Seconds = 0, 500
	if v := judge(t, c, r); v.Outcome != NotReproduced || v.Runs[0].StepsJudged != 5000 {
		t.Errorf("500 s at 0.1 s a step: %s at %d steps, want not reproduced at 5000", v.Outcome, v.Runs[0].StepsJudged)
	}
}

// Rule 2: the final loss is the median of the last FinalK evaluations, so that one low
// evaluation at the end does not solve the task; a divergence ends a seed at +Inf.
func TestFinal(t *testing.T) {
	dip := eight(func(int) curve {
		c := shape(50, func(int, int) float64 { return 0.17 })
		c[49] = 0.0001
		return c
	})
	if v := judge(t, claim(Solves, []string{"dip"}, None, nil, 5000), synth("dip", "copy", 0.17, 100, dip...)); v.Outcome != NotReproduced {
		t.Errorf("one low evaluation at the end: %s, want not reproduced", v.Outcome)
	}
	div := eight(func(s int) curve {
		if s < 5 {
			return curve{0.17, 0.17, math.Inf(1)} // diverged at step 300: done, not short
		}
		return shape(50, func(int, int) float64 { return 0.001 })
	})
	v := judge(t, claim(Solves, []string{"div"}, None, nil, 5000), synth("div", "copy", 0.17, 100, div...))
	if v.Outcome != NotReproduced || v.Runs[0].Diverged != 5 || !math.IsInf(v.Runs[0].FinalMedian, 1) {
		t.Errorf("5 of 8 diverged: %s, %d diverged, median %g; want not reproduced, 5, +Inf", v.Outcome, v.Runs[0].Diverged, v.Runs[0].FinalMedian)
	}
	if got, want := v.Runs[0].cell(), "div (said to succeed): 8 seeds, 5000 of 5000 steps (5 of 8 seeds diverged)"; !strings.HasPrefix(got, want) {
		t.Errorf("the table cell of 5 of 8 diverged: %q, want it to begin %q", got, want)
	}
	allDiv := synth("alldiv", "copy", 0.17, 100, eight(func(int) curve { return curve{math.Inf(1)} })...)
	v = judge(t, claim(Solves, []string{"alldiv"}, None, nil, 5000), allDiv)
	if got, want := v.Runs[0].cell(), "alldiv (said to succeed): 8 seeds, all diverged"; v.Outcome != NotReproduced || !strings.HasPrefix(got, want) {
		t.Errorf("8 of 8 diverged at the first evaluation: %s, cell %q; want not reproduced, a cell beginning %q", v.Outcome, got, want)
	}
	// A seed stopped before its first evaluation has no final: the median and the range are
	// over the others.
	early := eight(func(s int) curve { return curve{0.1 * float64(s+1)} })
	r := synth("early", "copy", 0.17, 100, early...)
	r.Seeds[0].Log[0].EvalLoss = math.NaN()
	v = judge(t, claim(Solves, []string{"early"}, None, nil, 5000), r)
	if s := v.Runs[0]; s.FinalMedian != 0.5 || s.FinalMin != 0.2 || s.FinalMax != 0.8 {
		t.Errorf("one seed not evaluated: final %g [%g–%g], want 0.5 [0.2–0.8]", s.FinalMedian, s.FinalMin, s.FinalMax)
	}
}

// Rule 3: "below" needs the margin: 5% under the baseline of adding, with 100 held-out
// sequences, is within the noise; 40% under is below.
func TestMargin(t *testing.T) {
	near := synth("near", "adding", 1.0/6, 100, eight(flat(0.95/6))...)
	if v := judge(t, claim(Below, []string{"near"}, None, nil, 5000), near); v.Outcome != NotReproduced {
		t.Errorf("5%% under the baseline: %s (%s), want not reproduced", v.Outcome, v.Reason)
	}
	if v := judge(t, claim(Below, []string{"well"}, None, nil, 5000), synth("well", "adding", 1.0/6, 100, eight(flat(0.6/6))...)); v.Outcome != Reproduced {
		t.Errorf("40%% under the baseline: %s (%s), want reproduced", v.Outcome, v.Reason)
	}
	if m := Margin("adding", 100, 8); m < 0.15 || m > 0.16 {
		t.Errorf("Margin(adding, 100 sequences, 8 seeds) = %.4f, want 3·√(π/2)·1.183/10/√8 ≈ 0.157", m)
	}
	if m := Margin("adding", 1000, 8); m != MinMargin {
		t.Errorf("Margin(adding, 1000, 8) = %g, want MinMargin", m)
	}
	if m := Margin("copy", 100, 8); m != MinMargin {
		t.Errorf("Margin(copy) = %g, want MinMargin (the memoryless loss is the same on every sequence)", m)
	}
	// Blowing up: a run whose seeds diverge or end far above the line is above it; one at it is not.
	blown := synth("blown", "adding", 1.0/6, 100, eight(func(s int) curve {
		if s < 5 {
			return curve{0.2, math.Inf(1)}
		}
		return flat(0.17)(s)
	})...)
	if v := judge(t, claim(Above, []string{"blown"}, None, nil, 5000), blown); v.Outcome != Reproduced {
		t.Errorf("5 of 8 diverged: %s (%s), want reproduced (above the line)", v.Outcome, v.Reason)
	}
	if v := judge(t, claim(Above, []string{"near"}, None, nil, 5000), near); v.Outcome != NotReproduced {
		t.Errorf("at the baseline: %s (%s), want not reproduced (not above it)", v.Outcome, v.Reason)
	}
	// A run that should not go below the baseline and sits at it passes.
	v := judge(t, claim(Below, []string{"well"}, NotBelow, []string{"near"}, 5000), synth("well", "adding", 1.0/6, 100, eight(flat(0.6/6))...), near)
	if v.Outcome != Reproduced {
		t.Errorf("one well below, one at the baseline: %s (%s), want reproduced", v.Outcome, v.Reason)
	}
}

// Rule 4: a run said never to solve the task fails that when any seed reaches the line.
func TestNoSolve(t *testing.T) {
	solver := synth("solver", "copy", 0.17, 100, eight(flat(0.001))...)
	half := synth("half", "copy", 0.17, 100, eight(func(s int) curve {
		if s%2 == 0 {
			return flat(0.001)(s)
		}
		return flat(0.17)(s)
	})...)
	if v := judge(t, claim(Solves, []string{"solver"}, NoSolve, []string{"half"}, 5000), solver, half); v.Outcome != NotReproduced {
		t.Errorf("4 of 8 fail-seeds solve it: %s (%s), want not reproduced", v.Outcome, v.Reason)
	}
	one := synth("one", "copy", 0.17, 100, eight(func(s int) curve {
		if s == 0 {
			return flat(0.001)(s)
		}
		return flat(0.17)(s)
	})...)
	if v := judge(t, claim(Solves, []string{"solver"}, NoSolve, []string{"one"}, 5000), solver, one); v.Outcome != NotReproduced {
		t.Errorf("1 of 8 fail-seeds solves it (\"never able to find the solution\"): %s (%s), want not reproduced", v.Outcome, v.Reason)
	}
	none := synth("none", "copy", 0.17, 100, eight(flat(0.17))...)
	if v := judge(t, claim(Solves, []string{"solver"}, NoSolve, []string{"none"}, 5000), solver, none); v.Outcome != Reproduced {
		t.Errorf("no fail-seed solves it: %s (%s), want reproduced", v.Outcome, v.Reason)
	}
}

// Rule 5: speed is steps to the line over the seeds, censored at the horizon.
func TestFaster(t *testing.T) {
	at := func(step int) func(int) curve { // reaches 0.001 at step+every·s/2
		return func(s int) curve {
			k := step/every + s/2
			return shape(100, func(i, _ int) float64 {
				if i >= k {
					return 0.001
				}
				return 0.17
			})
		}
	}
	fast := synth("fast", "adding", 1.0/6, 100, eight(at(2000))...)
	slow := synth("slow", "adding", 1.0/6, 100, eight(at(6000))...)
	v := judge(t, claim(Faster, []string{"fast"}, None, []string{"slow"}, 10000), fast, slow)
	if v.Outcome != Reproduced || !(v.Runs[0].Comparisons[0].P < 0.001) {
		t.Errorf("solves at ~2000 against ~6000 steps: %s (%s), want reproduced with p < 0.001", v.Outcome, v.Reason)
	}
	if !strings.Contains(v.Reason, ", p < 0.001)") || strings.Contains(v.Reason, "p = 0.000") {
		t.Errorf("the reason %q does not write the p-value under 0.001 as \"p < 0.001\"", v.Reason)
	}
	// Both solve eventually (the old rule's refutation), the fast one first: still faster.
	if v.Runs[1].Reached != 8 {
		t.Errorf("the slow run reached the line in %d of 8 seeds, want 8", v.Runs[1].Reached)
	}
	// Faster by 1.2 times, however sure (every fast seed before every slow one), is not "only
	// after a very long time".
	near := synth("near", "adding", 1.0/6, 100, eight(at(6000))...)
	v = judge(t, claim(Faster, []string{"nearfast"}, None, []string{"near"}, 10000), synth("nearfast", "adding", 1.0/6, 100, eight(at(5000))...), near)
	if c := v.Runs[0].Comparisons[0]; v.Outcome != NotReproduced || !(c.P < Alpha) || !(c.Ratio > 1.1 && c.Ratio < 1.3) || !strings.Contains(v.Reason, "1.2 times as many where at least 2 are asked") {
		t.Errorf("every seed faster, 1.2 times: %s (%s), want not reproduced at p < %g and a ratio of 1.2", v.Outcome, v.Reason, Alpha)
	}
	// Half the fast seeds reach the line, none of the slow ones: both medians are censored, the
	// slow one's too, so the size condition holds (not reached) and the rank test decides.
	half := synth("half", "adding", 1.0/6, 100, eight(func(s int) curve {
		if s < 4 {
			return at(2000)(s)
		}
		return flat(0.17)(s)
	})...)
	none := synth("never8", "adding", 1.0/6, 100, eight(flat(0.17))...)
	if v := judge(t, claim(Faster, []string{"half"}, None, []string{"never8"}, 5000), half, none); v.Outcome != Reproduced || !math.IsInf(v.Runs[0].Comparisons[0].Ratio, 1) {
		t.Errorf("4 of 8 against 0 of 8: %s (%s), want reproduced with a ratio of +Inf", v.Outcome, v.Reason)
	}
	same := synth("same", "adding", 1.0/6, 100, eight(at(2000))...)
	if v := judge(t, claim(Faster, []string{"fast"}, None, []string{"same"}, 10000), fast, same); v.Outcome != NotReproduced {
		t.Errorf("the same speed: %s (%s), want not reproduced", v.Outcome, v.Reason)
	}
	// Censored: the slow one never reaches it by the horizon.
	if v := judge(t, claim(Faster, []string{"fast"}, None, []string{"slow"}, 5000), fast, slow); v.Outcome != Reproduced {
		t.Errorf("the slow run censored at 5000: %s (%s), want reproduced", v.Outcome, v.Reason)
	}
	// The fast side must itself reach the line in half its seeds: 3 of 8 that do, against 40
	// seeds that never do, is significantly faster (p ≈ 0.003) but does not "solve" the task.
	three := synth("three", "adding", 1.0/6, 100, eight(func(s int) curve {
		if s < 3 {
			return at(1000)(0)
		}
		return flat(0.17)(s)
	})...)
	var never []curve
	for range 5 {
		never = append(never, eight(flat(0.17))...)
	}
	if v := judge(t, claim(Faster, []string{"three"}, None, []string{"never"}, 5000), three, synth("never", "adding", 1.0/6, 100, never...)); v.Outcome != NotReproduced || !(v.Runs[0].Comparisons[0].P < Alpha) {
		t.Errorf("3 of 8 reach the line, against 40 seeds that never do: %s (%s), want not reproduced with p < %g", v.Outcome, v.Reason, Alpha)
	}
	if v := judge(t, claim(Faster, []string{"slow"}, None, []string{"never"}, 5000), slow, synth("never", "adding", 1.0/6, 100, eight(flat(0.17))...)); v.Outcome != NotReproduced {
		t.Errorf("neither reaches the line by the horizon: %s, want not reproduced", v.Outcome)
	}
}

// Rule 6: level comparisons and accuracies by the rank test.
func TestLowerAndAccuracy(t *testing.T) {
	lo := synth("lo", "adding", 1.0/6, 100, eight(flat(0.05))...)
	hi := synth("hi", "adding", 1.0/6, 100, eight(flat(0.08))...)
	if v := judge(t, claim(Lower, []string{"lo"}, None, []string{"hi"}, 5000), lo, hi); v.Outcome != Reproduced {
		t.Errorf("0.05 against 0.08: %s, want reproduced", v.Outcome)
	}
	if v := judge(t, claim(Lower, []string{"hi"}, None, []string{"lo"}, 5000), lo, hi); v.Outcome != NotReproduced {
		t.Errorf("0.08 against 0.05: %s, want not reproduced", v.Outcome)
	}
	// Accuracies are the test split's (runs.TestFile) at the horizon: the held-out batch's are
	// ordered the other way round here, and do not count.
	acc := func(name string, a float64) *Run {
		r := synth(name, "mnist", math.Log(10), 100, eight(flat(1))...)
		for i := range r.Seeds {
			for j := range r.Seeds[i].Log {
				r.Seeds[i].Log[j].EvalAccuracy = 1.7 - a + 0.001*float64(i)
			}
			ta := a + 0.001*float64(i)
			r.Seeds[i].Test = &runs.Test{Step: 5000, Examples: 10000, Split: 10000, Loss: 1, Accuracy: &ta}
		}
		return r
	}
	v := judge(t, claim(MoreAccurate, []string{"a"}, None, []string{"b"}, 5000), acc("a", 0.9), acc("b", 0.8))
	if v.Outcome != Reproduced || !strings.Contains(v.Reason, "median 90.3% against 80.4%") || len(v.Runs[0].Comparisons) != 1 || v.Runs[0].Comparisons[0].Test != "accuracies on the test split (one-sided Mann–Whitney)" {
		t.Errorf("90%% against 80%% on the test split: %s, %s; want reproduced", v.Outcome, v.Reason)
	}
	if v := judge(t, claim(MoreAccurate, []string{"b"}, None, []string{"a"}, 5000), acc("a", 0.9), acc("b", 0.8)); v.Outcome != NotReproduced {
		t.Errorf("80%% against 90%%: %s, want not reproduced", v.Outcome)
	}
	// A run at the horizon whose seeds are not all scored on the whole test split there leaves
	// the claim open, with the run to score; a score at an earlier step, or on part of the
	// split, is not one; a seed trained past the horizon is named (its kept checkpoint is later).
	for _, unscore := range []func(*Seed){
		func(s *Seed) { s.Test = nil },
		func(s *Seed) { s.Test.Step = 4900 },
		func(s *Seed) { s.Test.Examples = 100 },
		func(s *Seed) {
			s.Log = append(s.Log, train.Record{Step: 5100, EvalLoss: 1, EvalAccuracy: 0.5})
			s.Test.Step = 5100
		},
	} {
		b := acc("b", 0.8)
		unscore(&b.Seeds[3])
		v := judge(t, claim(MoreAccurate, []string{"a"}, None, []string{"b"}, 5000), acc("a", 0.9), b)
		if v.Outcome != Open || !strings.Contains(v.Reason, "not scored on the test split at the horizon (longmemory eval -save): b (1 of 8 seeds") ||
			!slices.Equal(v.ToTrain, []string{"b"}) || !slices.Equal(v.ToScore, []string{"b"}) || v.HoursToGo != 0 {
			t.Errorf("one seed of b not scored at the horizon: %s, %q, to train %v, to score %v, %g h; want open, b to score", v.Outcome, v.Reason, v.ToTrain, v.ToScore, v.HoursToGo)
		}
		if past := b.Seeds[3].Test != nil && b.Seeds[3].Test.Step > 5000; past != strings.Contains(v.Reason, "1 trained past the horizon") {
			t.Errorf("seed trained past the horizon: %v, reason %q", past, v.Reason)
		}
	}
	// A comparison lost against a scored run decides the claim whatever an unscored one says.
	c := acc("c", 0.7)
	c.Seeds[0].Test = nil
	if v := judge(t, claim(MoreAccurate, []string{"b"}, None, []string{"a", "c"}, 5000), acc("a", 0.9), acc("b", 0.8), c); v.Outcome != NotReproduced ||
		!strings.Contains(v.Reason, "decided whatever the runs still pending do: not scored on the test split at the horizon (longmemory eval -save): c (1 of 8 seeds)") || v.ToScore != nil {
		t.Errorf("80%% against 90%% scored and an unscored run: %s, %q, to score %v; want not reproduced", v.Outcome, v.Reason, v.ToScore)
	}
	// A seed that diverged scores 0, whatever its test split says.
	d := acc("b", 0.9)
	for i := range 7 {
		d.Seeds[i].Log = append(d.Seeds[i].Log[:10], train.Record{Step: 1100, EvalLoss: math.Inf(1), EvalAccuracy: math.NaN()})
	}
	v = judge(t, claim(MoreAccurate, []string{"a"}, None, []string{"b"}, 5000), acc("a", 0.8), d)
	if v.Outcome != Reproduced || !strings.Contains(v.Reason, "median 80.4% against 0.0%") {
		t.Errorf("80%% against 7 of 8 seeds diverged (scored 90%% before): %s, %s; want reproduced", v.Outcome, v.Reason)
	}
	// The table's cell gives the median the comparison uses.
	if cell := v.Runs[1].cell(); !strings.Contains(cell, "test accuracy 0.0% (diverged seeds score 0)") {
		t.Errorf("cell of a run with 7 of 8 seeds diverged: %q; want its median test accuracy 0.0%%, diverged seeds scoring 0", cell)
	}
	// verdicts.json's pass: the learn side's once the claim is decided; none for the compared side.
	if !decided(v, v.Runs[0]) || decided(v, v.Runs[1]) {
		t.Errorf("decided claim: learn side decided %v, compared side %v; want true, false", decided(v, v.Runs[0]), decided(v, v.Runs[1]))
	}
	// A run still short of the horizon shows no test accuracy, even with its diverged seeds' 0s;
	// while it is pending the claim is open and the other side has no pass either.
	e := acc("b", 0.9)
	for i := range 7 {
		e.Seeds[i].Log = append(e.Seeds[i].Log[:10], train.Record{Step: 1100, EvalLoss: math.Inf(1), EvalAccuracy: math.NaN()})
	}
	e.Seeds[7].Log, e.Seeds[7].Test = e.Seeds[7].Log[:20], nil
	v = judge(t, claim(MoreAccurate, []string{"a"}, None, []string{"b"}, 5000), acc("a", 0.8), e)
	if cell := v.Runs[1].cell(); v.Outcome != Open || strings.Contains(cell, "test accuracy") || decided(v, v.Runs[0]) {
		t.Errorf("against a run short of the horizon: %s, cell %q, learn side decided %v; want open, no test accuracy, undecided", v.Outcome, cell, decided(v, v.Runs[0]))
	}
}

// Rule 7: the trend. Slowly falling curves are still falling; flat curves, and flat curves with
// spikes that come back down, are not (a comparison of the medians at the middle and at the
// end would call a seed coming down from a spike "falling").
func TestTrend(t *testing.T) {
	slowly := eight(func(s int) curve {
		return shape(50, func(i, n int) float64 {
			return 0.17 * math.Exp(-0.4*float64(i)/float64(n)) * (1 + 0.01*math.Sin(float64(i*s)))
		})
	})
	spiky := eight(func(s int) curve {
		return shape(50, func(i, _ int) float64 {
			switch {
			case i >= 25 && i <= 28: // a blow-up in the second half, then back
				return 11 / float64(i-24)
			case i == 44+s%3:
				return 3
			}
			return 0.17 * (1 + 0.01*math.Sin(float64(i+s)))
		})
	})
	for _, tc := range []struct {
		name string
		c    []curve
		want int
	}{{"flat", eight(flat(0.17)), 0}, {"slowly falling", slowly, 8}, {"spiking and recovering", spiky, 0}} {
		v := judge(t, claim(Below, []string{"r"}, None, nil, 5000), synth("r", "adding", 1.0/6, 100, tc.c...))
		if v.Runs[0].Falling != tc.want {
			t.Errorf("%s: %d of 8 seeds still falling, want %d", tc.name, v.Runs[0].Falling, tc.want)
		}
	}
}

func TestMannWhitney(t *testing.T) {
	u, p := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6})
	if u != 9 || math.Abs(p-0.05) > 1e-12 {
		t.Errorf("MannWhitney(1 2 3, 4 5 6) = %g, %g, want U = 9, p = 1/20", u, p)
	}
	inf := math.Inf(1)
	u, p = MannWhitney([]float64{inf, inf}, []float64{inf, inf})
	if u != 2 || p != 1 {
		t.Errorf("all censored: U = %g, p = %g, want 2 and 1", u, p)
	}
	// The programme over tie groups against every assignment enumerated, with ties and +Inf.
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 20 {
		var x, y []float64
		for range 1 + rng.IntN(6) {
			x = append(x, float64(rng.IntN(4)))
		}
		for range 1 + rng.IntN(6) {
			y = append(y, float64(rng.IntN(4)))
		}
		if trial%3 == 0 {
			x[0], y[0] = inf, inf
		}
		_, got := MannWhitney(x, y)
		if want := bruteP(x, y); math.Abs(got-want) > 1e-12 {
			t.Errorf("MannWhitney(%v, %v) p = %g, enumeration %g", x, y, got, want)
		}
	}
	// 3 of 8 reach the line, 40 seeds never do: p = P(the 3 finite times all fall in the 8) = C(45, 5)/C(48, 8).
	three := []float64{1, 2, 3, inf, inf, inf, inf, inf}
	var forty []float64
	for range 40 {
		forty = append(forty, inf)
	}
	if _, p := MannWhitney(three, forty); math.Abs(p-binomial(45, 5)/binomial(48, 8)) > 1e-12 {
		t.Errorf("3 of 8 against 40 censored: p = %g, want C(45,5)/C(48,8) = %g", p, binomial(45, 5)/binomial(48, 8))
	}
}

// bruteP enumerates every assignment of the pooled values to groups of len(a) and len(b).
func bruteP(a, b []float64) float64 {
	pooled := append(append([]float64{}, a...), b...)
	u := mwU(a, b)
	var ge, total float64
	var rec func(i int, x, y []float64)
	rec = func(i int, x, y []float64) {
		if i == len(pooled) {
			if len(x) == len(a) {
				total++
				if mwU(x, y) >= u-1e-9 {
					ge++
				}
			}
			return
		}
		if len(x) < len(a) {
			rec(i+1, append(x[:len(x):len(x)], pooled[i]), y)
		}
		if len(y) < len(b) {
			rec(i+1, x, append(y[:len(y):len(y)], pooled[i]))
		}
	}
	rec(0, nil, nil)
	return ge / total
}

// TestLossCV measures the coefficient of variation of the memoryless adding error on sampled
// sequences against lossCV.
func TestLossCV(t *testing.T) {
	for _, tc := range []struct {
		kind string
		task tasks.Task
		pred float64 // the memoryless prediction
	}{{"adding", tasks.Adding{T: 10}, 1}, {"multiplication", tasks.Multiplication{T: 10}, 0.25}} {
		b, err := tc.task.Sample(rand.New(rand.NewPCG(1, 2)), 100000)
		if err != nil {
			t.Fatal(err)
		}
		var sum, sq float64
		n := 0
		for _, y := range b.Y {
			e := (float64(y) - tc.pred) * (float64(y) - tc.pred)
			sum, sq, n = sum+e, sq+e*e, n+1
		}
		mean := sum / float64(n)
		cv := math.Sqrt(sq/float64(n)-mean*mean) / mean
		if math.Abs(cv-lossCV[tc.kind]) > 0.02*lossCV[tc.kind] {
			t.Errorf("%s: measured CV %.4f, lossCV %.4f", tc.kind, cv, lossCV[tc.kind])
		}
	}
}

func TestRead(t *testing.T) {
	good := "# comment\nid1\tsrc\tquote\tsolves\ta,b\tno-solve\tc\t5000\tbaseline\nid2\tsrc\tq\tsolves\ta\t-\t-\t1500s\tbaseline\n"
	cs, err := Read(strings.NewReader(good), "good")
	if err != nil || len(cs) != 2 || len(cs[0].Learn) != 2 || cs[1].Seconds != 1500 {
		t.Fatalf("Read = %+v, %v", cs, err)
	}
	for _, bad := range []struct{ line, want string }{
		{"id\tsrc\tq\tsolves\ta\t-\t-\t0\tbaseline", "horizon \"0\""},
		{"id\tsrc\tq\tsolve\ta\t-\t-\t10\tbaseline", "learn test \"solve\""},
		{"id\tsrc\tq\tfaster\ta\tno-solve\tb\t10\tbaseline", "compares with the fail runs"},
		{"id\tsrc\tq\tsolves\ta\t-\t-\t10\tzero", "reference \"zero\""},
		{"id\tsrc\tq\tfaster\ta\t-\tb\t1500s\tbaseline", "no common censoring time"},
		{"id\tsrc\tq\tsolves\ta\t-\t-\t10", "8 tab-separated fields, want 9"},
	} {
		if _, err := Read(strings.NewReader(bad.line), "f"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Read(%q) = %v, want an error containing %q", bad.line, err, bad.want)
		}
	}
}

// TestStepsToLine: the step at which the median of the last 5 evaluations first falls under
// the line (the third low evaluation of five), and the common grid of a speed comparison.
func TestStepsToLine(t *testing.T) {
	drop := func(at int) func(int) curve { // 0.17 until evaluation at, 0.001 from it on
		return func(int) curve {
			return shape(50, func(i, _ int) float64 {
				if i >= at {
					return 0.001
				}
				return 0.17
			})
		}
	}
	r := synth("r", "copy", 0.17, 100, eight(drop(10))...)
	v := judge(t, claim(Solves, []string{"r"}, None, nil, 5000), r)
	// Evaluations 10, 11, 12 (steps 1100, 1200, 1300) are low: the median of the five ending at
	// step 1300 is the first under the line.
	if got := v.Runs[0].StepsToLine; got[0] != 1300 {
		t.Errorf("steps to the line %v, want 1300 for every seed", got)
	}
	// A run evaluated every 50 steps is timed on the steps of one evaluated every 100.
	fine := &Run{Name: "fine", Task: "copy", Baseline: 0.17, Plateau: math.NaN(), EvalBatch: 100}
	for s := range 8 {
		var log []train.Record
		for step := 50; step <= 5000; step += 50 {
			l := 0.17
			if step >= 1050 {
				l = 0.001
			}
			log = append(log, train.Record{Step: step, EvalLoss: l, EvalAccuracy: math.NaN(), Seconds: 0.1 * float64(step)})
		}
		fine.Seeds = append(fine.Seeds, Seed{Seed: uint64(s), Log: log})
	}
	v = judge(t, claim(Faster, []string{"fine"}, None, []string{"r"}, 5000), fine, r)
	if got := v.Runs[0].StepsToLine[0]; got != 1300 {
		t.Errorf("on the common grid of 100 steps: %d, want 1300 (alone, every 50 steps: 1150)", got)
	}
	if got := v.Runs[0].Comparisons[0].P; got != 1 {
		t.Errorf("the same steps to the line on the common grid: p = %g, want 1", got)
	}
}

// TestNotRunFirst: a missing run decides the claim before one short of its horizon.
func TestNotRunFirst(t *testing.T) {
	short := synth("short", "copy", 0.17, 100, eight(flat(0.17))...)
	if v := judge(t, claim(Solves, []string{"short", "missing"}, None, nil, 10000), short); v.Outcome != NotRun {
		t.Errorf("one run missing, one short: %s, want not run", v.Outcome)
	}
}

// TestLoad: replicas that disagree on their task's settings are not seeds of one run.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	for s, batch := range []int{100, 1000} {
		rep := filepath.Join(dir, "r", fmt.Sprintf("seed-%d", s))
		if err := os.MkdirAll(rep, 0o755); err != nil {
			t.Fatal(err)
		}
		meta := fmt.Sprintf(`{"Preset": {"Task": {"Kind": "adding", "T": 10}, "Train": {"EvalBatch": %d}}, "Baseline": 0.16666}`, batch)
		os.WriteFile(filepath.Join(rep, "run.json"), []byte(meta), 0o644)
		if err := runs.WriteLog(filepath.Join(rep, runs.LogFile), []train.Record{{Step: 1, Loss: 1, GradNorm: 1, EvalLoss: 0.2, EvalAccuracy: math.NaN(), Penalty: math.NaN(), Seconds: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load(filepath.Join(dir, "r")); err == nil || !strings.Contains(err.Error(), "1000 held-out sequences; its other replicas") {
		t.Errorf("replicas with 100 and 1000 held-out sequences: %v", err)
	}
	// A replica's score on the test split is read with its log.
	acc := 0.75
	if err := runs.WriteTest(filepath.Join(dir, "r", "seed-1"), runs.Test{Step: 1, Examples: 7, Loss: 0.5, Accuracy: &acc}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "r", "seed-0")); err != nil {
		t.Fatal(err)
	}
	if r, err := Load(filepath.Join(dir, "r")); err != nil || len(r.Seeds) != 1 || r.Seeds[0].Test == nil || *r.Seeds[0].Test.Accuracy != 0.75 || r.Seeds[0].Test.Examples != 7 {
		t.Errorf("a replica scored on the test split: %+v, %v", r, err)
	}
	if r, err := Load(filepath.Join(dir, "absent")); r != nil || err != nil {
		t.Errorf("a missing directory: %v, %v; want nil, nil (not run)", r, err)
	}
}

// TestWriteReportToTrain: the report lists open and not-run claims, quickest first, each with
// its hours (or why there are none) and the sweep command for the runs it still needs.
func TestWriteReportToTrain(t *testing.T) {
	vs := []Verdict{
		{Claim: Claim{ID: "untimed"}, Outcome: NotRun, HoursToGo: math.NaN(), ToTrain: []string{"x"}},
		{Claim: Claim{ID: "budget"}, Outcome: NotRun, HoursToGo: 2, ToTrain: []string{"a", "b"}},
		{Claim: Claim{ID: "short"}, Outcome: Open, HoursToGo: 0.5, ToTrain: []string{"c"}},
		{Claim: Claim{ID: "done"}, Outcome: Reproduced},
		{Claim: Claim{ID: "scored"}, Outcome: Open, HoursToGo: 0, ToTrain: []string{"d"}, ToScore: []string{"d"}},
	}
	var b strings.Builder
	WriteReport(&b, vs, false)
	out := b.String()
	want := "- scored: trained; the sweep scores d on the test split; `longmemory sweep -only d docs/runs.tsv`\n" +
		"- short: 30 min more of training here; `longmemory sweep -only c docs/runs.tsv`\n" +
		"- budget: 2.0 h more of training here; `longmemory sweep -only a,b docs/runs.tsv`\n" +
		"- untimed: not run yet, its time not measured; `longmemory sweep -only x docs/runs.tsv`\n"
	if !strings.Contains(out, want) || strings.Contains(out, "- done:") {
		t.Errorf("WriteReport's list of claims to train:\n%s\nwant it to hold, in order:\n%s", out, want)
	}
}

// A comparison on a budget of seconds needs its runs timed on one machine: on two it stays
// open; on one the verdict names it.
func TestSecondsHosts(t *testing.T) {
	level := func(l float64) func(int) curve {
		return func(int) curve { return shape(150, func(int, int) float64 { return l }) }
	}
	low, high := synth("low", "copy", 0.17, 100, eight(level(0.001))...), synth("high", "copy", 0.17, 100, eight(level(0.17))...)
	c := claim(Lower, []string{"low"}, None, []string{"high"}, 0)
	c.Horizon, c.Seconds = 0, 1000 // 10 000 steps at 0.1 s a step
	low.Hosts, high.Hosts = []string{"A"}, []string{"A"}
	if v := judge(t, c, low, high); v.Outcome != Reproduced || !strings.HasSuffix(v.Reason, "; timed on A") {
		t.Errorf("both timed on A: %s (%s), want reproduced, the reason ending \"; timed on A\"", v.Outcome, v.Reason)
	}
	high.Hosts = []string{"A", "B"}
	v := judge(t, c, low, high)
	if v.Outcome != Open || !strings.Contains(v.Reason, "low on A against high on A and B") || len(v.ToTrain) != 0 {
		t.Errorf("high timed on A and B: %s (%s), to train %q; want open, naming the pair and its machines, nothing to train", v.Outcome, v.Reason, v.ToTrain)
	}
	var report strings.Builder
	WriteReport(&report, []Verdict{v}, false)
	if !strings.Contains(report.String(), "- c: at 1000 s of training, comparisons of runs timed on two machines") || strings.Contains(report.String(), "-only  docs") {
		t.Errorf("the report's line for the claim open on two machines:\n%s", report.String())
	}
	// A failing comparison of two runs on one machine decides, whatever a pair on two machines
	// would: low is not lower than lowA (both on A); lowB, on B, is not compared with it.
	lowA, lowB := synth("lowA", "copy", 0.17, 100, eight(level(0.0001))...), synth("lowB", "copy", 0.17, 100, eight(level(0.0001))...)
	lowA.Hosts, lowB.Hosts = []string{"A"}, []string{"B"}
	c2 := claim(Lower, []string{"low"}, None, []string{"lowA", "lowB"}, 0)
	c2.Horizon, c2.Seconds = 0, 1000
	if v := judge(t, c2, low, lowA, lowB); v.Outcome != NotReproduced || !strings.Contains(v.Reason, "against lowA") || strings.Contains(v.Reason, "against lowB") {
		t.Errorf("not lower than a run on its machine: %s (%s), want not reproduced against lowA alone", v.Outcome, v.Reason)
	}
	c.Horizon, c.Seconds = 15000, 0 // a budget of steps does not depend on the machine
	if v := judge(t, c, low, high); v.Outcome != Reproduced {
		t.Errorf("on a budget of steps, timed on A and B: %s (%s), want reproduced", v.Outcome, v.Reason)
	}
}
