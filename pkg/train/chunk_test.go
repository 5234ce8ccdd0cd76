package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/lru"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/s4d"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
	"github.com/urnn-notebooks/longmemory/pkg/models/urnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
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
	r.Parallel = true // the cells that are rnn.Sequencers (the LRU, S4D) through their scans
	return r
}

// sameGradients fails t unless got's loss, count of right predictions and every gradient
// equal want's (to 1e-12 relative); what names got, ref names want.
func sameGradients(t *testing.T, what, ref string, got, want *Result) {
	t.Helper()
	if math.Abs(got.Loss-want.Loss) > 1e-12*math.Abs(want.Loss) || got.Correct != want.Correct {
		t.Errorf("%s: loss %.15g, %g right; %s %.15g, %g", what, got.Loss, got.Correct, ref, want.Loss, want.Correct)
	}
	for i := range want.Grads {
		w := tensors.MustCopyFlatData[float64](want.Grads[i])
		h := tensors.MustCopyFlatData[float64](got.Grads[i])
		for j := range w {
			if d := math.Abs(h[j] - w[j]); d > 1e-12*(1+math.Abs(w[j])) {
				t.Fatalf("%s: gradient %d[%d] = %.15g, %s %.15g", what, i, j, h[j], ref, w[j])
			}
		}
	}
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
				sameGradients(t, fmt.Sprintf("chunk %d", chunk), "unrolled", got, full)
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

// TestReadLastEqualsFullReadout checks that reading out only the last state of each chunk
// (seq.Walker.ReadLast, which NewRunner sets) changes neither the loss nor any gradient: on
// the adding problem (regression), on a classification batch masked at its last step only,
// with Henaff's 1/T scaling and the LT-RNN's pooled decoder, in chunks that divide the
// sequence, one that leaves a last chunk of one step, and none. TestReadLastGraphs checks that
// the read-last graphs are the ones built.
func TestReadLastEqualsFullReadout(t *testing.T) {
	adding, err := tasks.Adding{T: 13}.Sample(rand.New(rand.NewPCG(3, 3)), 3)
	if err != nil {
		t.Fatal(err)
	}
	lastLabel := lastStepCopy(t)
	for _, tc := range []struct {
		name  string
		b     *tasks.Batch
		scale float64
		cell  func() rnn.Cell
	}{
		{"irnn/adding", adding, 0, func() rnn.Cell {
			c := rnn.NewIRNN(2, 4, 1)
			c.Type = dtypes.Float64
			return c
		}},
		{"lt-irnn-pool/adding/scaled", adding, 1.0 / 13, func() rnn.Cell {
			return &ltrnn.Cell{In: 2, N: 4, Out: 1, Sigma: ltrnn.ReLU, VInit: ltrnn.Identity, Pooling: true, Type: dtypes.Float64}
		}},
		{"lstm/last-label", lastLabel, 0, func() rnn.Cell { return &lstm.Cell{In: 6, N: 4, Out: 5, Type: dtypes.Float64} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunk := range []int{0, 4, 5, tc.b.Len - 1} {
				var res [2]*Result
				for k, readLast := range []bool{false, true} {
					r := newRunner(t, tc.cell(), chunk, 5)
					r.HiddenGradScale, r.ReadLast = tc.scale, readLast
					if res[k], err = r.Gradients(tc.b); err != nil {
						t.Fatal(err)
					}
				}
				sameGradients(t, fmt.Sprintf("chunk %d", chunk), "full readout", res[1], res[0])
			}
		})
	}
}

// lastStepCopy returns a copy-task batch (3 sequences of 12 steps) masked at its last step
// only: a classification batch whose loss reads the last output alone, as pixel MNIST's.
func lastStepCopy(t *testing.T) *tasks.Batch {
	t.Helper()
	b, err := tasks.Copy{T: 6, Recall: 3, Symbols: 4}.Sample(rand.New(rand.NewPCG(3, 3)), 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Mask {
		b.Mask[i] = 0
	}
	for i := range b.Size {
		b.Mask[(i+1)*b.Len-1] = 1
	}
	return b
}

// TestReadLastGraphs checks that NewRunner reads last, and that a walk that reads last builds
// chunk graphs whose Outputs hold the last step alone for a batch masked there only, and
// every step for one masked elsewhere too (copy).
func TestReadLastGraphs(t *testing.T) {
	r := newRunner(t, &rnn.Simple{In: 6, N: 5, Out: 5, Type: dtypes.Float64}, 4, 5)
	if !r.ReadLast {
		t.Fatal("NewRunner left ReadLast unset")
	}
	copyBatch, err := tasks.Copy{T: 6, Recall: 3, Symbols: 4}.Sample(rand.New(rand.NewPCG(3, 3)), 3)
	if err != nil {
		t.Fatal(err)
	}
	w, err := seq.NewWalker(r.Backend, r.Scope, r.Cell, 4, seq.Hooks{Forward: func(c *seq.ChunkGraph) []*Node {
		return []*Node{c.Outputs()}
	}})
	if err != nil {
		t.Fatal(err)
	}
	w.ReadLast = true
	for _, tc := range []struct {
		name  string
		b     *tasks.Batch
		steps int // read out per chunk of 4
	}{{"copy", copyBatch, 4}, {"masked at the last step", lastStepCopy(t), 1}} {
		var got []int
		if _, err := w.Forward(context.Background(), tc.b, func(_ [2]int, out []*tensors.Tensor) {
			got = append(got, out[0].Shape().Dim(1))
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0] != tc.steps || got[1] != tc.steps || got[2] != tc.steps {
			t.Errorf("%s: the chunks read out %v steps, want %d in each of 3 chunks", tc.name, got, tc.steps)
		}
	}
}

// TestRunnerGradientsEqualPlainGraph checks the Runner's chunked walk (package seq: chunk
// graphs, carried adjoints, the h_0 gradient) against GoMLX's gradient of the loss of one plain
// unrolled graph, whole and in chunks of 3, for cells whose steps differ: a linear projection
// (tanh RNN), σ(U x + b) with activation clipping (LT-IRNN, ReLU), the gates (LSTM with
// peephole) and the uRNN's complex input map and unitary W; and the LRU, S4D and a deep LRU
// through their filters (rnn.Filter, as with train.Config.Scan), over several of the filter's
// blocks of steps.
func TestRunnerGradientsEqualPlainGraph(t *testing.T) {
	for _, tc := range []struct {
		name string
		task tasks.Task
		cell func() rnn.Cell
	}{
		{"tanh/copy", tasks.Copy{T: 5, Recall: 2, Symbols: 3}, func() rnn.Cell { return &rnn.Simple{In: 5, N: 4, Out: 4, Type: dtypes.Float64} }},
		{"lt-irnn/adding", tasks.Adding{T: 7}, func() rnn.Cell {
			return &ltrnn.Cell{In: 2, N: 6, Out: 1, Sigma: ltrnn.ReLU, VInit: ltrnn.Identity, ClipNorm: 1.5, Type: dtypes.Float64}
		}},
		{"lstm-peephole/copy", tasks.Copy{T: 4, Recall: 2, Symbols: 3}, func() rnn.Cell {
			c := lstm.NewURNNCode(5, 3, 4)
			c.Type = dtypes.Float64
			return c
		}},
		{"urnn/adding", tasks.Adding{T: 6}, func() rnn.Cell { return &urnn.Cell{In: 2, N: 4, Out: 1, Type: dtypes.Float64} }},
		// The LRU's and S4D's chunks by their filter (rnn.Filter), against the plain graph's steps.
		{"lru/adding", tasks.Adding{T: 7}, func() rnn.Cell { return &lru.Cell{In: 2, N: 4, Out: 1, Type: dtypes.Float64} }},
		{"lru/copy", tasks.Copy{T: 5, Recall: 2, Symbols: 3}, func() rnn.Cell { return &lru.Cell{In: 5, N: 3, Out: 4, Type: dtypes.Float64} }},
		{"s4d/adding", tasks.Adding{T: 7}, func() rnn.Cell { return &s4d.Cell{In: 2, N: 4, Out: 1, Type: dtypes.Float64} }},
		// Sequences of several of scan.DiagonalFilter's blocks (32 steps), the last one partial.
		{"lru/copy-70", tasks.Copy{T: 60, Recall: 5, Symbols: 3}, func() rnn.Cell { return &lru.Cell{In: 5, N: 3, Out: 4, Type: dtypes.Float64} }},
		{"s4d/adding-70", tasks.Adding{T: 70}, func() rnn.Cell { return &s4d.Cell{In: 2, N: 4, Out: 1, Type: dtypes.Float64} }},
		// A deep LRU: blocks of normalisation, LRU, gates and a skip, stacked (package stack's Filter).
		{"deep-lru/copy-40", tasks.Copy{T: 30, Recall: 5, Symbols: 3}, func() rnn.Cell {
			return stack.New(&lru.Block{In: 5, H: 4, N: 2, Out: 4, Type: dtypes.Float64}, &lru.Block{In: 4, H: 4, N: 2, Out: 4, Type: dtypes.Float64})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.task.Sample(rand.New(rand.NewPCG(4, 4)), 3)
			if err != nil {
				t.Fatal(err)
			}
			r := newRunner(t, tc.cell(), 0, 11)
			x, targets, mask := seq.ChunkTensors(b, 0, b.Len, dtypes.Float64)
			norm := seq.FloatTensor(dtypes.Float64, []float64{seq.Masked(b)})
			want, err := model.ExecOnceN(backend.MustNew(), r.Store, func(_ *model.Scope, g *Graph) []*Node {
				rnn.LiveVariables(r.Store, g)
				step := r.Cell.Build(r.Store.Scope(ModelScope), g)
				states := rnn.Unroll(step, Const(g, x), nil)
				loss := seq.SequenceLoss(step.Readout(states), Const(g, targets), Const(g, mask), Reshape(Const(g, norm)))
				return append([]*Node{loss}, Gradient(loss, r.varNodes(g)...)...)
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{0, 3} {
				got, err := newRunner(t, tc.cell(), chunk, 11).Gradients(b)
				if err != nil {
					t.Fatal(err)
				}
				if wl := tensors.ToScalar[float64](want[0]); math.Abs(got.Loss-wl) > 1e-12*math.Abs(wl) {
					t.Errorf("chunk %d: loss %.15g, plain graph %.15g", chunk, got.Loss, wl)
				}
				for i, v := range r.Vars {
					w := tensors.MustCopyFlatData[float64](want[1+i])
					h := tensors.MustCopyFlatData[float64](got.Grads[i])
					for j := range w {
						if d := math.Abs(h[j] - w[j]); d > 1e-10*(1+math.Abs(w[j])) {
							t.Fatalf("chunk %d: ∂ℒ/∂%s[%d] = %.15g, plain graph %.15g", chunk, v.Path(), j, h[j], w[j])
						}
					}
				}
			}
		})
	}
}
