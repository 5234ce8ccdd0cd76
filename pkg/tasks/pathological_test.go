package tasks

import (
	"math"
	"strings"
	"testing"
)

// TestPairTargets: multiplication's and XOR's targets are the product and the XOR of the two
// marked values (markers as Adding lays them out), XOR's values are bits, and the empirical
// memoryless losses match the baselines.
func TestPairTargets(t *testing.T) {
	const n = 20000
	const T = 11
	mul, err := Multiplication{T: T}.Sample(newRNG(3), n)
	if err != nil {
		t.Fatal(err)
	}
	xor, err := XOR{T: T}.Sample(newRNG(3), n)
	if err != nil {
		t.Fatal(err)
	}
	var sq float64
	ones := 0
	for s := range n {
		for _, b := range []*Batch{mul, xor} {
			if err := b.Check(); err != nil {
				t.Fatal(err)
			}
		}
		var mi, xi []float32
		for step := range T {
			if mul.At(s, step, 1) == 1 {
				mi = append(mi, mul.At(s, step, 0))
			}
			if xor.At(s, step, 1) == 1 {
				xi = append(xi, xor.At(s, step, 0))
			}
			if v := xor.At(s, step, 0); v != 0 && v != 1 {
				t.Fatalf("XOR sample %d step %d: value %g, want a bit", s, step, v)
			}
		}
		if len(mi) != 2 || len(xi) != 2 {
			t.Fatalf("sample %d: %d and %d marked steps, want 2", s, len(mi), len(xi))
		}
		if want := float32(float64(mi[0]) * float64(mi[1])); mul.Y[s] != want {
			t.Fatalf("multiplication sample %d: Y %g, want %g", s, mul.Y[s], want)
		}
		want := int32(0)
		if xi[0] != xi[1] {
			want = 1
		}
		if got := xor.Labels[s*T+T-1]; got != want {
			t.Fatalf("XOR sample %d: class %d, want %d", s, got, want)
		}
		ones += int(want)
		d := float64(mul.Y[s]) - 0.25
		sq += d * d
	}
	if mse := sq / n; math.Abs(mse-Multiplication{}.Baseline()) > 0.002 {
		t.Errorf("the constant 1/4's MSE on %d sequences %.4f, want the baseline %.4f", n, mse, Multiplication{}.Baseline())
	}
	if p := float64(ones) / n; math.Abs(p-0.5) > 0.02 {
		t.Errorf("XOR class 1 in %.3f of the sequences, want 1/2", p)
	}
}

// TestTemporalOrder: every sequence is one-hot with exactly one X or Y in each window and
// distractors elsewhere, the class is 2·s₁ + s₂, and the four classes are equally likely.
func TestTemporalOrder(t *testing.T) {
	const n, T = 8000, 40
	b, err := TemporalOrder{T: T}.Sample(newRNG(5), n)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
	counts := make([]int, 4)
	for s := range n {
		var marks []int // (step, 0 for X or 1 for Y)
		var syms []int
		for step := range T {
			hot := -1
			for k := range orderSymbols {
				switch v := b.At(s, step, k); v {
				case 1:
					if hot >= 0 {
						t.Fatalf("sample %d step %d: two symbols", s, step)
					}
					hot = k
				case 0:
				default:
					t.Fatalf("sample %d step %d: input %g, want one-hot", s, step, v)
				}
			}
			if hot < 0 {
				t.Fatalf("sample %d step %d: no symbol", s, step)
			}
			if hot >= 4 {
				marks = append(marks, step)
				syms = append(syms, hot-4)
			}
		}
		if len(marks) != 2 || marks[0] < 4 || marks[0] >= 8 || marks[1] < 20 || marks[1] >= 24 {
			t.Fatalf("sample %d: X/Y at steps %v, want one in [4, 8) and one in [20, 24)", s, marks)
		}
		class := b.Labels[s*T+T-1]
		if want := int32(2*syms[0] + syms[1]); class != want {
			t.Fatalf("sample %d: class %d, want %d", s, class, want)
		}
		counts[class]++
	}
	for c, k := range counts {
		if math.Abs(float64(k)/n-0.25) > 0.02 {
			t.Errorf("class %d in %d of %d sequences, want a quarter", c, k, n)
		}
	}
}

func TestPathologicalValidate(t *testing.T) {
	for _, tc := range []struct {
		task Task
		want string
	}{
		{Multiplication{T: 1}, "Multiplication.T = 1, want 2.."},
		{XOR{T: 0}, "XOR.T = 0, want 2.."},
		{TemporalOrder{T: 9}, "TemporalOrder.T = 9, want 10.."},
	} {
		if err := tc.task.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v.Validate() = %v, want %q", tc.task, err, tc.want)
		}
		if _, err := tc.task.Sample(newRNG(1), 2); err == nil {
			t.Errorf("%v.Sample: no error", tc.task)
		}
	}
}
