package tasks

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestTranslateLayout reads the strings back from a batch: the source (in order or reversed)
// before EOS, GO and the target digits so far on the target side, the labels the target (in
// order or mirrored) then EOS, the phase channel 1 on the target side only.
func TestTranslateLayout(t *testing.T) {
	for _, task := range []Translate{{N: 5}, {N: 5, Reverse: true}, {N: 4, Symbols: 3, Mirror: true}, {N: 1, Mirror: true, Reverse: true}} {
		t.Run(task.String(), func(t *testing.T) {
			N, K := task.N, task.symbols()
			b, err := task.Sample(newRNG(1), 40)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Check(); err != nil {
				t.Fatal(err)
			}
			if b.Len != 2*(N+1) || b.NumIn != K+4 || b.NumClasses != K+1 {
				t.Fatalf("Len %d, NumIn %d, classes %d; want %d, %d, %d", b.Len, b.NumIn, b.NumClasses, 2*(N+1), K+4, K+1)
			}
			lengths := map[int]bool{}
			for i := range b.Size {
				sym := make([]int, b.Len)
				for s := range b.Len {
					sym[s], _ = onehot(b, i, s, K+3)
					if phase := b.At(i, s, K+3); phase != map[bool]float32{true: 1, false: 0}[s > N] {
						t.Fatalf("sequence %d, t = %d: phase %v", i, s, phase)
					}
				}
				var source []int
				for _, s := range sym[:N] {
					if s != K { // PAD
						source = append(source, s)
					} else if len(source) > 0 {
						t.Fatalf("sequence %d: a pad after the digits %v", i, sym[:N])
					}
				}
				M := len(source)
				lengths[M] = true
				if M < 1 || sym[N] != K+1 || sym[N+1] != K+2 {
					t.Fatalf("sequence %d: %v: want 1..N digits, EOS at %d, GO at %d", i, sym, N, N+1)
				}
				digits := slices.Clone(source)
				if task.Reverse {
					slices.Reverse(digits)
				}
				target := slices.Clone(digits)
				if task.Mirror {
					slices.Reverse(target)
				}
				for j := range N + 1 {
					s := N + 1 + j
					wantIn, wantLabel, wantMask := K, int32(0), float32(0) // PAD, masked
					if j > 0 && j <= M {
						wantIn = target[j-1]
					}
					if j == 0 {
						wantIn = K + 2
					}
					if j < M {
						wantLabel, wantMask = int32(target[j]), 1
					} else if j == M {
						wantLabel, wantMask = int32(K), 1
					}
					if (j > 0 && sym[s] != wantIn) || b.Label(i, s) != wantLabel || b.MaskAt(i, s) != wantMask {
						t.Fatalf("sequence %d (source %v, target %v), target step %d: input %d, label %d, mask %v; want %d, %d, %v",
							i, source, target, j, sym[s], b.Label(i, s), b.MaskAt(i, s), wantIn, wantLabel, wantMask)
					}
				}
				for s := range N + 1 {
					if b.MaskAt(i, s) != 0 {
						t.Fatalf("sequence %d: mask on the source side at t = %d", i, s)
					}
				}
			}
			if N > 1 && len(lengths) < 2 {
				t.Errorf("one string length in 40 sequences: %v", lengths)
			}
		})
	}
}

// onehot returns the symbol of sample i at step s among the first n channels, and whether
// exactly one is set.
func onehot(b *Batch, i, s, n int) (int, bool) {
	sym, set := -1, 0
	for k := range n {
		if b.At(i, s, k) == 1 {
			sym, set = k, set+1
		}
	}
	return sym, set == 1
}

// TestTranslateBaseline: the predictor that knows the target step but not the source (EOS with
// probability 1/(N − j + 1), each digit with the rest over K) has, on sampled batches, the loss
// Baseline computes, within Monte Carlo error; at N = 1 it is ln K.
func TestTranslateBaseline(t *testing.T) {
	for _, task := range []Translate{{N: 1}, {N: 3, Symbols: 4}, {N: 8}} {
		N, K := task.N, float64(task.symbols())
		b, err := task.Sample(newRNG(7), 20000)
		if err != nil {
			t.Fatal(err)
		}
		var sum, n, sq float64
		for i := range b.Size {
			for j := range N + 1 {
				s := N + 1 + j
				if b.MaskAt(i, s) == 0 {
					continue
				}
				e := 0.0
				if j > 0 {
					e = 1 / float64(N-j+1)
				}
				q := (1 - e) / K
				if int(b.Label(i, s)) == int(K) {
					q = e
				}
				l := -math.Log(q)
				sum, sq, n = sum+l, sq+l*l, n+1
			}
		}
		got, sd := sum/n, math.Sqrt((sq/n-(sum/n)*(sum/n))/n)
		if want := task.Baseline(); math.Abs(got-want) > 5*sd+1e-12 {
			t.Errorf("%s: the source-blind predictor's loss %.4f ± %.4f, Baseline %.4f", task, got, sd, want)
		}
	}
	if got := (Translate{N: 1}).Baseline(); math.Abs(got-math.Log(10)/2) > 1e-12 {
		t.Errorf("N = 1: Baseline %v, want ln 10 / 2 (one digit, then a sure EOS)", got)
	}
}

func TestTranslateValidate(t *testing.T) {
	for _, tc := range []struct {
		task Translate
		want string
	}{
		{Translate{}, "Translate.N = 0, want 1.."},
		{Translate{N: MaxSteps}, "Translate.N = 16777216"},
		{Translate{N: 3, Symbols: 1}, "Translate.Symbols = 1, want 2..65536"},
	} {
		if err := tc.task.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Validate() = %v, want an error containing %q", tc.task, err, tc.want)
		}
		if _, err := tc.task.Sample(newRNG(1), 2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Sample error %v", tc.task, err)
		}
		if !math.IsNaN(tc.task.Baseline()) {
			t.Errorf("%+v: Baseline %v, want NaN", tc.task, tc.task.Baseline())
		}
	}
}
