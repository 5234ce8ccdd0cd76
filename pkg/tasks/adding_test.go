package tasks

import (
	"slices"
	"testing"
)

func TestAddingLayout(t *testing.T) {
	tests := []struct {
		T             int
		first, second []int // allowed marker steps (0-based), written out by hand
	}{
		{2, []int{0}, []int{1}},
		{3, []int{0}, []int{1, 2}},
		{4, []int{0, 1}, []int{2, 3}},
		{5, []int{0, 1}, []int{2, 3, 4}},
		{8, []int{0, 1, 2, 3}, []int{4, 5, 6, 7}},
	}
	for _, tc := range tests {
		t.Run(Adding{T: tc.T}.String(), func(t *testing.T) {
			const size = 500
			task := Adding{T: tc.T}
			b, err := task.Sample(newRNG(5), size)
			if err != nil {
				t.Fatal(err)
			}
			if b.Size != size || b.Len != tc.T || b.NumIn != 2 || b.Labels != nil || len(b.Y) != size {
				t.Fatalf("got Size, Len, NumIn = %d, %d, %d, Labels nil %v, len(Y) %d; want %d, %d, 2, true, %d",
					b.Size, b.Len, b.NumIn, b.Labels == nil, len(b.Y), size, tc.T, size)
			}
			if err := b.Check(); err != nil {
				t.Fatal(err)
			}
			seen := map[int]int{}
			for i := range size {
				var marked []int
				for step, m := range b.Series(i, 1) {
					switch m {
					case 1:
						marked = append(marked, step)
					case 0:
					default:
						t.Fatalf("sample %d: marker[%d] = %g, want 0 or 1", i, step, m)
					}
				}
				if len(marked) != 2 || !slices.Contains(tc.first, marked[0]) || !slices.Contains(tc.second, marked[1]) {
					t.Fatalf("sample %d: markers at %v, want one of %v and one of %v", i, marked, tc.first, tc.second)
				}
				seen[marked[0]]++
				seen[marked[1]]++
				for step, v := range b.Series(i, 0) {
					if v < 0 || v >= 1 {
						t.Fatalf("sample %d: value[%d] = %g, want in [0, 1)", i, step, v)
					}
				}
				want := float32(float64(b.At(i, marked[0], 0)) + float64(b.At(i, marked[1], 0)))
				if b.Y[i] != want {
					t.Errorf("sample %d: Y = %g, want x[%d] + x[%d] = %g", i, b.Y[i], marked[0], marked[1], want)
				}
				for step := range tc.T {
					wantMask := float32(0)
					if step == tc.T-1 {
						wantMask = 1
					}
					if got := b.MaskAt(i, step); got != wantMask {
						t.Fatalf("sample %d: mask[%d] = %g, want %g", i, step, got, wantMask)
					}
				}
			}
			for _, step := range slices.Concat(tc.first, tc.second) {
				if seen[step] == 0 {
					t.Errorf("marker never at step %d in %d samples, want every allowed step", step, size)
				}
			}
		})
	}
}
