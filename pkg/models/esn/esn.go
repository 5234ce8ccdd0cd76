// Package esn is the echo state network of Jaeger [1], as surveyed in Galvan's thesis [2]
// §2.2.3 ("Reservoir computing"), written as an rnn.Cell. A fixed random recurrent network,
// the reservoir, is driven by the inputs through fixed random input weights, and only a
// linear readout of its states is learned:
//
//	h_t = tanh(W_in x_t + W h_{t−1})      reservoir (W_in and W fixed, never trained)
//	y_t = U h_t + b_o                     readout (logits or regression values; trained)
//
// The reservoir follows the recipe of [1] as [2] states it: a big, sparse, random W, scaled
// so that its spectral radius ρ(W) is Rho (default 0.9). The scale decides the memory: the
// echo state property asks that the effect of earlier states and inputs fade with time;
// [1] shows that a largest singular value of W below 1 guarantees it and that ρ(W) > 1 rules
// it out (when the zero input is admissible), and in practice W is scaled to a radius just
// below 1. [2] §2.2.3 gives Jaeger's rule of thumb: ρ close to 1 for tasks that need long
// memory, smaller otherwise. No leak (the leaky-integrator units of [2] eq. 2.28) and no
// reservoir bias: the plain ESN.
//
// The readout can be learned two ways: by gradient descent like every other cell (U and b_o
// are the cell's only trainable variables; the gradient never reaches W_in or W), or in
// closed form by ridge regression on the states at the scored steps of a batch, as ESNs are
// trained [1] [3] (train.FitReadout, through rnn.LinearReadout).
//
// State: h, one [batch, N] node, starting at h_0 = 0 (not learned).
//
// Variables (row-vector orientation, x·W_in; W and Wᵀ have the same spectral radius):
//
//	"Win" [In, N]   input weights, U[−InputScale, InputScale], dense; Frozen (not trained)
//	"W"   [N, N]    reservoir: round(Connectivity·N²) nonzero entries at uniformly random
//	                positions, drawn from U[−1, 1], then scaled by Rho/ρ; Frozen
//	"U"   [N, Out]  readout, Glorot-uniform [4] (as the readouts of the other cells)
//	"bo"  [Out]     readout bias, 0
//
// Win and W are rnn.Var Frozen: stored in the model, read into the graph as nodes, but not
// trainable, so that optimisers, parameter counts and gradient checks leave them out. A
// draw of W whose spectral radius is 0 (nilpotent, possible for a small sparse W), or does
// not come out as Rho to 1e-9 after scaling, is replaced by the next draw.
//
// Number of trainable parameters (NumParams): N·Out + Out. With a reservoir of N = 128 at
// the uRNN paper's sizes [5]: 1161 on copy (In 10, Out 9), 129 on adding (In 2, Out 1).
// The fixed W_in and W are not counted (In·N + N² stored values, of which W has
// round(Connectivity·N²) nonzero).
//
// References:
//
//	[1] Jaeger, "The 'echo state' approach to analysing and training recurrent neural
//	    networks", GMD Report 148, German National Research Center for Information
//	    Technology, 2001.
//	[2] Galvan, "On Recurrent Neural Networks", thesis, 2015, §2.2.3.
//	[3] Lukoševičius, Jaeger, "Reservoir computing approaches to recurrent neural network
//	    training", Computer Science Review 3(3), 2009 (ridge regression readouts).
//	[4] Glorot, Bengio, "Understanding the Difficulty of Training Deep Feedforward Neural
//	    Networks", AISTATS 2010.
//	[5] Arjovsky, Shah, Bengio, "Unitary Evolution Recurrent Neural Networks", ICML 2016, §4.
//
// Full entries: docs/REFERENCES.md ([Jaeger2001], [Galvan2015], [Lukosevicius2009],
// [Glorot2010], [Arjovsky2016]).
package esn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Defaults of the Cell's optional fields, used where a field is zero.
const (
	// DefaultRho is the spectral radius of W ([2] §2.2.3: close to 1 for long memory).
	DefaultRho = 0.9
	// DefaultConnectivity is the fraction of nonzero entries of W (a sparse reservoir [1]).
	DefaultConnectivity = 0.1
	// DefaultInputScale is the half-width of the uniform input weights.
	DefaultInputScale = 1.0
)

// maxDraws bounds the redraws of a reservoir whose spectral radius is 0 or cannot be set.
const maxDraws = 100

// radiusTol is the relative error accepted in ρ(W) after scaling (Float64).
const radiusTol = 1e-9

// Cell is the ESN configuration; see the package doc for the equations.
type Cell struct {
	In, N, Out int
	// Rho is the spectral radius ρ(W) of the reservoir, > 0; 0 means DefaultRho.
	Rho float64
	// Connectivity is the fraction of nonzero entries of W, in (0, 1]; 0 means
	// DefaultConnectivity. At least one entry is nonzero.
	Connectivity float64
	// InputScale is s of W_in's entries U[−s, s], > 0; 0 means DefaultInputScale.
	InputScale float64
	Type       dtypes.DType // zero value: Float32
}

// New returns an ESN with in inputs, a reservoir of n units and out outputs, with the
// default Rho, Connectivity and InputScale.
func New(in, n, out int) *Cell { return &Cell{In: in, N: n, Out: out} }

// Sizes implements rnn.Cell: the state is h, N floats.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: c.N, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

// rho returns Rho with the default applied.
func (c *Cell) rho() float64 { return rnn.OrDefault(c.Rho, DefaultRho) }

// connectivity returns Connectivity with the default applied.
func (c *Cell) connectivity() float64 { return rnn.OrDefault(c.Connectivity, DefaultConnectivity) }

// inputScale returns InputScale with the default applied.
func (c *Cell) inputScale() float64 { return rnn.OrDefault(c.InputScale, DefaultInputScale) }

var _ rnn.Transition = (*Cell)(nil)

// TransitionMatrix implements rnn.Transition: W^rec is the reservoir W (frozen, but a
// variable all the same) and σ' = 1 − h² (tanh).
func (c *Cell) TransitionMatrix() (string, func(h float64) float64) { return "W", rnn.TanhPrime }

// ReadoutVariables implements rnn.LinearReadout: y_t = h_t U + b_o.
func (c *Cell) ReadoutVariables() (weights, bias string) { return "U", "bo" }

var _ rnn.LinearReadout = (*Cell)(nil)

// NumParams returns the number of trainable parameters, N·Out + Out (U and b_o; W_in and W
// are not trained): 1161 for N = 128 on copy (In 10, Out 9), 129 on adding (In 2, Out 1).
func (c *Cell) NumParams() int { return c.N*c.Out + c.Out }

// check returns an error naming the first invalid field and its accepted range.
func (c *Cell) check() error {
	if err := rnn.CheckSizes("esn.Cell", "In", c.In, "N", c.N, "Out", c.Out); err != nil {
		return err
	}
	if r := c.Rho; !(r >= 0) || math.IsInf(r, 1) {
		return fmt.Errorf("esn.Cell: Rho = %g, want a spectral radius > 0 (0 means DefaultRho = %g)", r, DefaultRho)
	}
	if p := c.Connectivity; !(p >= 0 && p <= 1) {
		return fmt.Errorf("esn.Cell: Connectivity = %g, want a fraction of nonzero entries in (0, 1] (0 means DefaultConnectivity = %g)",
			p, DefaultConnectivity)
	}
	if s := c.InputScale; !(s >= 0) || math.IsInf(s, 1) {
		return fmt.Errorf("esn.Cell: InputScale = %g, want > 0 (0 means DefaultInputScale = %g)", s, DefaultInputScale)
	}
	return rnn.CheckDType("esn.Cell", c.DType())
}

// reservoir draws W (package doc): k = max(1, round(Connectivity·N²)) entries at random
// positions from U[−1, 1], scaled to ρ(W) = Rho (checked again after scaling, to radiusTol);
// a draw whose radius is 0 or does not come out as Rho is replaced by the next.
func (c *Cell) reservoir(rng *rand.Rand) ([]float64, error) {
	n := c.N
	k := max(1, int(math.Round(c.connectivity()*float64(n*n))))
	for range maxDraws {
		w := make([]float64, n*n)
		for _, pos := range rng.Perm(n * n)[:k] {
			w[pos] = 2*rng.Float64() - 1
		}
		rho, err := rnn.SpectralRadius(w, n)
		if err != nil {
			return nil, err
		}
		if rho < 1e-12 {
			continue // nilpotent: no radius to scale
		}
		scale := c.rho() / rho
		for i := range w {
			w[i] *= scale
		}
		// Scaling scales the eigenvalues; the check catches a radius computed wrongly (the
		// eigenvalues of a nearly defective matrix are ill-conditioned).
		if got, err := rnn.SpectralRadius(w, n); err != nil || math.Abs(got-c.rho()) > radiusTol*c.rho() {
			continue
		}
		return w, nil
	}
	return nil, fmt.Errorf("esn.Cell: %d draws of a %d×%d reservoir with %d nonzero entries (Connectivity = %g) all had spectral radius 0 (or one that could not be set to Rho = %g): raise Connectivity",
		maxDraws, n, n, k, c.connectivity(), c.rho())
}

// variables lists the cell's variables (see rnn.Var); with rng nil the values are left
// out (used by Build to check shapes), and no error is possible. W is drawn before W_in
// and U.
func (c *Cell) variables(rng *rand.Rand) ([]rnn.Var, error) {
	var w []float64
	if rng != nil {
		var err error
		if w, err = c.reservoir(rng); err != nil {
			return nil, err
		}
	}
	s := c.inputScale()
	return []rnn.Var{
		{Name: "Win", Dims: []int{c.In, c.N}, Values: rnn.Uniform(rng, c.In*c.N, -s, s), Frozen: true},
		{Name: "W", Dims: []int{c.N, c.N}, Values: w, Frozen: true},
		{Name: "U", Dims: []int{c.N, c.Out}, Values: rnn.GlorotUniform(rng, c.N, c.Out)},
		{Name: "bo", Dims: []int{c.Out}, Values: make([]float64, c.Out)},
	}, nil
}

// Init implements rnn.Cell: it creates the variables listed in the package doc. It returns
// an error naming the field and its accepted range when In, N or Out is < 1, Rho < 0,
// Connectivity is outside [0, 1], InputScale < 0 (0 meaning each one's default), a value is
// NaN or +Inf, or Type is neither Float32 nor Float64.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.check(); err != nil {
		return err
	}
	vars, err := c.variables(rng)
	if err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), vars)
}

// Build implements rnn.Cell. It panics if Init was not called or created variables of
// other shapes (a different configuration).
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	vars, _ := c.variables(nil)
	v := rnn.ReadVariables(scope, g, vars, c)
	return &step{n: c.N, win: v["Win"], w: v["W"], u: v["U"], bo: v["bo"]}
}

type step struct {
	n             int
	win, w, u, bo *Node
}

// Initial returns h_0 = 0, [batch, N].
func (s *step) Initial(batch int) *Node {
	return Zeros(s.w.Graph(), shapes.Make(s.w.DType(), batch, s.n))
}

// Project returns W_in x_t for every step of x (rnn.Step), [batch, T, N] or [batch, N].
func (s *step) Project(x *Node) *Node { return rnn.ProjectInputs(x, s.win) }

// Next returns h_t = tanh(W_in x_t + W h_{t−1}); px [batch, N] from Project.
func (s *step) Next(h, px *Node) *Node { return Tanh(Add(MatMul(h, s.w), px)) }

// Readout returns U h + b_o for states [..., N], [..., Out].
func (s *step) Readout(states *Node) *Node {
	return Add(MatMul(states, s.u), ExpandLeftToRank(s.bo, states.Rank()))
}
