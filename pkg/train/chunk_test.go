package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// newRunner initialises cell (made Float64) in a new store and returns its Runner.
func newRunner(t *testing.T, cell rnn.Cell, chunk int, seed uint64) *Runner {
	t.Helper()
	store := model.NewStore()
	if err := cell.Init(store.Scope(ModelScope), rand.New(rand.NewPCG(seed, 1))); err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(backend.MustNew(), store, cell, chunk)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestChunkedGradientsEqualUnrolled checks that chunked BPTT gives the gradients of the
// fully unrolled graph, for chunk sizes that divide the sequence and ones that do not.
func TestChunkedGradientsEqualUnrolled(t *testing.T) {
	for _, tc := range []struct {
		name string
		task tasks.Task
		cell func() rnn.Cell
	}{
		{"tanh/copy", tasks.Copy{T: 6, Recall: 3, Symbols: 4}, func() rnn.Cell {
			return &rnn.Simple{In: 6, N: 5, Out: 5, Type: dtypes.Float64}
		}},
		{"irnn/adding", tasks.Adding{T: 13}, func() rnn.Cell {
			c := rnn.NewIRNN(2, 4, 1)
			c.Type = dtypes.Float64
			return c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.task.Sample(rand.New(rand.NewPCG(3, 3)), 3)
			if err != nil {
				t.Fatal(err)
			}
			full, err := newRunner(t, tc.cell(), 0, 5).Gradients(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{1, 4, 5, b.Len - 1, b.Len} {
				got, err := newRunner(t, tc.cell(), chunk, 5).Gradients(b)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(got.Loss-full.Loss) > 1e-12*math.Abs(full.Loss) {
					t.Errorf("chunk %d: loss %.15g, unrolled %.15g", chunk, got.Loss, full.Loss)
				}
				for i := range full.Grads {
					want := tensors.MustCopyFlatData[float64](full.Grads[i])
					have := tensors.MustCopyFlatData[float64](got.Grads[i])
					for j := range want {
						if d := math.Abs(have[j] - want[j]); d > 1e-12*(1+math.Abs(want[j])) {
							t.Fatalf("chunk %d: gradient %d[%d] = %.15g, unrolled %.15g", chunk, i, j, have[j], want[j])
						}
					}
				}
			}
		})
	}
}

// TestRunnerGradientsMatchFiniteDifferences checks the Runner's loss and gradient
// end to end (task tensors, mask, normalisation, h_0 gradient) with central differences.
func TestRunnerGradientsMatchFiniteDifferences(t *testing.T) {
	cell := &rnn.Simple{In: 6, N: 4, Out: 5, Type: dtypes.Float64}
	r := newRunner(t, cell, 3, 9)
	b, err := tasks.Copy{T: 4, Recall: 2, Symbols: 4}.Sample(rand.New(rand.NewPCG(1, 2)), 2)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Gradients(b)
	if err != nil {
		t.Fatal(err)
	}
	const h = 1e-6
	for vi, v := range r.Vars {
		theta := tensors.MustCopyFlatData[float64](v.MustValue())
		grad := tensors.MustCopyFlatData[float64](res.Grads[vi])
		for _, i := range []int{0, len(theta) - 1} {
			var l [2]float64
			for k, s := range []float64{h, -h} {
				p := append([]float64(nil), theta...)
				p[i] += s
				v.MustSetValue(tensors.FromFlatDataAndDimensions(p, v.Shape().Dimensions...))
				f, err := r.Forward(b)
				if err != nil {
					t.Fatal(err)
				}
				l[k] = f.Loss
			}
			v.MustSetValue(tensors.FromFlatDataAndDimensions(theta, v.Shape().Dimensions...))
			want := (l[0] - l[1]) / (2 * h)
			if rel := math.Abs(grad[i]-want) / max(math.Abs(want), 1e-5); rel > 1e-5 {
				t.Errorf("%s[%d]: gradient %.10g, finite differences %.10g", v.Path(), i, grad[i], want)
			}
		}
	}
}

// TestHiddenGradScale checks Henaff's 1/T scaling: the gradients of the decoder (U, bo)
// are unchanged, every other gradient is multiplied by the scale, with and without chunks.
func TestHiddenGradScale(t *testing.T) {
	cell := func() rnn.Cell { return &rnn.Simple{In: 6, N: 5, Out: 5, Type: dtypes.Float64} }
	b, err := tasks.Copy{T: 6, Recall: 3, Symbols: 4}.Sample(rand.New(rand.NewPCG(3, 3)), 3)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := newRunner(t, cell(), 0, 5).Gradients(b)
	if err != nil {
		t.Fatal(err)
	}
	const scale = 1.0 / 12
	for _, chunk := range []int{0, 5} {
		r := newRunner(t, cell(), chunk, 5)
		r.HiddenGradScale = scale
		got, err := r.Gradients(b)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Loss-plain.Loss) > 1e-12*plain.Loss {
			t.Errorf("chunk %d: the scaling changed the loss: %g, want %g", chunk, got.Loss, plain.Loss)
		}
		for i, v := range r.Vars {
			f := scale
			if name := v.Name(); name == "U" || name == "bo" {
				f = 1
			}
			want := tensors.MustCopyFlatData[float64](plain.Grads[i])
			have := tensors.MustCopyFlatData[float64](got.Grads[i])
			nonzero := 0
			for j := range want {
				if d := math.Abs(have[j] - f*want[j]); d > 1e-12*(1+math.Abs(want[j])) {
					t.Fatalf("chunk %d: ∂ℒ/∂%s[%d] = %.15g, want %g × %.15g", chunk, v.Name(), j, have[j], f, want[j])
				}
				if want[j] != 0 {
					nonzero++
				}
			}
			if nonzero == 0 {
				t.Errorf("∂ℒ/∂%s is all zero: the check says nothing", v.Name())
			}
		}
	}
}
