package tasks

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestBothSides: the labels are the pairs (x_{t−D}, x_{t+D}) on the labelled positions, the
// others are masked; the same seed gives the same batch; the baselines are 2 ln K and ln K.
func TestBothSides(t *testing.T) {
	for _, tc := range []struct {
		task    BothSides
		D, K, L int
	}{
		{BothSides{T: 20}, 5, 4, 10},
		{BothSides{T: 9, Lag: 2, Symbols: 3}, 2, 3, 5},
		{BothSides{T: 4}, 1, 4, 2},
	} {
		t.Run(tc.task.String(), func(t *testing.T) {
			b, err := tc.task.Sample(newRNG(1), 50)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Check(); err != nil {
				t.Fatal(err)
			}
			if b.NumIn != tc.K || b.NumClasses != tc.K*tc.K || tc.task.NumOutputs() != tc.K*tc.K {
				t.Fatalf("%d inputs, %d classes; want %d and %d", b.NumIn, b.NumClasses, tc.K, tc.K*tc.K)
			}
			for i := range b.Size {
				sym, labelled := b.Symbols(i), 0
				for s := range b.Len {
					if s < tc.D || s >= b.Len-tc.D {
						if b.MaskAt(i, s) != 0 || b.Label(i, s) != 0 {
							t.Fatalf("sequence %d, t = %d: mask %v, label %d; want 0, 0 (no pair)", i, s, b.MaskAt(i, s), b.Label(i, s))
						}
						continue
					}
					labelled++
					if want := int32(tc.K)*sym[s-tc.D] + sym[s+tc.D]; b.Label(i, s) != want || b.MaskAt(i, s) != 1 {
						t.Fatalf("sequence %d, t = %d: label %d (mask %v), want %d·x[%d] + x[%d] = %d", i, s, b.Label(i, s), b.MaskAt(i, s), tc.K, s-tc.D, s+tc.D, want)
					}
				}
				if labelled != tc.L {
					t.Fatalf("sequence %d: %d labelled positions, want T − 2D = %d", i, labelled, tc.L)
				}
			}
			again, _ := tc.task.Sample(newRNG(1), 50)
			other, _ := tc.task.Sample(newRNG(2), 50)
			if !reflect.DeepEqual(b, again) || reflect.DeepEqual(b, other) {
				t.Error("seed 1 twice: different batches, or seeds 1 and 2 the same")
			}
			lnK := math.Log(float64(tc.K))
			if got := tc.task.Baseline(); math.Abs(got-2*lnK) > 1e-12 {
				t.Errorf("Baseline = %v, want 2 ln K = %v", got, 2*lnK)
			}
			if got := tc.task.OneWay(); math.Abs(got-lnK) > 1e-12 {
				t.Errorf("OneWay = %v, want ln K = %v", got, lnK)
			}
		})
	}
}

// TestBothSidesOneWay: what a forward reader knows at t (x_0 … x_t) tells nothing of x_{t+D}:
// over many sequences, the later symbol of a pair is uniform whatever the earlier one (a
// chi-square test at 16 cells), so the best forward predictor is left with ln K, the entropy of
// one uniform symbol.
func TestBothSidesOneWay(t *testing.T) {
	task := BothSides{T: 12, Lag: 3}
	b, err := task.Sample(newRNG(3), 2000)
	if err != nil {
		t.Fatal(err)
	}
	var count [4][4]float64
	n := 0.0
	for i := range b.Size {
		for s := range b.Len {
			if b.MaskAt(i, s) == 1 {
				c := b.Label(i, s)
				count[c/4][c%4]++
				n++
			}
		}
	}
	chi2 := 0.0
	for a := range 4 {
		for c := range 4 {
			e := n / 16
			chi2 += (count[a][c] - e) * (count[a][c] - e) / e
		}
	}
	// 15 degrees of freedom: P(χ² > 37.7) = 0.001.
	if chi2 > 37.7 {
		t.Errorf("pairs not uniform: χ² = %.1f over 16 cells (%v)", chi2, count)
	}
}

func TestBothSidesValidate(t *testing.T) {
	for _, tc := range []struct {
		task BothSides
		want string
	}{
		{BothSides{T: 3}, "BothSides.T = 3, want 4.."},
		{BothSides{T: 10, Lag: 5}, "BothSides.Lag = 5, want 1..4"},
		{BothSides{T: 10, Lag: -1}, "BothSides.Lag = -1"},
		{BothSides{T: 10, Symbols: 1}, "BothSides.Symbols = 1, want 2..256"},
		{BothSides{T: 10, Symbols: 257}, "BothSides.Symbols = 257"},
	} {
		if err := tc.task.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Validate() = %v, want an error containing %q", tc.task, err, tc.want)
		}
		if _, err := tc.task.Sample(newRNG(1), 2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Sample error %v, want one containing %q", tc.task, err, tc.want)
		}
		if !math.IsNaN(tc.task.Baseline()) || !math.IsNaN(tc.task.OneWay()) {
			t.Errorf("%+v: baselines %v, %v; want NaN", tc.task, tc.task.Baseline(), tc.task.OneWay())
		}
	}
}
