package tasks

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Defaults of the copy tasks' optional fields (Arjovsky et al. 2016, §4.1: "10 categories",
// 8 data symbols and 10 of them to remember).
const (
	DefaultSymbols = 8  // K, data symbols
	DefaultRecall  = 10 // S, symbols to remember
)

// Blank is the blank symbol of the copy tasks, in inputs and targets; data symbols are 1..K and the
// marker (input only) is K+1.
const Blank = 0

// Copy is the copying-memory task in the layout of Arjovsky et al. 2016, §4.1 (as in their code),
// written with Henaff et al. 2016, §3.1's general K and S. Symbols: 0 blank, 1..K data, K+1 marker;
// K+2 input classes (one-hot) and K+1 output classes. A sequence has L = T + 2S steps (0-based):
//
//	input  t = 0..S-1: data d_t ~ U{1..K};  t = S..S+T-2: blank;  t = S+T-1: marker;  t = S+T..L-1: blank
//	target t < S+T: blank;                  t = S+T+j (j = 0..S-1): d_j
//
// The loss is the cross-entropy averaged over all L steps (Mask is all ones). The zero value of
// Symbols means DefaultSymbols and of Recall DefaultRecall; T has no default and must be >= 1.
type Copy struct {
	T       int // delay: the marker comes T steps after the last data symbol (T-1 blanks in between)
	Symbols int // K, number of data symbols; 0 means 8
	Recall  int // S, number of symbols to remember; 0 means 10
}

// CopyPaper is the copying-memory setting of Arjovsky et al. 2016, §4.1 at T = 100
// (they also run T = 200, 300, 500: copy it and change T).
var CopyPaper = Copy{T: 100, Symbols: 8, Recall: 10}

// K returns the number of data symbols, with the default applied.
func (c Copy) K() int { return orDefault(c.Symbols, DefaultSymbols) }

// S returns the number of symbols to remember, with the default applied.
func (c Copy) S() int { return orDefault(c.Recall, DefaultRecall) }

// Marker returns the marker symbol K+1.
func (c Copy) Marker() int { return c.K() + 1 }

// Validate checks 1 <= T <= MaxSteps, 1 <= K <= MaxSymbols and 1 <= S <= MaxSteps (after defaults).
// S > T is allowed: the layout does not depend on it.
func (c Copy) Validate() error { return validateCopy("Copy", c.T, c.Symbols, c.Recall) }

// SeqLen returns L = T + 2S.
func (c Copy) SeqLen() int { return c.T + 2*c.S() }

// NumInputs returns K + 2 (blank, K data symbols, marker).
func (c Copy) NumInputs() int { return c.K() + 2 }

// NumOutputs returns K + 1 (blank and K data symbols).
func (c Copy) NumOutputs() int { return c.K() + 1 }

// Baseline returns the mean cross-entropy of the best memoryless predictor (Arjovsky et al. 2016,
// §4.1), which outputs blank with probability 1 for the first T+S steps and the uniform distribution
// over the K data symbols on the S recall steps:
//
//	baseline = S·ln K / (T + 2S)
//
// K = 8, S = 10: 0.173 at T = 100, 0.0945 at 200, 0.0650 at 300, 0.0400 at 500, 0.0204 at 1000.
// It returns NaN if Validate fails.
func (c Copy) Baseline() float64 {
	if c.Validate() != nil {
		return math.NaN()
	}
	return float64(c.S()) * math.Log(float64(c.K())) / float64(c.SeqLen())
}

// Sample draws batch sequences: per sequence S data symbols, in order, as rng.IntN(K)+1.
// It returns the error of Validate, or an error if rng is nil or batch is out of range.
func (c Copy) Sample(rng *rand.Rand, batch int) (*Batch, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := checkRNG("Copy", rng); err != nil {
		return nil, err
	}
	b, err := newBatch("Copy", batch, c.SeqLen(), c.NumInputs(), c.NumOutputs())
	if err != nil {
		return nil, err
	}
	for i := range batch {
		fillCopy(b, i, rng, c.K(), c.S(), c.S()+c.T-1)
	}
	return b, nil
}

// String returns e.g. "Copy(T=100, K=8, S=10)".
func (c Copy) String() string { return fmt.Sprintf("Copy(T=%d, K=%d, S=%d)", c.T, c.K(), c.S()) }

// fillCopy writes sample i of a copy batch whose marker is at step m (0-based): data symbols at
// steps 0..s-1, the marker at m, blanks elsewhere in the input; targets d_j at m+1+j, blanks
// elsewhere; mask 1 everywhere. The batch must be zeroed and have room for m+s < Len.
func fillCopy(b *Batch, i int, rng *rand.Rand, k, s, m int) {
	row := i * b.Len
	for t := range b.Len {
		b.X[(row+t)*b.NumIn+Blank] = 1
		b.Mask[row+t] = 1
	}
	for j := range s {
		d := 1 + rng.IntN(k)
		b.X[(row+j)*b.NumIn+Blank] = 0
		b.X[(row+j)*b.NumIn+d] = 1
		b.Labels[row+m+1+j] = int32(d)
	}
	b.X[(row+m)*b.NumIn+Blank] = 0
	b.X[(row+m)*b.NumIn+k+1] = 1
}

// validateCopy checks the parameters shared by Copy and VariableCopy; name is the type's name.
func validateCopy(name string, t, k, s int) error {
	if t < 1 || t > MaxSteps {
		return fmt.Errorf("tasks: %s.T = %d, want 1..%d (the marker comes T steps after the last data symbol)", name, t, MaxSteps)
	}
	if k < 0 || k > MaxSymbols {
		return fmt.Errorf("tasks: %s.Symbols = %d, want 1..%d, or 0 for the default %d", name, k, MaxSymbols, DefaultSymbols)
	}
	if s < 0 || s > MaxSteps {
		return fmt.Errorf("tasks: %s.Recall = %d, want 1..%d, or 0 for the default %d", name, s, MaxSteps, DefaultRecall)
	}
	return nil
}

// orDefault returns v, or def when v is zero.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
