package tasks

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The pathological long-time-lag problems of Hochreiter & Schmidhuber 1997 (§5.4–5.6), which
// Martens & Sutskever 2011 learned with Hessian-free optimisation where gradient descent
// failed, beside the adding problem (Adding, the same layout): the input carries values and
// two marked steps, one in each half of the sequence, and the target, read at the last step,
// depends on the two marked values only.

// Multiplication is Hochreiter & Schmidhuber's multiplication problem (§5.5): Adding's layout
// with the target y = x_i · x_j, x ~ U[0, 1); loss MSE.
type Multiplication struct {
	T int // sequence length
}

// Validate checks 2 <= T <= MaxSteps.
func (m Multiplication) Validate() error { return validatePair("Multiplication", m.T) }

// SeqLen returns T.
func (m Multiplication) SeqLen() int { return m.T }

// NumInputs returns 2 (value, marker).
func (m Multiplication) NumInputs() int { return 2 }

// NumOutputs returns 1 (a regression target).
func (m Multiplication) NumOutputs() int { return 1 }

// Baseline returns the MSE of the best constant predictor, ŷ = E[x_i x_j] = 1/4: with
// E[(x_i x_j)²] = E[x²]² = 1/9, Var(x_i x_j) = 1/9 − 1/16 = 7/144 ≈ 0.0486.
func (m Multiplication) Baseline() float64 { return 7.0 / 144 }

// Sample draws batch sequences as Adding does, with the product as the target.
func (m Multiplication) Sample(rng *rand.Rand, batch int) (*Batch, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return samplePair("Multiplication", m.T, rng, batch, 0, (*rand.Rand).Float32, func(xi, xj float32) float64 { return float64(xi) * float64(xj) })
}

// String returns e.g. "Multiplication(T=100)".
func (m Multiplication) String() string { return fmt.Sprintf("Multiplication(T=%d)", m.T) }

// XOR is the XOR problem of Martens & Sutskever 2011: Adding's layout with binary values, each
// step's 0 or 1 with probability 1/2, and the class x_i XOR x_j (two classes) at the last step;
// loss cross-entropy.
type XOR struct {
	T int // sequence length
}

// Validate checks 2 <= T <= MaxSteps.
func (x XOR) Validate() error { return validatePair("XOR", x.T) }

// SeqLen returns T.
func (x XOR) SeqLen() int { return x.T }

// NumInputs returns 2 (value, marker).
func (x XOR) NumInputs() int { return 2 }

// NumOutputs returns 2 (the classes 0 and 1).
func (x XOR) NumOutputs() int { return 2 }

// Baseline returns ln 2: both classes are equally likely whatever a memoryless predictor sees.
func (x XOR) Baseline() float64 { return math.Ln2 }

// Sample draws batch sequences as Adding does, with values rng.IntN(2) and the class
// x_i XOR x_j.
func (x XOR) Sample(rng *rand.Rand, batch int) (*Batch, error) {
	if err := x.Validate(); err != nil {
		return nil, err
	}
	bit := func(r *rand.Rand) float32 { return float32(r.IntN(2)) }
	return samplePair("XOR", x.T, rng, batch, 2, bit, func(xi, xj float32) float64 {
		if xi != xj {
			return 1
		}
		return 0
	})
}

// String returns e.g. "XOR(T=100)".
func (x XOR) String() string { return fmt.Sprintf("XOR(T=%d)", x.T) }

// TemporalOrder is Hochreiter & Schmidhuber's temporal order problem (§5.6, experiment 6a):
// a sequence of T symbols, one-hot over {a, b, c, d, X, Y}, every one a distractor drawn from
// {a, b, c, d} except two, each X or Y with probability 1/2, at t₁ ∈ [⌊T/10⌋, ⌊2T/10⌋) and
// t₂ ∈ [⌊5T/10⌋, ⌊6T/10⌋); the class of the pair (XX, XY, YX, YY: 0 to 3) is the target at the
// last step; loss cross-entropy. (The paper's sequences also start with B and end with E, which
// carry nothing; they are left out.)
type TemporalOrder struct {
	T int // sequence length
}

// orderSymbols are the alphabet: four distractors, then X and Y.
const orderSymbols = 6

// Validate checks 10 <= T <= MaxSteps, so that each window holds a step.
func (o TemporalOrder) Validate() error {
	if o.T < 10 || o.T > MaxSteps {
		return fmt.Errorf("tasks: TemporalOrder.T = %d, want 10..%d (each of the two windows, a tenth of the sequence, holds a step)", o.T, MaxSteps)
	}
	return nil
}

// SeqLen returns T.
func (o TemporalOrder) SeqLen() int { return o.T }

// NumInputs returns 6 (the one-hot symbols).
func (o TemporalOrder) NumInputs() int { return orderSymbols }

// NumOutputs returns 4 (XX, XY, YX, YY).
func (o TemporalOrder) NumOutputs() int { return 4 }

// Baseline returns ln 4: the four classes are equally likely whatever a memoryless predictor sees.
func (o TemporalOrder) Baseline() float64 { return math.Log(4) }

// Sample draws batch sequences: per sequence T distractors rng.IntN(4), then t₁, t₂ uniform in
// their windows and the two symbols rng.IntN(2) (0 for X, 1 for Y); the class is 2·s₁ + s₂.
func (o TemporalOrder) Sample(rng *rand.Rand, batch int) (*Batch, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := checkRNG("TemporalOrder", rng); err != nil {
		return nil, err
	}
	b, err := newBatch("TemporalOrder", batch, o.T, orderSymbols, 4)
	if err != nil {
		return nil, err
	}
	window := func(lo, hi int) int { return lo + rng.IntN(hi-lo) }
	for s := range batch {
		row := s * o.T
		sym := make([]int, o.T)
		for t := range sym {
			sym[t] = rng.IntN(4)
		}
		t1 := window(o.T/10, 2*o.T/10)
		t2 := window(5*o.T/10, 6*o.T/10)
		s1, s2 := rng.IntN(2), rng.IntN(2)
		sym[t1], sym[t2] = 4+s1, 4+s2
		for t, k := range sym {
			b.X[(row+t)*orderSymbols+k] = 1
		}
		b.Labels[row+o.T-1] = int32(2*s1 + s2)
		b.Mask[row+o.T-1] = 1
	}
	return b, nil
}

// String returns e.g. "TemporalOrder(T=100)".
func (o TemporalOrder) String() string { return fmt.Sprintf("TemporalOrder(T=%d)", o.T) }
