package rnn

import (
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"

	"github.com/urnn-notebooks/longmemory/pkg/scan"
)

// DiagonalStep is the Step of the diagonal complex linear recurrences (the LRU, S4D): N complex
// units as the state [Re x | Im x], [batch, 2N], with
//
//	x_t = λ ⊙ x_{t−1} + P u_t,   y_t = R x_t + b_o,
//
// λ ∈ ℂ^N constant, P the complex input map written as the real [In, 2N] matrix
// [Re Pᵀ | Im Pᵀ], and the readout R a real [2N, Out] matrix of [Re x | Im x] (Re(C x) is
// [Re Cᵀ; −Im Cᵀ]). x_0 = 0. It is an rnn.Sequencer (a chunk's states by
// scan.DiagonalComplex) and an rnn.Filter (a chunk's outputs and last state by
// scan.DiagonalFilter, without the states).
type DiagonalStep struct {
	n             int
	lamRe, lamIm  *Node // λ's parts, [N] each
	rowRe, rowIm  *Node // [1, 2N]: [Re λ | Re λ] and [−Im λ | Im λ], for Next
	in, out, bias *Node
}

// NewDiagonal returns the Step of λ (its parts lamRe, lamIm, [N] each), the input matrix in
// [In, 2N], the readout matrix out [2N, Out] and the output bias [Out].
func NewDiagonal(lamRe, lamIm, in, out, bias *Node) *DiagonalStep {
	return &DiagonalStep{
		n: lamRe.Shape().Size(), lamRe: lamRe, lamIm: lamIm,
		rowRe: InsertAxes(Concatenate([]*Node{lamRe, lamRe}, 0), 0),
		rowIm: InsertAxes(Concatenate([]*Node{Neg(lamIm), lamIm}, 0), 0),
		in:    in, out: out, bias: bias,
	}
}

var (
	_ Sequencer = (*DiagonalStep)(nil)
	_ Filter    = (*DiagonalStep)(nil)
)

// Initial returns x_0 = 0, [batch, 2N].
func (d *DiagonalStep) Initial(batch int) *Node {
	return Zeros(d.in.Graph(), shapes.Make(d.in.DType(), batch, 2*d.n))
}

// Project returns P u as [Re | Im] for every step of u, [batch, T, 2N] or [batch, 2N].
func (d *DiagonalStep) Project(u *Node) *Node { return ProjectInputs(u, d.in) }

// Next returns x_t = λ ⊙ x_{t−1} + px as [Re | Im], px [batch, 2N] from Project.
func (d *DiagonalStep) Next(x, px *Node) *Node {
	swapped := Concatenate([]*Node{SliceAxis(x, 1, AxisRange(d.n, 2*d.n)), SliceAxis(x, 1, AxisRange(0, d.n))}, 1) // [Im x | Re x]
	return Add(Add(Mul(x, d.rowRe), Mul(swapped, d.rowIm)), px)
}

// States implements Sequencer: x_1 … x_T for the inputs u [batch, T, In] from x_0, by
// blocks (scan.DiagonalComplex), [batch, T, 2N].
func (d *DiagonalStep) States(x0, u *Node) *Node {
	return scan.DiagonalComplex(d.lamRe, d.lamIm, d.Project(u), x0)
}

// Filter implements Filter: R x_t + b_o for the states x_1 … x_T of the inputs u [batch, T,
// In] from x_0, [batch, T, Out], and x_T, by scan.DiagonalFilter.
func (d *DiagonalStep) Filter(x0, u *Node) (outputs, last *Node) {
	y, last := scan.DiagonalFilter(d.lamRe, d.lamIm, d.in, d.out, u, x0)
	return Add(y, ExpandLeftToRank(d.bias, 3)), last
}

// Readout returns R x + b_o for states [..., 2N], [..., Out].
func (d *DiagonalStep) Readout(states *Node) *Node {
	return Add(MatMul(states, d.out), ExpandLeftToRank(d.bias, states.Rank()))
}
