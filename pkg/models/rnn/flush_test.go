package rnn_test

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
)

// TestFlushTinyGradient checks that FlushTinyGradient leaves its input unchanged and zeroes
// exactly the components of the adjoint below TinyGradient in magnitude, in both dtypes.
func TestFlushTinyGradient(t *testing.T) {
	for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.Float64} {
		adj := []float64{1, -1e-29, 1e-31, -3e-38, 0, 2e-30}
		want := []float64{1, -1e-29, 0, 0, 0, 2e-30}
		x := []float64{0.5, -2, 3, 1e-35, 7, -1}
		out := MustExecOnceN(backend.MustNew(), func(xs, c *Node) (*Node, *Node) {
			y := rnn.FlushTinyGradient(xs)
			return y, Gradient(ReduceAllSum(Mul(y, c)), xs)[0]
		}, seq.FloatTensor(dt, x, len(x)), seq.FloatTensor(dt, adj, len(adj)))
		for i := range x {
			if got := seq.Floats(out[0])[i]; got != seq.Floats(seq.FloatTensor(dt, x, len(x)))[i] {
				t.Errorf("%s: forward[%d] = %g, want the input %g", dt, i, got, x[i])
			}
			if got, w := seq.Floats(out[1])[i], seq.Floats(seq.FloatTensor(dt, want, len(want)))[i]; got != w {
				t.Errorf("%s: adjoint[%d] = %g, want %g (from %g)", dt, i, got, w, adj[i])
			}
		}
	}
}

// decay is the recurrence h_t = 0.1 h_{t−1} + x_t of one unit, whose adjoint shrinks tenfold a
// step back from the last state.
type decay struct{ g *Graph }

func (d decay) Initial(batch int) *Node { return Zeros(d.g, shapes.Make(dtypes.Float64, batch, 1)) }
func (d decay) Project(x *Node) *Node   { return x }
func (d decay) Next(h, px *Node) *Node  { return Add(MulScalar(h, 0.1), px) }
func (d decay) Readout(s *Node) *Node   { return s }

// TestUnrollStatesFlushing checks, on a recurrence whose adjoint falls tenfold a step, that
// flushing every 4 steps keeps the states, keeps the gradient with respect to every input
// from the first flush point whose adjoint is at least TinyGradient onwards, and zeroes it
// before: with T = 40 the adjoint entering the flush before step t is 0.1^(40−t), below
// 1e-30 for t < 10, so the flush before step 8 cuts it and the inputs x_0 … x_7 get none.
func TestUnrollStatesFlushing(t *testing.T) {
	const T = 40
	x := make([]float64, T)
	for i := range x {
		x[i] = float64(i%3) - 1
	}
	run := func(every int) (states, grads []float64) {
		out := MustExecOnceN(backend.MustNew(), func(xs *Node) (*Node, *Node) {
			hs := rnn.UnrollStatesFlushing(decay{xs.Graph()}, xs, nil, every)
			return Stack(hs, 1), Gradient(ReduceAllSum(hs[T-1]), xs)[0]
		}, tensors.FromFlatDataAndDimensions(x, 1, T, 1))
		return tensors.MustCopyFlatData[float64](out[0]), tensors.MustCopyFlatData[float64](out[1])
	}
	s0, g0 := run(0)
	s4, g4 := run(4)
	for i := range T {
		if s4[i] != s0[i] {
			t.Errorf("state %d: %g flushing, %g without", i, s4[i], s0[i])
		}
		want := g0[i]
		if i < 8 {
			want = 0
		}
		if g4[i] != want {
			t.Errorf("∂h_T/∂x_%d = %g flushing every 4 steps, want %g (without flushing %g)", i, g4[i], want, g0[i])
		}
	}
	if g0[0] == 0 {
		t.Fatalf("∂h_T/∂x_0 = 0 without flushing: the test needs an adjoint that reaches 0.1^39")
	}
}
