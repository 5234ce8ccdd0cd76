package tasks

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// BothSides is a task for bidirectional RNNs (Barber's slides, "Bidirectional RNNs"): a
// sequence of T symbols x_t drawn uniformly from K, one-hot, and at every position t with
// D ≤ t < T − D (0-based) the label is the pair of symbols D steps before and D steps after,
//
//	y_t = (x_{t−D}, x_{t+D}),   class K·x_{t−D} + x_{t+D} of K²;
//
// loss cross-entropy averaged over those T − 2D positions (the others are masked).
//
// The two halves are independent and uniform, so the cross-entropy of the best predictor is
// 2 ln K without memory (Baseline), ln K for a one-way RNN in either direction, which has read
// one of the two symbols but not the other (OneWay), and 0 for a bidirectional RNN, which has
// read both. The pair, rather than a function of it such as (x_{t−D} + x_{t+D}) mod K, keeps
// the task within reach of a bidirectional RNN's readout, which adds a term of each
// direction's state before the softmax: the pair's log-probability is such a sum, a sum
// modulo K is not (for K = 2 it is XOR).
type BothSides struct {
	T int // sequence length
	// Lag is D, the distance to each of the two symbols of a label; 0 means ⌊T/4⌋, so that half
	// of the positions are labelled.
	Lag int
	// Symbols is K; 0 means 4 (16 classes).
	Symbols int
}

// maxBothSidesSymbols bounds K so that the K² classes stay within MaxSymbols.
const maxBothSidesSymbols = 256

func (b BothSides) lag() int {
	if b.Lag == 0 {
		return b.T / 4
	}
	return b.Lag
}

func (b BothSides) symbols() int {
	if b.Symbols == 0 {
		return 4
	}
	return b.Symbols
}

// Validate checks 4 <= T <= MaxSteps, 1 <= D and 2D < T (a position has both symbols), and
// 2 <= K <= 256.
func (b BothSides) Validate() error {
	switch {
	case b.T < 4 || b.T > MaxSteps:
		return fmt.Errorf("tasks: BothSides.T = %d, want 4..%d", b.T, MaxSteps)
	case b.Lag < 0 || b.Lag > 0 && 2*b.Lag >= b.T:
		return fmt.Errorf("tasks: BothSides.Lag = %d, want 1..%d (2·Lag < T = %d), or 0 for T/4", b.Lag, (b.T-1)/2, b.T)
	case b.Symbols != 0 && (b.Symbols < 2 || b.Symbols > maxBothSidesSymbols):
		return fmt.Errorf("tasks: BothSides.Symbols = %d, want 2..%d, or 0 for 4", b.Symbols, maxBothSidesSymbols)
	}
	return nil
}

// SeqLen returns T.
func (b BothSides) SeqLen() int { return b.T }

// NumInputs returns K (the one-hot symbols).
func (b BothSides) NumInputs() int { return b.symbols() }

// NumOutputs returns K² (the pairs).
func (b BothSides) NumOutputs() int { k := b.symbols(); return k * k }

// Baseline returns 2 ln K, the loss of the best memoryless predictor: x_t tells nothing of the
// pair. NaN for an invalid configuration.
func (b BothSides) Baseline() float64 {
	if b.Validate() != nil {
		return math.NaN()
	}
	return 2 * math.Log(float64(b.symbols()))
}

// OneWay returns ln K, the loss of the best predictor that reads the sequence in one direction
// up to the labelled position (a one-way RNN, forward or backward): it knows one symbol of the
// pair and can only guess the other. Its accuracy is 1/K. NaN for an invalid configuration.
func (b BothSides) OneWay() float64 {
	if b.Validate() != nil {
		return math.NaN()
	}
	return math.Log(float64(b.symbols()))
}

// Sample draws batch sequences, each symbol rng.IntN(K), and labels them.
func (b BothSides) Sample(rng *rand.Rand, batch int) (*Batch, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if err := checkRNG("BothSides", rng); err != nil {
		return nil, err
	}
	K, D := b.symbols(), b.lag()
	out, err := newBatch("BothSides", batch, b.T, K, K*K)
	if err != nil {
		return nil, err
	}
	sym := make([]int, b.T)
	for s := range batch {
		row := s * b.T
		for t := range sym {
			sym[t] = rng.IntN(K)
			out.X[(row+t)*K+sym[t]] = 1
		}
		for t := D; t < b.T-D; t++ {
			out.Labels[row+t] = int32(K*sym[t-D] + sym[t+D])
			out.Mask[row+t] = 1
		}
	}
	return out, nil
}

// String returns e.g. "BothSides(T=20, D=5, K=4)".
func (b BothSides) String() string {
	return fmt.Sprintf("BothSides(T=%d, D=%d, K=%d)", b.T, b.lag(), b.symbols())
}
