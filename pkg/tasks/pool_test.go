package tasks

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPool: a Pool's batches hold only sequences of its fixed set (sequence i is the same in
// every draw and every Pool with the same Seed), picked anew per batch; HeldOut gives fresh
// sequences; bad settings are errors naming them.
func TestPool(t *testing.T) {
	for _, task := range []Task{Copy{T: 5}, Adding{T: 6}} {
		p := Pool{Task: task, N: 4, Seed: 7}
		set := map[string]int{}
		for i := range p.N {
			b, err := p.Sequence(i)
			if err != nil {
				t.Fatal(err)
			}
			set[fmt.Sprint(b.X, b.Labels, b.Y)] = i
		}
		if len(set) != p.N {
			t.Fatalf("%s: %d distinct sequences in a set of %d", p, len(set), p.N)
		}
		seen := map[int]bool{}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 10 {
			b, err := p.Sample(rng, 5)
			if err != nil {
				t.Fatal(err)
			}
			if b.Size != 5 || b.Len != task.SeqLen() {
				t.Fatalf("%s: batch of %d × %d, want 5 × %d", p, b.Size, b.Len, task.SeqLen())
			}
			for j := range b.Size {
				row := Batch{X: b.X[j*b.Len*b.NumIn : (j+1)*b.Len*b.NumIn]}
				if b.Labels != nil {
					row.Labels = b.Labels[j*b.Len : (j+1)*b.Len]
				}
				if b.Y != nil {
					row.Y = b.Y[j : j+1]
				}
				i, ok := set[fmt.Sprint(row.X, row.Labels, row.Y)]
				if !ok {
					t.Fatalf("%s: batch row %d is not a sequence of the set", p, j)
				}
				seen[i] = true
			}
		}
		if len(seen) != p.N {
			t.Errorf("%s: 50 picks saw %d of the set's %d sequences", p, len(seen), p.N)
		}
		other, _ := Pool{Task: task, N: 4, Seed: 8}.Sequence(0)
		if _, same := set[fmt.Sprint(other.X, other.Labels, other.Y)]; same {
			t.Errorf("%s: the set of Seed 8 shares a sequence with Seed 7's", p)
		}
		if HeldOut(p) != task || HeldOut(task) != task {
			t.Errorf("HeldOut(%s) = %v, want %s", p, HeldOut(p), task)
		}
	}
	for _, tc := range []struct {
		p    Pool
		want string
	}{
		{Pool{Task: Copy{T: 5}}, "Pool.N = 0, want >= 1"},
		{Pool{N: 3}, "Pool.Task is nil"},
		{Pool{Task: Pool{Task: Copy{T: 5}, N: 2}, N: 3}, "Pool.Task is a Pool"},
		{Pool{Task: Copy{T: 0}, N: 3}, "T = 0"},
	} {
		if err := tc.p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error containing %q", tc.p, err, tc.want)
		}
	}
	if _, err := (Pool{Task: Copy{T: 5}, N: 3}).Sequence(3); err == nil || !strings.Contains(err.Error(), "Pool.Sequence(3), want 0..2") {
		t.Errorf("Sequence(3) of 3: %v", err)
	}
}
