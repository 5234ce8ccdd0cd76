package gru

import (
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Gates runs the GRU on x [batch, T, In] and returns, for plotting, its update and reset
// gates z_t, r_t ([batch, T, N] each, recomputed from the states with the equations of the
// package doc) and the states h_t, [batch, T, N].
func (c *Cell) Gates(scope *model.Scope, x *Node) (z, r, states *Node) {
	s := c.Build(scope, x.Graph()).(*step)
	n, T := c.N, x.Shape().Dim(1)
	states = rnn.Unroll(s, x, nil)
	prev := Concatenate([]*Node{InsertAxes(s.Initial(x.Shape().Dim(0)), 1), SliceAxis(states, 1, AxisRange(0, T-1))}, 1)
	zr := Sigmoid(Add(SliceAxis(s.Project(x), 2, AxisRange(0, 2*n)), MatMul(prev, s.wzr)))
	return SliceAxis(zr, 2, AxisRange(GateZ*n, GateZ*n+n)), SliceAxis(zr, 2, AxisRange(GateR*n, GateR*n+n)), states
}
