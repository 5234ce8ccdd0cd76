package urnn

import (
	. "github.com/gomlx/gomlx/core/graph"
)

// modReLU is σ(z) = ReLU(|z| + b) z/(|z| + ε) ([1] §3.2) on states [batch, 2n] = [Re z | Im z],
// with its constants made once per graph.
type modReLU struct {
	b               *Node // [1, n]
	eps, tiny, zero *Node // scalars
}

// tinySquare floors |z|² before the square root: d√x/dx is infinite at 0, and the
// floor (√1e-30 = 1e-15, far below ε) keeps the gradient of σ finite at z = 0
// while changing σ by a relative 1e-10 at most there.
const tinySquare = 1e-30

func newModReLU(b *Node, eps float64) *modReLU {
	g, dt := b.Graph(), b.DType()
	return &modReLU{
		b:    InsertAxes(b, 0),
		eps:  Scalar(g, dt, eps),
		tiny: Scalar(g, dt, tinySquare),
		zero: ScalarZero(g, dt),
	}
}

// apply returns σ(z) for z [batch, 2n]: 11 graph nodes.
func (m *modReLU) apply(z *Node) *Node {
	batch, n := z.Shape().Dim(0), z.Shape().Dim(1)/2
	mod := Sqrt(Max(ReduceSum(Reshape(Mul(z, z), batch, 2, n), 1), m.tiny)) // |z|, [batch, n]
	scale := Div(Max(Add(mod, m.b), m.zero), Add(mod, m.eps))
	return Mul(z, Concatenate([]*Node{scale, scale}, 1))
}

// NewModReLU returns the modReLU of ModReLU as a function on states z [batch, 2n] =
// [Re z | Im z], with bias b [n] and ε, its constants made once: a cell calls it in Build
// and applies the result at every step (11 graph nodes per application). The uRNN's own
// step uses the same function; the full-capacity uRNN (package fcurnn) shares it.
func NewModReLU(b *Node, eps float64) func(z *Node) *Node { return newModReLU(b, eps).apply }

// splitReLU returns σ(z) = ReLU(Re z + b) + i·ReLU(Im z + b) on states z [batch, 2n] =
// [Re z | Im z], bias b [n] (Cell.SplitReLU).
func splitReLU(b *Node) func(z *Node) *Node {
	bb := InsertAxes(Concatenate([]*Node{b, b}, 0), 0) // [1, 2n]
	zero := ScalarZero(b.Graph(), b.DType())
	return func(z *Node) *Node { return Max(Add(z, bb), zero) }
}
