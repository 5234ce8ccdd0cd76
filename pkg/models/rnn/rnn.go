package rnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
)

// Activation selects the nonlinearity of a simple RNN.
type Activation int

const (
	// TanhAct gives the tanh RNN.
	TanhAct Activation = iota
	// ReLUAct with Identity initialisation gives the IRNN [2].
	ReLUAct
)

// Simple is the classic recurrent network ([3] eq. 1.1, [1] §4):
//
//	h_t = σ(W h_{t−1} + V x_t + b),   o_t = U h_t + b_o
//
// with σ = tanh (tanh RNN) or σ = ReLU (IRNN). Shapes: V [In, N], W [N, N], U [N, Out];
// the state is h, [batch, N]; h_0 is learned. Variables: "V", "W", "b", "U", "bo", "h0".
//
// Initialisation (as the uRNN paper's code): V, U Glorot-uniform, b, b_o, h_0 zero;
// W Glorot-uniform for the tanh RNN and W = I for the IRNN ([2]; Identity true).
type Simple struct {
	In, N, Out int
	Act        Activation
	Identity   bool // W starts at I (IRNN)
	// Radius, when > 0, draws W as Sutskever et al. 2013's echo-state-network-style
	// initialisation, RadiusFanIn Gaussian weights into each unit scaled to spectral radius
	// Radius (SparseRadius; Galvan §2.2.4: 1.1 "is often effective"), instead of Glorot's.
	Radius float64
	Type   dtypes.DType // zero value: Float32
}

// RadiusFanIn is the number of nonzero recurrent weights into each unit of Simple's
// echo-state-network-style W (Sutskever et al. 2013 use 15).
const RadiusFanIn = 15

// NewTanh returns the tanh RNN of the uRNN paper's experiments (§4).
func NewTanh(in, n, out int) *Simple { return &Simple{In: in, N: n, Out: out, Act: TanhAct} }

// NewIRNN returns the IRNN: ReLU units with W initialised to the identity [2].
func NewIRNN(in, n, out int) *Simple {
	return &Simple{In: in, N: n, Out: out, Act: ReLUAct, Identity: true}
}

// Sizes implements Cell.
func (c *Simple) Sizes() Sizes { return Sizes{In: c.In, State: c.N, Out: c.Out} }

// DType implements Cell.
func (c *Simple) DType() dtypes.DType { return OrFloat32(c.Type) }

var _ Transition = (*Simple)(nil)

// TransitionMatrix implements Transition: W^rec is W (Wᵀ in the row-vector code h·W), and
// σ' is nil for ReLU (σ' ∈ {0, 1}, Galvan §1.6 "The ReLU case"), else TanhPrime.
func (c *Simple) TransitionMatrix() (string, func(h float64) float64) {
	if c.Act == ReLUAct {
		return "W", nil
	}
	return "W", TanhPrime
}

// NumParams returns the number of trainable parameters, In·N + N² + N + N·Out + Out + N
// (V, W, b, U, b_o, h_0): 8089 for the tanh RNN and IRNN 80 on copy (In 10, Out 9), 17025
// for 128 units on adding (In 2, Out 1). (The uRNN paper rounds its RNNs to "≈6.5k" and
// "roughly 10K" parameters, §4.1–4.2, apparently counting fewer terms.)
func (c *Simple) NumParams() int { return c.In*c.N + c.N*c.N + c.N + c.N*c.Out + c.Out + c.N }

// variables lists the cell's variables (see Var); with rng nil the values are left out.
// W is drawn before V and U even for the IRNN, whose W is then the identity, so that both
// draw the same V and U from the same seed.
func (c *Simple) variables(rng *rand.Rand) ([]Var, error) {
	w := GlorotUniform(rng, c.N, c.N)
	if c.Identity && rng != nil {
		w = IdentityMatrix(c.N)
	}
	if c.Radius > 0 && rng != nil {
		var err error
		if w, err = SparseRadius(rng, c.N, RadiusFanIn, c.Radius); err != nil {
			return nil, err
		}
	}
	return []Var{
		{Name: "V", Dims: []int{c.In, c.N}, Values: GlorotUniform(rng, c.In, c.N)},
		{Name: "W", Dims: []int{c.N, c.N}, Values: w},
		{Name: "b", Dims: []int{c.N}, Values: make([]float64, c.N)},
		{Name: "U", Dims: []int{c.N, c.Out}, Values: GlorotUniform(rng, c.N, c.Out)},
		{Name: "bo", Dims: []int{c.Out}, Values: make([]float64, c.Out)},
		{Name: "h0", Dims: []int{c.N}, Values: make([]float64, c.N)},
	}, nil
}

// Init implements Cell. It returns an error naming the field when In, N or Out is < 1 or
// Type is neither Float32 nor Float64.
func (c *Simple) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := CheckSizes("rnn.Simple", "In", c.In, "N", c.N, "Out", c.Out); err != nil {
		return err
	}
	if err := CheckDType("rnn.Simple", c.DType()); err != nil {
		return err
	}
	if !(c.Radius >= 0) || math.IsInf(c.Radius, 1) || (c.Radius > 0 && c.Identity) {
		return fmt.Errorf("rnn.Simple: Radius = %g, want a spectral radius >= 0 (0: Glorot's W), and not with Identity", c.Radius)
	}
	vars, err := c.variables(rng)
	if err != nil {
		return err
	}
	return CreateVariables(scope, c.DType(), vars)
}

// Build implements Cell. It panics if Init was not called or created variables of other
// shapes (another configuration).
func (c *Simple) Build(scope *model.Scope, g *Graph) Step {
	vars, _ := c.variables(nil) // no error without rng
	v := ReadVariables(scope, g, vars, c)
	return &simpleStep{cell: c, v: v["V"], wT: Transpose(v["W"], 0, 1), b: v["b"], u: v["U"], bo: v["bo"], h0: v["h0"]}
}

type simpleStep struct {
	cell                *Simple
	v, wT, b, u, bo, h0 *Node // wT = Wᵀ, for Times
}

func (s *simpleStep) Initial(batch int) *Node {
	return BroadcastToDims(InsertAxes(s.h0, 0), batch, s.cell.N)
}

func (s *simpleStep) Project(x *Node) *Node {
	return Add(ProjectInputs(x, s.v), ExpandLeftToRank(s.b, x.Rank()))
}

func (s *simpleStep) Next(h, px *Node) *Node {
	z := Add(Times(h, s.wT), px)
	if s.cell.Act == ReLUAct {
		return activation.Relu(z)
	}
	return Tanh(z)
}

func (s *simpleStep) Readout(states *Node) *Node {
	return Add(MatMul(states, s.u), ExpandLeftToRank(s.bo, states.Rank()))
}
