package tasks

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// VariableCopy is the variable-length copy task of Henaff et al. 2016, §3.1.3 and §4.2: "a variant of
// the copy task, where the symbol to indicate that the memorized sequence must be output is randomly
// located in [S + 1, S + T]" (1-based). The paper gives no more detail; this package reads it as the
// Copy layout with the marker moved and everything else kept:
//
//	L = T + 2S steps (0-based), marker step m ~ U{S, …, S+T-1} per sequence (1-based S+1 … S+T)
//	input  t = 0..S-1: data d_t ~ U{1..K};  t = m: marker K+1;  every other step: blank
//	target t = m+1+j (j = 0..S-1): d_j;     every other step, including after the recall: blank
//
// So the recall directly follows the marker, as in Copy, and at the latest marker position
// (m = S+T-1) the sequence is exactly a Copy sequence; earlier markers leave S+T-1-m trailing blank
// steps whose target is blank. The length is fixed at T + 2S so that sequences batch together, and
// the loss is the cross-entropy averaged over all L steps, as in Copy. Symbols, classes and defaults
// are those of Copy.
type VariableCopy struct {
	T       int // the marker is uniform over T positions, 1 to T steps after the last data symbol
	Symbols int // K, number of data symbols; 0 means 8
	Recall  int // S, number of symbols to remember; 0 means 10
}

// VariableCopyPaper is the variable-length copy setting of Henaff et al. 2016, §4.2 (T = 100).
// The paper does not state K and S for this task; we assume the copy task's K = 8, S = 10.
var VariableCopyPaper = VariableCopy{T: 100, Symbols: 8, Recall: 10}

// K returns the number of data symbols, with the default applied.
func (c VariableCopy) K() int { return orDefault(c.Symbols, DefaultSymbols) }

// S returns the number of symbols to remember, with the default applied.
func (c VariableCopy) S() int { return orDefault(c.Recall, DefaultRecall) }

// Marker returns the marker symbol K+1.
func (c VariableCopy) Marker() int { return c.K() + 1 }

// Validate checks 1 <= T <= MaxSteps, 1 <= K <= MaxSymbols and 1 <= S <= MaxSteps (after defaults).
func (c VariableCopy) Validate() error { return validateCopy("VariableCopy", c.T, c.Symbols, c.Recall) }

// SeqLen returns L = T + 2S.
func (c VariableCopy) SeqLen() int { return c.T + 2*c.S() }

// NumInputs returns K + 2 (blank, K data symbols, marker).
func (c VariableCopy) NumInputs() int { return c.K() + 2 }

// NumOutputs returns K + 1 (blank and K data symbols).
func (c VariableCopy) NumOutputs() int { return c.K() + 1 }

// RecallProb returns p_t, the probability over marker positions that step t (0-based) is a recall
// step, i.e. m+1 <= t <= m+S for m ~ U{S, …, S+T-1}:
//
//	p_t = #{m ∈ [S, S+T-1] : t-S <= m <= t-1} / T
//
// It returns 0 outside 0..L-1 or if Validate fails. Σ_t p_t = S.
func (c VariableCopy) RecallProb(t int) float64 {
	if c.Validate() != nil || t < 0 || t >= c.SeqLen() {
		return 0
	}
	s := c.S()
	lo, hi := max(t-s, s), min(t-1, s+c.T-1)
	if hi < lo {
		return 0
	}
	return float64(hi-lo+1) / float64(c.T)
}

// Baseline returns the mean cross-entropy of the best memoryless predictor, the one that sees only
// the step index t (not the inputs) and outputs the marginal target distribution of step t: blank
// with probability 1-p_t and each data symbol with p_t/K (p_t from RecallProb). Its expected loss at
// step t is H(p_t) + p_t·ln K with H(p) = -p ln p - (1-p) ln(1-p), and Σ_t p_t = S, so
//
//	baseline = (S·ln K + Σ_t H(p_t)) / (T + 2S)
//
// For S <= T, Σ_t H(p_t) = 2·Σ_{c=1}^{S-1} H(c/T) + (T-S+1)·H(S/T). K = 8, S = 10, T = 100: 0.448,
// against Copy's 0.173: the predictor also pays for not knowing when the recall happens. (A predictor
// that also sees the current input x_t, but has no memory, can do slightly better, since a blank
// input at t rules out m = t; that is not what this baseline measures.) It returns NaN if Validate fails.
func (c VariableCopy) Baseline() float64 {
	if c.Validate() != nil {
		return math.NaN()
	}
	sum := float64(c.S()) * math.Log(float64(c.K()))
	for t := range c.SeqLen() {
		sum += binaryEntropy(c.RecallProb(t))
	}
	return sum / float64(c.SeqLen())
}

// RecallBaseline returns S·ln K / (T + 2S), the loss of a predictor that knows when the recall
// happens but not what was stored (uniform over the data symbols on the S recall steps, blank
// elsewhere). It needs memory of the marker, so it is not memoryless, but it is the plateau a model
// that learned the timing but not the content would sit on; it equals Copy.Baseline. It returns NaN
// if Validate fails.
func (c VariableCopy) RecallBaseline() float64 {
	return Copy(c).Baseline()
}

// Sample draws batch sequences: per sequence the S data symbols in order as rng.IntN(K)+1, then
// the marker step as S + rng.IntN(T). It returns the error of Validate, or an error if rng is nil or
// batch is out of range.
func (c VariableCopy) Sample(rng *rand.Rand, batch int) (*Batch, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := checkRNG("VariableCopy", rng); err != nil {
		return nil, err
	}
	b, err := newBatch("VariableCopy", batch, c.SeqLen(), c.NumInputs(), c.NumOutputs())
	if err != nil {
		return nil, err
	}
	for i := range batch {
		m := c.S() + rng.IntN(c.T)
		fillCopy(b, i, rng, c.K(), c.S(), m)
	}
	return b, nil
}

// String returns e.g. "VariableCopy(T=100, K=8, S=10)".
func (c VariableCopy) String() string {
	return fmt.Sprintf("VariableCopy(T=%d, K=%d, S=%d)", c.T, c.K(), c.S())
}

// binaryEntropy returns H(p) = -p ln p - (1-p) ln(1-p) in nats, with 0·ln 0 = 0.
func binaryEntropy(p float64) float64 {
	h := 0.0
	if p > 0 {
		h -= p * math.Log(p)
	}
	if p < 1 {
		h -= (1 - p) * math.Log(1-p)
	}
	return h
}
