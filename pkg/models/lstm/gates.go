package lstm

import (
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Gates runs the LSTM on x [batch, T, In] and returns, for plotting, its input, forget and
// output gates i_t, f_t, o_t ([batch, T, N] each, recomputed from the states with the
// equations of the package doc) and the states [batch, T, 2N] = [h_t | c_t].
func (c *Cell) Gates(scope *model.Scope, x *Node) (i, f, o, states *Node) {
	s := c.Build(scope, x.Graph()).(*step)
	n, T := c.N, x.Shape().Dim(1)
	states = rnn.Unroll(s, x, nil)
	prev := Concatenate([]*Node{InsertAxes(s.Initial(x.Shape().Dim(0)), 1), SliceAxis(states, 1, AxisRange(0, T-1))}, 1)
	z := Add(s.Project(x), MatMul(SliceAxis(prev, 2, AxisRange(0, n)), s.w)) // [batch, T, 4N]
	gate := func(k int) *Node { return SliceAxis(z, 2, AxisRange(k*n, k*n+n)) }
	i, f, o = Sigmoid(gate(GateI)), Sigmoid(gate(GateF)), gate(GateO)
	if s.p != nil {
		o = Add(o, MatMul(SliceAxis(states, 2, AxisRange(n, 2*n)), s.p))
	}
	return i, f, Sigmoid(o), states
}
