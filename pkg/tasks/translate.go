package tasks

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Translate is a synthetic translation task for sequence-to-sequence models (Barber's slides,
// "Sequence to Sequence models", after Sutskever et al. 2014): a source string of M digits
// d_1 … d_M, M uniform in 1..N and each digit uniform in 0..K−1, is to be written out as the
// target string, the same digits in order (Mirror: in reverse order), then an end symbol.
//
// One sequence holds both halves, 2(N + 1) steps: the source, left-padded to N steps, and the
// end symbol EOS (steps 0 … N), then the target side (steps N + 1 … 2N + 1), whose inputs are
// the symbol GO and then the target digits so far, each the input of the step after it ("one
// can also add inputs to recursively generate the translation, so that y_{t−1} is an
// additional input to h′_t"; in training and evaluation alike, the true ones: teacher
// forcing). The labels on the target side are y_1 … y_M, EOS, the steps after them masked.
// Inputs are one-hot over K + 3 symbols (the digits, PAD, EOS, GO), plus a last channel, the
// phase: 0 on the source side, 1 on the target side (package seq2seq reads it). Outputs are
// K + 1 classes, the digits and EOS (class K).
//
// Reverse feeds the source digits in reverse order, d_M … d_1, as Barber's slides advise ("in
// practice it is also useful to reverse the input sequence order"): in order, the first target
// digit was read M steps before it is written; reversed, just before.
//
// Loss: cross-entropy averaged over the M + 1 labelled steps of each sequence. Baseline is the
// loss of the best predictor that does not read the source: it knows the step, and so when the
// string may end (see Baseline).
type Translate struct {
	N       int  // the longest string, in digits
	Symbols int  // K, digits 0 … K−1; 0 means 10
	Mirror  bool // the target is the source in reverse order
	Reverse bool // the source is fed in reverse order
}

func (tr Translate) symbols() int {
	if tr.Symbols == 0 {
		return 10
	}
	return tr.Symbols
}

// The special symbols after the K digits, and the classes.
func (tr Translate) pad() int { return tr.symbols() }
func (tr Translate) eos() int { return tr.symbols() + 1 }
func (tr Translate) gop() int { return tr.symbols() + 2 }

// Validate checks 1 <= N <= MaxSteps/2 − 1 and 2 <= K <= MaxSymbols.
func (tr Translate) Validate() error {
	switch {
	case tr.N < 1 || tr.N > MaxSteps/2-1:
		return fmt.Errorf("tasks: Translate.N = %d, want 1..%d", tr.N, MaxSteps/2-1)
	case tr.Symbols != 0 && (tr.Symbols < 2 || tr.Symbols > MaxSymbols):
		return fmt.Errorf("tasks: Translate.Symbols = %d, want 2..%d, or 0 for 10", tr.Symbols, MaxSymbols)
	}
	return nil
}

// SeqLen returns 2(N + 1).
func (tr Translate) SeqLen() int { return 2 * (tr.N + 1) }

// NumInputs returns K + 4: the one-hot digits, PAD, EOS and GO, and the phase.
func (tr Translate) NumInputs() int { return tr.symbols() + 4 }

// NumOutputs returns K + 1: the digits and EOS.
func (tr Translate) NumOutputs() int { return tr.symbols() + 1 }

// Baseline returns the mean cross-entropy of the best predictor that does not read the source.
// At target step j (0-based) of a string of M ≥ j digits the label is EOS when M = j, with
// probability e_j = 1/(N − j + 1) for M uniform in j..N (e_0 = 0: M ≥ 1), and otherwise a
// uniform digit, so the best prediction (EOS with e_j, each digit with (1 − e_j)/K) costs
//
//	H_j = −e_j ln e_j − (1 − e_j) ln((1 − e_j)/K);
//
// averaged over the labelled steps, Σ_j P(M ≥ j) H_j / E[M + 1] (ln K / 2 at N = 1: one digit,
// then a sure EOS). NaN for an
// invalid configuration.
func (tr Translate) Baseline() float64 {
	if tr.Validate() != nil {
		return math.NaN()
	}
	N, K := float64(tr.N), float64(tr.symbols())
	sum := math.Log(K) // j = 0: P(M ≥ 0) = 1, e_0 = 0
	for j := 1; j <= tr.N; j++ {
		e := 1 / (N - float64(j) + 1)
		h := -e * math.Log(e)
		if e < 1 {
			h -= (1 - e) * math.Log((1-e)/K)
		}
		sum += (N - float64(j) + 1) / N * h // P(M ≥ j) = (N − j + 1)/N
	}
	return sum / ((N+1)/2 + 1) // E[M + 1] = (N + 1)/2 + 1
}

// Sample draws batch strings and lays them out as the type's doc says.
func (tr Translate) Sample(rng *rand.Rand, batch int) (*Batch, error) {
	if err := tr.Validate(); err != nil {
		return nil, err
	}
	if err := checkRNG("Translate", rng); err != nil {
		return nil, err
	}
	N, K, L, in := tr.N, tr.symbols(), tr.SeqLen(), tr.NumInputs()
	b, err := newBatch("Translate", batch, L, in, K+1)
	if err != nil {
		return nil, err
	}
	digits := make([]int, N)
	for s := range batch {
		row := s * L
		put := func(t, sym int) {
			b.X[(row+t)*in+sym] = 1
			if t > N {
				b.X[(row+t)*in+in-1] = 1 // the phase
			}
		}
		M := 1 + rng.IntN(N)
		for i := range M {
			digits[i] = rng.IntN(K)
		}
		target := func(i int) int { // y_{i+1}
			if tr.Mirror {
				return digits[M-1-i]
			}
			return digits[i]
		}
		for t := range N - M {
			put(t, tr.pad())
		}
		for i := range M {
			d := digits[i]
			if tr.Reverse {
				d = digits[M-1-i]
			}
			put(N-M+i, d)
		}
		put(N, tr.eos())
		for j := range N + 1 { // target step j at t = N + 1 + j
			t := N + 1 + j
			switch {
			case j == 0:
				put(t, tr.gop())
			case j <= M:
				put(t, target(j-1))
			default:
				put(t, tr.pad())
			}
			switch {
			case j < M:
				b.Labels[row+t] = int32(target(j))
			case j == M:
				b.Labels[row+t] = int32(K)
			default:
				continue // masked
			}
			b.Mask[row+t] = 1
		}
	}
	return b, nil
}

// String returns e.g. "Translate(N=8, K=10, reversed input)".
func (tr Translate) String() string {
	s := fmt.Sprintf("Translate(N=%d, K=%d", tr.N, tr.symbols())
	if tr.Mirror {
		s += ", mirrored"
	}
	if tr.Reverse {
		s += ", reversed input"
	}
	return s + ")"
}
