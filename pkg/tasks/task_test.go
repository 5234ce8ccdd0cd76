package tasks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

func TestDeterminism(t *testing.T) {
	dir, _, _ := fakeMNIST(t)
	for _, task := range []Task{
		CopyPaper, VariableCopyPaper, Adding{T: 100}, Multiplication{T: 100}, XOR{T: 100}, TemporalOrder{T: 100},
		PixelMNIST{Dir: dir}, PixelMNIST{Dir: dir, Permuted: true, Seed: 9},
	} {
		t.Run(task.String(), func(t *testing.T) {
			sample := func(seed uint64) *Batch {
				b, err := task.Sample(newRNG(seed), 8)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			if a, b := sample(1), sample(1); !reflect.DeepEqual(a, b) {
				t.Errorf("two batches from seed 1 differ, want equal")
			}
			if a, b := sample(1), sample(2); reflect.DeepEqual(a, b) {
				t.Errorf("batches from seeds 1 and 2 are equal, want different")
			}
		})
	}
	if a, b := (PixelMNIST{Permuted: true, Seed: 1}), (PixelMNIST{Permuted: true, Seed: 2}); slices.Equal(a.Permutation(), b.Permutation()) {
		t.Errorf("permutations from seeds 1 and 2 are equal, want different")
	}
}

// TestValidate checks that every bad parameter gives an error from Validate and from Sample that
// names the parameter and its value, and that Baseline is NaN for invalid copy tasks.
func TestValidate(t *testing.T) {
	emptyDir := t.TempDir()
	tests := []struct {
		task Task
		want string
	}{
		{Copy{T: 0}, "Copy.T = 0, want 1..16777216"},
		{Copy{T: -5}, "Copy.T = -5"},
		{Copy{T: MaxSteps + 1}, "Copy.T = 16777217"},
		{Copy{T: 10, Symbols: -1}, "Copy.Symbols = -1, want 1..65536"},
		{Copy{T: 10, Symbols: MaxSymbols + 1}, "Copy.Symbols = 65537"},
		{Copy{T: 10, Recall: -2}, "Copy.Recall = -2, want 1..16777216"},
		{Copy{T: 10, Recall: MaxSteps + 1}, "Copy.Recall = 16777217"},
		{VariableCopy{T: 0}, "VariableCopy.T = 0"},
		{VariableCopy{T: MaxSteps + 1}, "VariableCopy.T = 16777217"},
		{VariableCopy{T: 10, Symbols: -3}, "VariableCopy.Symbols = -3"},
		{VariableCopy{T: 10, Recall: -1}, "VariableCopy.Recall = -1"},
		{Adding{}, "Adding.T = 0, want 2..16777216"},
		{Adding{T: 1}, "Adding.T = 1"},
		{Adding{T: -4}, "Adding.T = -4"},
		{Adding{T: MaxSteps + 1}, "Adding.T = 16777217"},
		{PixelMNIST{Dir: emptyDir}, "PixelMNIST.Dir = \"" + emptyDir + "\": " + emptyDir + "/t10k-images-idx3-ubyte.gz"},
		{PixelMNIST{Dir: emptyDir, Train: true}, "train-images-idx3-ubyte.gz"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%#v", tc.task), func(t *testing.T) {
			if err := tc.task.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
			if _, err := tc.task.Sample(newRNG(1), 4); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Sample() error = %v, want one containing %q", err, tc.want)
			}
			switch tc.task.(type) {
			case Copy, VariableCopy:
				if got := tc.task.Baseline(); !math.IsNaN(got) {
					t.Errorf("Baseline() = %g, want NaN", got)
				}
			}
		})
	}
}

// TestSampleArgs checks the errors for a bad batch size or a nil rng, on valid tasks.
func TestSampleArgs(t *testing.T) {
	dir, _, _ := fakeMNIST(t)
	for _, task := range []Task{CopyPaper, VariableCopyPaper, Adding{T: 10}, PixelMNIST{Dir: dir}} {
		for _, tc := range []struct {
			batch  int
			nilRNG bool
			want   string
		}{
			{0, false, "batch = 0, want >= 1"},
			{-3, false, "batch = -3, want >= 1"},
			{MaxElements, false, fmt.Sprintf("batch = %d, want <= ", MaxElements)},
			{4, true, "rng is nil"},
		} {
			rng := newRNG(1)
			if tc.nilRNG {
				rng = nil
			}
			if _, err := task.Sample(rng, tc.batch); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v.Sample(batch = %d, nil rng %v) error = %v, want one containing %q", task, tc.batch, tc.nilRNG, err, tc.want)
			}
		}
	}
	if _, err := (Copy{T: MaxSteps, Symbols: MaxSymbols}).Sample(newRNG(1), 1); err == nil || !strings.Contains(err.Error(), "batch = 1, want <= 0") {
		t.Errorf("Sample of a batch larger than MaxElements: error = %v, want batch = 1, want <= 0", err)
	}
	task := PixelMNIST{Dir: dir}
	for _, tc := range []struct {
		start, n int
		want     string
	}{
		{-1, 1, "start = -1, want 0..2"}, {3, 1, "start = 3, want 0..2"}, {0, 0, "n = 0, want 1..3"}, {1, 3, "n = 3, want 1..2"},
	} {
		if _, err := task.Examples(tc.start, tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Examples(%d, %d) error = %v, want one containing %q", tc.start, tc.n, err, tc.want)
		}
	}
}

func TestTensors(t *testing.T) {
	cp, err := Copy{T: 3, Symbols: 2, Recall: 2}.Sample(newRNG(1), 5)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := Adding{T: 6}.Sample(newRNG(1), 5)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                string
		b                   *Batch
		wantX, wantT, wantM []int
		wantTargetType      dtypes.DType
	}{
		{"copy", cp, []int{5, 7, 4}, []int{5, 7}, []int{5, 7}, dtypes.Int32},
		{"adding", ad, []int{5, 6, 2}, []int{5, 1}, []int{5, 6}, dtypes.Float32},
	}
	for _, tc := range tests {
		x, targets, mask := tc.b.Tensors()
		for _, c := range []struct {
			name   string
			tensor *tensors.Tensor
			dims   []int
			dtype  dtypes.DType
		}{{"x", x, tc.wantX, dtypes.Float32}, {"targets", targets, tc.wantT, tc.wantTargetType}, {"mask", mask, tc.wantM, dtypes.Float32}} {
			if s := c.tensor.Shape(); !slices.Equal(s.Dimensions, c.dims) || s.DType != c.dtype {
				t.Errorf("%s: %s shape %s, want %v %s", tc.name, c.name, s, c.dims, c.dtype)
			}
		}
		if !slices.Equal(tensors.MustCopyFlatData[float32](x), tc.b.X) || !slices.Equal(tensors.MustCopyFlatData[float32](mask), tc.b.Mask) {
			t.Errorf("%s: x or mask values differ from the batch", tc.name)
		}
		if tc.b.Labels != nil && !slices.Equal(tensors.MustCopyFlatData[int32](targets), tc.b.Labels) ||
			tc.b.Y != nil && !slices.Equal(tensors.MustCopyFlatData[float32](targets), tc.b.Y) {
			t.Errorf("%s: target values differ from the batch", tc.name)
		}
	}
}

func TestBatchCheck(t *testing.T) {
	valid := func() *Batch {
		b, err := Copy{T: 3, Symbols: 2, Recall: 2}.Sample(newRNG(1), 2)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name, want string
		edit       func(b *Batch)
	}{
		{"size 0", "(Size, Len, NumIn) = (0, 7, 4)", func(b *Batch) { b.Size = 0 }},
		{"short X", "len(X) = 55, want Size·Len·NumIn = 56", func(b *Batch) { b.X = b.X[1:] }},
		{"short Mask", "len(Mask) = 13, want Size·Len = 14", func(b *Batch) { b.Mask = b.Mask[1:] }},
		{"both targets", "exactly one", func(b *Batch) { b.Y = make([]float32, 2) }},
		{"no targets", "exactly one", func(b *Batch) { b.Labels = nil }},
		{"short Labels", "len(Labels) = 13", func(b *Batch) { b.Labels = b.Labels[1:] }},
		{"bad label", "Labels[3] = 3, want 0..NumClasses-1 = 0..2", func(b *Batch) { b.Labels[3] = 3 }},
		{"short Y", "len(Y) = 1, want Size = 2", func(b *Batch) { b.Labels, b.Y = nil, []float32{1} }},
	}
	if err := valid().Check(); err != nil {
		t.Fatalf("valid batch: %v", err)
	}
	for _, tc := range tests {
		b := valid()
		tc.edit(b)
		if err := b.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check() = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		task Task
		want string
	}{
		{CopyPaper, "Copy(T=100, K=8, S=10)"},
		{Copy{T: 5}, "Copy(T=5, K=8, S=10)"},
		{VariableCopy{T: 7, Symbols: 3, Recall: 2}, "VariableCopy(T=7, K=3, S=2)"},
		{Adding{T: 750}, "Adding(T=750)"},
		{PixelMNIST{}, "PixelMNIST(MNIST test)"},
		{PixelMNIST{Dir: "/d", Train: true, Permuted: true, Seed: 3}, "PixelMNIST(MNIST train, permuted seed=3, dir=/d)"},
	}
	for _, tc := range tests {
		if got := tc.task.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// TestBatchRows checks that Rows gives sequences i … j−1 of a batch, for a classification and
// a regression batch, and panics on an empty or out-of-range span.
func TestBatchRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, task := range []Task{Copy{T: 4}, Adding{T: 5}} {
		b, err := task.Sample(rng, 5)
		if err != nil {
			t.Fatal(err)
		}
		r := b.Rows(1, 4)
		if err := r.Check(); err != nil {
			t.Fatalf("%s: Rows(1, 4).Check() = %v", task, err)
		}
		if r.Size != 3 {
			t.Errorf("%s: Rows(1, 4).Size = %d, want 3", task, r.Size)
		}
		for i := range r.Size {
			for s := range b.Len {
				for k := range b.NumIn {
					if got, want := r.At(i, s, k), b.At(i+1, s, k); got != want {
						t.Fatalf("%s: Rows(1, 4).At(%d, %d, %d) = %g, want %g", task, i, s, k, got, want)
					}
				}
				if got, want := r.MaskAt(i, s), b.MaskAt(i+1, s); got != want {
					t.Fatalf("%s: Rows(1, 4).MaskAt(%d, %d) = %g, want %g", task, i, s, got, want)
				}
				if b.Labels != nil && r.Label(i, s) != b.Label(i+1, s) {
					t.Fatalf("%s: Rows(1, 4).Label(%d, %d) = %d, want %d", task, i, s, r.Label(i, s), b.Label(i+1, s))
				}
			}
			if b.Y != nil && r.Y[i] != b.Y[i+1] {
				t.Fatalf("%s: Rows(1, 4).Y[%d] = %g, want %g", task, i, r.Y[i], b.Y[i+1])
			}
		}
	}
	b, _ := Copy{T: 4}.Sample(rng, 2)
	for _, span := range [][2]int{{1, 1}, {-1, 1}, {0, 3}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Rows(%d, %d) of a batch of 2 did not panic", span[0], span[1])
				}
			}()
			b.Rows(span[0], span[1])
		}()
	}
}
