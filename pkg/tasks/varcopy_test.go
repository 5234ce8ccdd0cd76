package tasks

import (
	"math"
	"strings"
	"testing"
)

func TestVariableCopyLayout(t *testing.T) {
	type layout struct{ in, tgt string }
	tests := []struct {
		name    string
		task    VariableCopy
		wantLen int
		allowed []layout // every marker position in [S, S+T-1] (0-based), written out by hand
	}{
		{"T=1 K=1 S=1", VariableCopy{T: 1, Symbols: 1, Recall: 1}, 3, []layout{
			{"aM.", "..a"},
		}},
		{"T=3 K=2 S=2", VariableCopy{T: 3, Symbols: 2, Recall: 2}, 7, []layout{
			{"abM....", "...ab.."},
			{"ab.M...", "....ab."},
			{"ab..M..", ".....ab"},
		}},
		{"T=4 K=3 S=1", VariableCopy{T: 4, Symbols: 3, Recall: 1}, 6, []layout{
			{"aM....", "..a..."},
			{"a.M...", "...a.."},
			{"a..M..", "....a."},
			{"a...M.", ".....a"},
		}},
		{"S>T", VariableCopy{T: 2, Symbols: 2, Recall: 3}, 8, []layout{
			{"abcM....", "....abc."},
			{"abc.M...", ".....abc"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const size = 400
			b, err := tc.task.Sample(newRNG(3), size)
			if err != nil {
				t.Fatal(err)
			}
			k := tc.task.K()
			if b.Len != tc.wantLen || b.NumIn != k+2 || b.NumClasses != k+1 {
				t.Fatalf("got Len, NumIn, NumClasses = %d, %d, %d, want %d, %d, %d",
					b.Len, b.NumIn, b.NumClasses, tc.wantLen, k+2, k+1)
			}
			if err := b.Check(); err != nil {
				t.Fatal(err)
			}
			counts := make([]int, len(tc.allowed))
			for i := range size {
				// The marker step selects the one allowed layout the sample must match.
				m := strings.IndexByte(symbolString(b.Symbols(i), k), 'M')
				j := m - tc.task.S()
				if j < 0 || j >= len(tc.allowed) {
					t.Fatalf("sample %d: marker at step %d, want %d..%d", i, m, tc.task.S(), tc.task.S()+tc.task.T-1)
				}
				if err := matchCopy(b, i, k, tc.allowed[j].in, tc.allowed[j].tgt); err != nil {
					t.Fatalf("sample %d: %v", i, err)
				}
				counts[j]++
			}
			for j, n := range counts {
				if n == 0 {
					t.Errorf("layout %q never sampled in %d samples, want every marker position", tc.allowed[j].in, size)
				}
			}
		})
	}
}

// symbolString renders input symbols: '.' blank, 'M' marker K+1, 'D' data.
func symbolString(syms []int32, k int) string {
	var sb strings.Builder
	for _, s := range syms {
		switch {
		case s == Blank:
			sb.WriteByte('.')
		case s == int32(k+1):
			sb.WriteByte('M')
		default:
			sb.WriteByte('D')
		}
	}
	return sb.String()
}

// TestVariableCopyRecallProb checks p_t against counting marker positions one by one, Σ p_t = S,
// and the baseline against the closed form for S <= T.
func TestVariableCopyRecallProb(t *testing.T) {
	tests := []VariableCopy{
		{T: 1, Recall: 1}, {T: 3, Recall: 2}, {T: 2, Recall: 5}, {T: 100}, {T: 37, Symbols: 3, Recall: 9},
	}
	for _, c := range tests {
		s, sum := c.S(), 0.0
		for step := -1; step <= c.SeqLen(); step++ {
			n := 0
			for m := s; m <= s+c.T-1; m++ {
				if step >= m+1 && step <= m+s {
					n++
				}
			}
			want := float64(n) / float64(c.T)
			if got := c.RecallProb(step); got != want {
				t.Errorf("%v.RecallProb(%d) = %g, want %g", c, step, got, want)
			}
			sum += want
		}
		if math.Abs(sum-float64(s)) > 1e-9 {
			t.Errorf("%v: Σ p_t = %g, want S = %d", c, sum, s)
		}
		if s > c.T {
			continue
		}
		h := float64(c.T-s+1) * binaryEntropy(float64(s)/float64(c.T))
		for n := 1; n < s; n++ {
			h += 2 * binaryEntropy(float64(n)/float64(c.T))
		}
		want := (float64(s)*math.Log(float64(c.K())) + h) / float64(c.SeqLen())
		if got := c.Baseline(); math.Abs(got-want) > 1e-12 {
			t.Errorf("%v.Baseline() = %.6f, want closed form %.6f", c, got, want)
		}
	}
	if got := VariableCopyPaper.Baseline(); math.Abs(got-0.448) > 5e-4 {
		t.Errorf("VariableCopyPaper.Baseline() = %.4f, want 0.448 (as documented)", got)
	}
}
