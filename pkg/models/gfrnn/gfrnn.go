// Package gfrnn is the gated-feedback RNN of Chung et al. [1] (Galvan §2.1.4 [2]) with tanh
// units: L stacked layers of N units, every layer at time t − 1 feeding every layer at time t
// through a global reset gate, a scalar per pair of layers,
//
//	g^{i→j}_t = σ(w_g^{i→j} · h^{j−1}_t + u_g^{i→j} · h*_{t−1})                 ([2] eq. 2.16; [1] eq. 4)
//	h^j_t    = tanh(W^{j−1→j} h^{j−1}_t + Σ_{i=1..L} g^{i→j}_t U^{i→j} h^i_{t−1} + b^j)   ([1] eq. 5)
//	y_t      = V h^L_t + b_o
//
// with h^0_t = x_t and h*_{t−1} = [h^1_{t−1} | … | h^L_{t−1}], the state (one node, as package
// rnn asks). The gates let a layer listen to another at its own timescale; with every gate
// at 1 and U^{i→j} = 0 for i ≠ j it is a stacked tanh RNN.
//
// Variables, for each layer j = 1..L (row-vector orientation, h·W), where in_j is In for j = 1
// and N above it:
//
//	W<j>  [in_j, N]   W^{j−1→j}, Glorot-uniform
//	b<j>  [N]         zeros
//	U<j>  [L·N, N]    the blocks U^{i→j}, i = 1..L, stacked by rows, Glorot-uniform per block
//	wg<j> [in_j, L]   w_g^{i→j}, column i, Glorot-uniform
//	ug<j> [L·N, L]    u_g^{i→j}, column i, Glorot-uniform
//
// and the readout V [N, Out], b_o [Out]; h_0 = 0.
//
// References:
//
//	[1] Chung, Gülçehre, Cho, Bengio, "Gated Feedback Recurrent Neural Networks", ICML 2015,
//	    arXiv:1502.02367, §3 (eqs. 4–5 for tanh units).
//	[2] Galvan, "On Recurrent Neural Networks", thesis, 2015, §2.1.4.
//
// Full entries: docs/REFERENCES.md ([Chung2015], [Galvan2015]).
package gfrnn

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Cell is a gated-feedback RNN of Layers layers of N tanh units.
type Cell struct {
	In, N, Layers, Out int
	Type               dtypes.DType // zero value: Float32
}

// New returns a gated-feedback RNN of layers layers of n units.
func New(in, n, layers, out int) *Cell { return &Cell{In: in, N: n, Layers: layers, Out: out} }

// Sizes implements rnn.Cell: the state is the L layers' units.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: c.Layers * c.N, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

// NumParams returns the trainable parameters: Σ_j (in_j·N + N + L·N·N + in_j·L + L·N·L) + N·Out + Out.
func (c *Cell) NumParams() int {
	n := c.N*c.Out + c.Out
	for j := range c.Layers {
		in := c.layerIn(j)
		n += in*c.N + c.N + c.Layers*c.N*c.N + in*c.Layers + c.Layers*c.N*c.Layers
	}
	return n
}

// layerIn is the width of layer j's input (0-based j): In for the first, N above it.
func (c *Cell) layerIn(j int) int {
	if j == 0 {
		return c.In
	}
	return c.N
}

// variables lists the cell's variables (rnn.Var); with rng nil the values are left out.
func (c *Cell) variables(rng *rand.Rand) []rnn.Var {
	var vs []rnn.Var
	L, N := c.Layers, c.N
	for j := range L {
		in := c.layerIn(j)
		var u []float64
		if rng != nil {
			for range L {
				u = append(u, rnn.GlorotUniform(rng, N, N)...)
			}
		}
		vs = append(vs,
			rnn.Var{Name: fmt.Sprintf("W%d", j+1), Dims: []int{in, N}, Values: rnn.GlorotUniform(rng, in, N)},
			rnn.Var{Name: fmt.Sprintf("b%d", j+1), Dims: []int{N}, Values: zeros(rng, N)},
			rnn.Var{Name: fmt.Sprintf("U%d", j+1), Dims: []int{L * N, N}, Values: u},
			rnn.Var{Name: fmt.Sprintf("wg%d", j+1), Dims: []int{in, L}, Values: rnn.GlorotUniform(rng, in, L)},
			rnn.Var{Name: fmt.Sprintf("ug%d", j+1), Dims: []int{L * N, L}, Values: rnn.GlorotUniform(rng, L*N, L)},
		)
	}
	return append(vs,
		rnn.Var{Name: "V", Dims: []int{N, c.Out}, Values: rnn.GlorotUniform(rng, N, c.Out)},
		rnn.Var{Name: "bo", Dims: []int{c.Out}, Values: zeros(rng, c.Out)})
}

// zeros returns n zeros, or nil with rng nil (shapes only).
func zeros(rng *rand.Rand, n int) []float64 {
	if rng == nil {
		return nil
	}
	return make([]float64, n)
}

// Init implements rnn.Cell. It returns an error naming the field when In, N, Layers or Out
// is < 1 or Type is neither Float32 nor Float64.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := rnn.CheckSizes("gfrnn.Cell", "In", c.In, "N", c.N, "Layers", c.Layers, "Out", c.Out); err != nil {
		return err
	}
	if err := rnn.CheckDType("gfrnn.Cell", c.DType()); err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), c.variables(rng))
}

// Build implements rnn.Cell.
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	v := rnn.ReadVariables(scope, g, c.variables(nil), c)
	s := &step{cell: c, v: v["V"], bo: v["bo"]}
	for j := range c.Layers {
		name := func(p string) *Node { return v[fmt.Sprintf("%s%d", p, j+1)] }
		s.w, s.b, s.u = append(s.w, name("W")), append(s.b, name("b")), append(s.u, name("U"))
		s.wg, s.ug = append(s.wg, name("wg")), append(s.ug, name("ug"))
	}
	return s
}

type step struct {
	cell            *Cell
	w, b, u, wg, ug []*Node // per layer
	v, bo           *Node
}

func (s *step) Initial(batch int) *Node {
	return Zeros(s.v.Graph(), shapes.Make(s.v.DType(), batch, s.cell.Layers*s.cell.N))
}

// Project returns the first layer's input terms, [x·W¹ + b¹ | x·w_g^{·→1}]: N + L wide.
func (s *step) Project(x *Node) *Node {
	return Concatenate([]*Node{
		Add(rnn.ProjectInputs(x, s.w[0]), ExpandLeftToRank(s.b[0], x.Rank())),
		rnn.ProjectInputs(x, s.wg[0]),
	}, -1)
}

// Next computes the layers bottom-up: layer j reads h^{j−1}_t (x_t's projection for j = 1)
// and the gated previous states of every layer.
func (s *step) Next(h, px *Node) *Node {
	c := s.cell
	L, N := c.Layers, c.N
	layers := make([]*Node, L)
	for j := range L {
		var in, gin *Node // W^{j−1→j} h^{j−1}_t + b^j and w_g · h^{j−1}_t
		if j == 0 {
			in, gin = SliceAxis(px, -1, AxisRange(0, N)), SliceAxis(px, -1, AxisRange(N, N+L))
		} else {
			in = Add(MatMul(layers[j-1], s.w[j]), ExpandLeftToRank(s.b[j], 2))
			gin = MatMul(layers[j-1], s.wg[j])
		}
		gates := Sigmoid(Add(gin, MatMul(h, s.ug[j]))) // [batch, L]: g^{i→j}, i = 1..L
		// Each layer i's previous state times its gate, side by side: [batch, L·N].
		gated := Reshape(Mul(Reshape(h, -1, L, N), InsertAxes(gates, -1)), -1, L*N)
		layers[j] = Tanh(Add(in, MatMul(gated, s.u[j])))
	}
	return Concatenate(layers, -1)
}

// Readout maps the top layer's units to the outputs.
func (s *step) Readout(states *Node) *Node {
	c := s.cell
	top := SliceAxis(states, -1, AxisRange((c.Layers-1)*c.N, c.Layers*c.N))
	return Add(MatMul(top, s.v), ExpandLeftToRank(s.bo, states.Rank()))
}
