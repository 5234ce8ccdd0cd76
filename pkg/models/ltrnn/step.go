package ltrnn

import (
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/support/exceptions"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// PoolEps is ε of the safe square root in Pool: √(s + ε) has the finite gradient
// h/√(s + ε) (0 at h = 0, where √s has an infinite one), and differs from √s by at most
// √ε = 1e-6.
const PoolEps = 1e-12

// Pool is the l2 pooling of [1] §2.3 with pool size and stride 2: for h [..., N] with N
// even it returns [..., N/2],
//
//	pool(h)_j = √(h_{2j}² + h_{2j+1}² + ε),   ε = PoolEps,
//
// the radius of h in each 2-dimensional block, which a block rotation leaves unchanged.
// It panics if the last axis of h is odd.
func Pool(h *graph.Node) *graph.Node {
	dims := h.Shape().Dimensions
	n := dims[len(dims)-1]
	if n%2 != 0 {
		exceptions.Panicf("ltrnn: Pool of shape %s: last axis %d is odd, want even (pool size and stride 2)", h.Shape(), n)
	}
	pairs := graph.Reshape(h, append(append([]int(nil), dims[:len(dims)-1]...), n/2, 2)...)
	return graph.Sqrt(graph.AddScalar(graph.ReduceSum(graph.Square(pairs), -1), PoolEps))
}

// ClipState is the activation clipping of [1] §4.1: it rescales each row of h [batch, N]
// to norm l when its norm exceeds l and returns the other rows unchanged,
//
//	clip_l(h) = h · l / √max(‖h‖², l²).
//
// Rows with ‖h‖ ≤ l are multiplied by l/√(l·l), which is exactly 1 in IEEE arithmetic
// (l·l is rounded in h's dtype, and √ of a rounded square is exact), so they come back
// bit for bit. Taking the maximum before the square root keeps the gradient finite at
// h = 0.
func ClipState(h *graph.Node, l float64) *graph.Node {
	ln := graph.Scalar(h.Graph(), h.DType(), l)
	return clipState(h, ln, graph.Square(ln))
}

// clipState is ClipState with the scalars l and l·l already in the graph.
func clipState(h, l, l2 *graph.Node) *graph.Node {
	sq := graph.ReduceAndKeep(graph.Square(h), graph.ReduceSum, -1) // [batch, 1]
	return graph.Mul(h, graph.Div(l, graph.Sqrt(graph.Max(sq, l2))))
}

// Build implements rnn.Cell: it reads the variables into g; the returned Step projects
// σ(U x_t + b) for all time steps at once, so each step is one matmul, one addition and,
// with clipping on, the rescaling (l and l² are hoisted out of the time loop). It panics
// if Init was not called or created variables of other shapes (another configuration).
func (c *Cell) Build(scope *model.Scope, g *graph.Graph) rnn.Step {
	nodes := rnn.ReadVariables(scope, g, c.variables(Weights{}), c)
	s := &step{
		cell: c, uT: graph.Transpose(nodes["U"], 0, 1), b: nodes["b"], v: nodes["V"], w: nodes["W"],
		wp: nodes["WP"], by: nodes["by"], // nil without Pooling or OutputBias
	}
	if l, on := c.clipNorm(); on {
		s.clip = graph.Scalar(g, s.v.DType(), l)
		s.clip2 = graph.Square(s.clip)
	}
	return s
}

type step struct {
	cell                *Cell
	uT, b, v, w, wp, by *graph.Node // uT = Uᵀ [In, N], for rnn.ProjectInputs
	clip, clip2         *graph.Node // l and l·l; nil when clipping is off
}

// Initial returns h_0 = 0, [batch, N].
func (s *step) Initial(batch int) *graph.Node {
	return graph.Zeros(s.v.Graph(), shapes.Make(s.v.DType(), batch, s.cell.N))
}

// Project returns σ(U x_t + b) for all t, x [batch, T, In] → [batch, T, N], or for one step,
// [batch, In] → [batch, N].
func (s *step) Project(x *graph.Node) *graph.Node {
	z := graph.Add(rnn.ProjectInputs(x, s.uT), graph.ExpandLeftToRank(s.b, x.Rank()))
	switch s.cell.Sigma {
	case ReLU:
		return activation.Relu(z)
	case Tanh:
		return graph.Tanh(z)
	}
	return z
}

// Next returns clip_l(V h + px), where px = σ(U x_t + b).
func (s *step) Next(h, px *graph.Node) *graph.Node {
	h = graph.Add(graph.DotGeneral(h, []int{1}, nil, s.v, []int{1}, nil), px)
	if s.clip != nil {
		h = clipState(h, s.clip, s.clip2)
	}
	return h
}

// Readout returns W h [+ W_P pool(h)] [+ b_y] for states [..., N].
func (s *step) Readout(states *graph.Node) *graph.Node {
	last := states.Rank() - 1
	y := graph.DotGeneral(states, []int{last}, nil, s.w, []int{1}, nil)
	if s.wp != nil {
		y = graph.Add(y, graph.DotGeneral(Pool(states), []int{last}, nil, s.wp, []int{1}, nil))
	}
	if s.by != nil {
		y = graph.Add(y, graph.ExpandLeftToRank(s.by, states.Rank()))
	}
	return y
}
