package tasks

import (
	"fmt"
	"math/rand/v2"
)

// Adding is the adding problem (Arjovsky et al. 2016, §4.2; Henaff et al. 2016, §3.2): two input
// channels over L = T steps (0-based),
//
//	channel 0 (value):  x_t ~ U[0, 1) at every step
//	channel 1 (marker): 1 at exactly two steps i ∈ [0, ⌊T/2⌋) and j ∈ [⌊T/2⌋, T), each uniform; 0 elsewhere
//	target: y = x_i + x_j, compared with the output at the last step t = T-1 (Mask 1 there only); loss MSE
//
// For odd T the first half has ⌊T/2⌋ steps and the second ⌈T/2⌉, so every step can be marked.
// (Arjovsky's code draws j from [⌊T/2⌋, 2⌊T/2⌋), which for odd T never marks the last step; the two
// agree for even T, which covers every T in both papers.) T has no default and must be >= 2.
type Adding struct {
	T int // sequence length
}

// Validate checks 2 <= T <= MaxSteps (each half needs at least one step).
func (a Adding) Validate() error { return validatePair("Adding", a.T) }

// SeqLen returns T.
func (a Adding) SeqLen() int { return a.T }

// NumInputs returns 2 (value, marker).
func (a Adding) NumInputs() int { return 2 }

// NumOutputs returns 1 (a regression target).
func (a Adding) NumOutputs() int { return 1 }

// Baseline returns the MSE of the best memoryless (constant) predictor, ŷ = E[y] = 1 (Arjovsky et
// al. 2016, §4.2): with x_i, x_j independent U[0, 1],
//
//	baseline = Var(x_i + x_j) = 2 · 1/12 = 1/6 ≈ 0.167
//
// independent of T.
func (a Adding) Baseline() float64 { return 1.0 / 6 }

// Sample draws batch sequences: per sequence T values rng.Float32(), then i = rng.IntN(⌊T/2⌋) and
// j = ⌊T/2⌋ + rng.IntN(⌈T/2⌉) (samplePair). Y is computed in float64 from the stored float32 values.
// It returns the error of Validate, or an error if rng is nil or batch is out of range.
func (a Adding) Sample(rng *rand.Rand, batch int) (*Batch, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return samplePair("Adding", a.T, rng, batch, 0, (*rand.Rand).Float32, func(xi, xj float32) float64 { return float64(xi) + float64(xj) })
}

// String returns e.g. "Adding(T=100)".
func (a Adding) String() string { return fmt.Sprintf("Adding(T=%d)", a.T) }

// validatePair checks 2 <= T <= MaxSteps for the tasks of two marked steps.
func validatePair(name string, T int) error {
	if T < 2 || T > MaxSteps {
		return fmt.Errorf("tasks: %s.T = %d, want 2..%d (one marker in each half of the sequence)", name, T, MaxSteps)
	}
	return nil
}

// samplePair draws batch sequences of the tasks of two marked steps (adding, multiplication,
// XOR): per sequence T values value(rng) on channel 0, then i = rng.IntN(⌊T/2⌋) and
// j = ⌊T/2⌋ + rng.IntN(⌈T/2⌉) marked on channel 1, and the target target(x_i, x_j) at the last
// step: Y for a regression (classes 0), the class Labels otherwise.
func samplePair(name string, T int, rng *rand.Rand, batch, classes int, value func(*rand.Rand) float32, target func(xi, xj float32) float64) (*Batch, error) {
	if err := checkRNG(name, rng); err != nil {
		return nil, err
	}
	b, err := newBatch(name, batch, T, 2, classes)
	if err != nil {
		return nil, err
	}
	half := T / 2
	for s := range batch {
		row := s * T
		for t := range T {
			b.X[(row+t)*2] = value(rng)
		}
		i := rng.IntN(half)
		j := half + rng.IntN(T-half)
		b.X[(row+i)*2+1] = 1
		b.X[(row+j)*2+1] = 1
		y := target(b.X[(row+i)*2], b.X[(row+j)*2])
		if classes > 0 {
			b.Labels[row+T-1] = int32(y)
		} else {
			b.Y[s] = float32(y)
		}
		b.Mask[row+T-1] = 1
	}
	return b, nil
}
