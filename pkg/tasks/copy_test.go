package tasks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

// letters returns the first n pattern letters "abc…".
func letters(n int) string { return "abcdefghijklmnopqrstuvwxyz"[:n] }

// matchCopy checks sample i of a copy batch against a pattern of its inputs and targets:
// '.' is the blank, 'M' the marker K+1, and a letter a data symbol in 1..K; a letter's first
// occurrence in the input binds it and every other occurrence must hold the same symbol. It also
// checks that the inputs are exactly one-hot and that the mask is 1 at every step.
func matchCopy(b *Batch, i, k int, in, tgt string) error {
	if len(in) != b.Len || len(tgt) != b.Len {
		return fmt.Errorf("pattern lengths %d, %d, want Len = %d", len(in), len(tgt), b.Len)
	}
	bind := map[byte]int32{}
	match := func(what string, t int, p byte, got int32) error {
		switch {
		case p == '.' && got != Blank:
			return fmt.Errorf("%s[%d] = %d, want blank", what, t, got)
		case p == 'M' && got != int32(k+1):
			return fmt.Errorf("%s[%d] = %d, want marker %d", what, t, got, k+1)
		case p >= 'a' && p <= 'z':
			if got < 1 || got > int32(k) {
				return fmt.Errorf("%s[%d] = %d, want data symbol %q in 1..%d", what, t, got, p, k)
			}
			if want, ok := bind[p]; ok && got != want {
				return fmt.Errorf("%s[%d] = %d, want %d (symbol %q)", what, t, got, want, p)
			}
			bind[p] = got
		}
		return nil
	}
	syms := b.Symbols(i)
	for t := range b.Len {
		sum := float32(0)
		for c := range b.NumIn {
			v := b.At(i, t, c)
			if v != 0 && v != 1 {
				return fmt.Errorf("X[%d][%d][%d] = %g, want 0 or 1 (one-hot)", i, t, c, v)
			}
			sum += v
		}
		if sum != 1 {
			return fmt.Errorf("X[%d][%d] sums to %g, want 1 (one-hot)", i, t, sum)
		}
		if err := match("input", t, in[t], syms[t]); err != nil {
			return err
		}
	}
	for t := range b.Len {
		if err := match("target", t, tgt[t], b.Label(i, t)); err != nil {
			return err
		}
		if got := b.MaskAt(i, t); got != 1 {
			return fmt.Errorf("mask[%d][%d] = %g, want 1", i, t, got)
		}
	}
	return nil
}

func TestCopyLayout(t *testing.T) {
	dots := func(n int) string { return strings.Repeat(".", n) }
	tests := []struct {
		name    string
		task    Copy
		wantLen int
		in, tgt string
	}{
		{"T=1 K=1 S=1", Copy{T: 1, Symbols: 1, Recall: 1}, 3, "aM.", "..a"},
		{"T=3 K=2 S=2", Copy{T: 3, Symbols: 2, Recall: 2}, 7, "ab..M..", ".....ab"},
		{"S>T", Copy{T: 2, Symbols: 3, Recall: 4}, 10, "abcd.M....", "......abcd"},
		{"defaults K=8 S=10", Copy{T: 5}, 25, letters(10) + "....M" + dots(10), dots(15) + letters(10)},
		{"CopyPaper", CopyPaper, 120, letters(10) + dots(99) + "M" + dots(10), dots(110) + letters(10)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const size = 50
			b, err := tc.task.Sample(newRNG(1), size)
			if err != nil {
				t.Fatal(err)
			}
			k := tc.task.K()
			if b.Size != size || b.Len != tc.wantLen || b.NumIn != k+2 || b.NumClasses != k+1 || b.Y != nil {
				t.Fatalf("got Size, Len, NumIn, NumClasses = %d, %d, %d, %d (Y nil %v), want %d, %d, %d, %d (Y nil)",
					b.Size, b.Len, b.NumIn, b.NumClasses, b.Y == nil, size, tc.wantLen, k+2, k+1)
			}
			if got := tc.task.SeqLen(); got != tc.wantLen {
				t.Errorf("SeqLen() = %d, want %d", got, tc.wantLen)
			}
			if err := b.Check(); err != nil {
				t.Fatal(err)
			}
			seen := map[int32]bool{}
			for i := range size {
				if err := matchCopy(b, i, k, tc.in, tc.tgt); err != nil {
					t.Fatalf("sample %d: %v", i, err)
				}
				for _, s := range b.Symbols(i)[:tc.task.S()] {
					seen[s] = true
				}
			}
			if len(seen) != k {
				t.Errorf("data symbols seen %v, want all of 1..%d", seen, k)
			}
		})
	}
}

// TestCopyBaselinePaper checks the spec's baseline values 10·ln 8/(T+20), to the printed digits.
func TestCopyBaselinePaper(t *testing.T) {
	tests := []struct {
		T         int
		want, tol float64
	}{
		{100, 0.173, 5e-4},
		{200, 0.0945, 5e-5},
		{300, 0.0650, 5e-5},
		{500, 0.0400, 5e-5},
		{1000, 0.0204, 5e-5},
	}
	baselines := []struct {
		name string
		f    func(T int) float64
	}{
		{"Copy{T}", func(T int) float64 { return Copy{T: T}.Baseline() }},
		{"CopyPaper with T", func(T int) float64 { c := CopyPaper; c.T = T; return c.Baseline() }},
		{"VariableCopy{T}.RecallBaseline", func(T int) float64 { return VariableCopy{T: T}.RecallBaseline() }},
	}
	for _, tc := range tests {
		for _, bl := range baselines {
			if got := bl.f(tc.T); math.Abs(got-tc.want) > tc.tol {
				t.Errorf("%s at T = %d: got %.5f, want %.4g ± %g", bl.name, tc.T, got, tc.want, tc.tol)
			}
		}
	}
}

// marginalLoss is the empirical loss of the memoryless predictor fitted to the batch itself: at each
// step t it predicts the frequency of each class at t over the batch (or, for regression, predicts
// the constant c), and the loss is averaged with the mask weights.
func marginalLoss(b *Batch) float64 {
	var sum, weight float64
	if b.Labels == nil {
		for i := range b.Size {
			d := float64(b.Y[i]) - 1
			sum += d * d
		}
		return sum / float64(b.Size)
	}
	counts := make([]int, b.NumClasses)
	for t := range b.Len {
		clear(counts)
		n := 0
		for i := range b.Size {
			if b.MaskAt(i, t) != 0 {
				counts[b.Label(i, t)]++
				n++
			}
		}
		for i := range b.Size {
			if m := float64(b.MaskAt(i, t)); m != 0 {
				sum -= m * math.Log(float64(counts[b.Label(i, t)])/float64(n))
				weight += m
			}
		}
	}
	return sum / weight
}

// TestMemorylessBaseline checks Baseline() against the empirical loss of the memoryless predictor
// over 10k samples (100k for adding, whose squared errors are noisier), within 2%.
func TestMemorylessBaseline(t *testing.T) {
	tests := []struct {
		task Task
		size int
	}{
		{CopyPaper, 10000},
		{Copy{T: 7, Symbols: 3, Recall: 4}, 10000},
		{VariableCopyPaper, 10000},
		{VariableCopy{T: 5, Symbols: 4, Recall: 8}, 10000},
		{VariableCopy{T: 300, Symbols: 2, Recall: 3}, 10000},
		{Adding{T: 10}, 100000},
	}
	for _, tc := range tests {
		t.Run(tc.task.String(), func(t *testing.T) {
			b, err := tc.task.Sample(newRNG(7), tc.size)
			if err != nil {
				t.Fatal(err)
			}
			got, want := marginalLoss(b), tc.task.Baseline()
			t.Logf("empirical %.5f, Baseline() %.5f", got, want)
			if math.Abs(got-want) > 0.02*want {
				t.Errorf("empirical memoryless loss = %.5f, want Baseline() = %.5f ± 2%%", got, want)
			}
		})
	}
}
