package claims

import (
	"math"
	"slices"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// evals are a seed's held-out evaluations up to the horizon.
type evals struct {
	steps    []int
	loss     []float64      // +Inf at the step where it diverged (the last)
	last     int            // the last step logged at or before the horizon
	diverged bool           // its log ends in a divergence at or before the horizon
	log      []train.Record // the log cut at the horizon
}

// cut returns the evaluations of log at or before step horizon.
func cut(log []train.Record, horizon int) evals {
	var e evals
	for _, r := range log {
		if r.Step > horizon {
			break
		}
		e.last, e.log = r.Step, append(e.log, r)
		if math.IsNaN(r.EvalLoss) {
			continue
		}
		e.steps, e.loss = append(e.steps, r.Step), append(e.loss, r.EvalLoss)
		if math.IsInf(r.EvalLoss, 1) {
			e.diverged = true
		}
	}
	return e
}

// final is rule 2, runs.HeldOut's final loss and accuracy on the log cut at the horizon.
func (e evals) final() (loss, acc float64) {
	loss, _, acc = runs.HeldOut(e.log)
	return loss, acc
}

// stepsTo is rule 5: the first evaluation step at which the median of the last FinalK
// evaluations (of all so far, when fewer: as the final loss takes them) is under line, or -1
// when none is by the horizon (censored). With grid > 1 only the evaluations at multiples of
// grid count, so that runs evaluated at different intervals are timed on the same steps.
func (e evals) stepsTo(line float64, grid int) int {
	var steps []int
	var loss []float64
	for i, s := range e.steps {
		if grid <= 1 || s%grid == 0 {
			steps, loss = append(steps, s), append(loss, e.loss[i])
		}
	}
	for i := range loss {
		if math.IsInf(loss[i], 1) {
			break
		}
		if runs.Median(loss[max(0, i-FinalK+1):i+1]) < line {
			return steps[i]
		}
	}
	return -1
}

// evalSpacing is the median number of steps between a run's consecutive held-out
// evaluations (0 with fewer than two).
func evalSpacing(r *Run) int {
	var d []float64
	for _, s := range r.Seeds {
		prev := -1
		for _, rec := range s.Log {
			if math.IsNaN(rec.EvalLoss) {
				continue
			}
			if prev >= 0 {
				d = append(d, float64(rec.Step-prev))
			}
			prev = rec.Step
		}
	}
	if m := runs.Median(d); !math.IsNaN(m) {
		return int(m)
	}
	return 0
}

// falling is rule 7: whether the Theil–Sen trend of the log-loss over the evaluations in the
// second half of [0, horizon] takes more than FallingDrop off the loss across that half.
func (e evals) falling(horizon int) bool {
	if e.diverged {
		return false
	}
	var x, y []float64
	for i, s := range e.steps {
		if 2*s >= horizon && e.loss[i] > 0 {
			x, y = append(x, float64(s)), append(y, math.Log(e.loss[i]))
		}
	}
	if len(x) < 3 {
		return false
	}
	return math.Exp(TheilSen(x, y)*float64(horizon)/2) < 1-FallingDrop
}

// TheilSen returns the median of the slopes (y_j − y_i)/(x_j − x_i) over the pairs i < j with
// x_i ≠ x_j (NaN if there are none): a line fit that up to about 29% of outlying points cannot
// move.
func TheilSen(x, y []float64) float64 {
	var s []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if x[j] != x[i] {
				s = append(s, (y[j]-y[i])/(x[j]-x[i]))
			}
		}
	}
	return runs.Median(s)
}

// MannWhitney tests whether the values of a tend to be smaller than those of b: it returns
// U = Σ_{i,j} ([a_i < b_j] + ½[a_i = b_j]) and the one-sided p-value P(U ≥ observed) when the
// pooled values are assigned to the two groups at random, every assignment equally likely.
// +Inf values (censored times) tie with each other and come after every finite value, which
// makes it Gehan's test for data censored at one time. The p-value is exact at any size and
// with any ties: a dynamic programme over the groups of equal values counts the assignments
// (∏ C(m_g, k_g) for k_g of a's values among the m_g of group g) by the U they give.
func MannWhitney(a, b []float64) (u, p float64) {
	u = mwU(a, b)
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return u, math.NaN()
	}
	pooled := slices.Concat(a, b)
	slices.SortFunc(pooled, func(x, y float64) int { return cmpValue(y, x) }) // largest first
	var groups []int                                                          // sizes of the runs of equal values, largest value first
	for i := 0; i < len(pooled); {
		j := i
		for j < len(pooled) && cmpValue(pooled[j], pooled[i]) == 0 {
			j++
		}
		groups, i = append(groups, j-i), j
	}
	// ways[k][2U] = number of assignments of k of a's values among the groups so far (the
	// largest values) that give U (doubled, to count the ½ of ties in integers).
	ways := []map[int]float64{{0: 1}}
	seen := 0 // values in the groups so far
	for _, m := range groups {
		next := make([]map[int]float64, min(n1, seen+m)+1)
		for k, byU := range ways {
			for c := 0; c <= m && k+c <= n1; c++ {
				// Each of the c values of a in this group is smaller than the b values above it
				// (seen − k of them) and ties with the m − c of b in the group.
				du := c*2*(seen-k) + c*(m-c)
				w := binomial(m, c)
				if next[k+c] == nil {
					next[k+c] = map[int]float64{}
				}
				for twoU, n := range byU {
					next[k+c][twoU+du] += n * w
				}
			}
		}
		ways, seen = next, seen+m
	}
	var ge, total float64
	obs := int(math.Round(2 * u))
	for twoU, n := range ways[n1] {
		total += n
		if twoU >= obs {
			ge += n
		}
	}
	return u, ge / total
}

// cmpValue orders values with NaN first, as slices.Sort does, and +Inf after every finite one.
func cmpValue(x, y float64) int {
	switch {
	case x == y || (math.IsNaN(x) && math.IsNaN(y)):
		return 0
	case math.IsNaN(x) || x < y:
		return -1
	}
	return 1
}

func mwU(a, b []float64) float64 {
	u := 0.0
	for _, x := range a {
		for _, y := range b {
			switch {
			case x < y:
				u++
			case x == y:
				u += 0.5
			}
		}
	}
	return u
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// lossCV is the coefficient of variation of the per-sequence loss of a model sitting at the
// memoryless baseline, by task (rule 3). Adding: the error (x_i + x_j − 1)² of always answering 1,
// x_i + x_j triangular on [0, 2], has mean 1/6 and variance 1/15 − 1/36 = 7/180, so
// CV = 6·√(7/180) ≈ 1.18 (TestLossCV measures it on sampled sequences). Multiplication: the
// error (z − 1/4)² of always answering 1/4, z = x_i x_j with E[z^k] = 1/(k+1)², has mean 7/144
// and second moment E[(z − 1/4)⁴] = 1/25 − 1/16 + 3/8·1/9 − 1/16·1/4 + 1/256, so CV ≈ 1.47. On
// copy, the variable-length copy, XOR and the temporal order the memoryless loss is the same on
// every sequence (CV 0), and pixel MNIST's classifiers are compared by accuracies (rule 6).
var lossCV = map[string]float64{
	"adding":         6 * math.Sqrt(7.0/180),
	"multiplication": math.Sqrt(1.0/25-1.0/16+3.0/8/9-1.0/16/4+1.0/256-(7.0/144)*(7.0/144)) / (7.0 / 144),
}

// EvalRSE is the relative standard error of one held-out evaluation of n sequences of task for
// a model at the baseline: lossCV/√n.
func EvalRSE(task string, n int) float64 {
	if n <= 0 {
		return math.NaN()
	}
	return lossCV[task] / math.Sqrt(float64(n))
}

// Margin is rule 3's relative margin under a line for a run of task with seeds seeds each
// evaluated on n held-out sequences: max(MinMargin, 3·√(π/2)·EvalRSE(task, n)/√seeds).
func Margin(task string, n, seeds int) float64 {
	if seeds < 1 || n < 1 {
		return MinMargin
	}
	return max(MinMargin, 3*math.Sqrt(math.Pi/2)*EvalRSE(task, n)/math.Sqrt(float64(seeds)))
}
