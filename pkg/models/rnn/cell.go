// Package rnn holds what every recurrent model of this project shares: the Cell
// interface, Unroll (backpropagation through time over an explicitly unrolled graph), the
// Transition interface of the cells with a square recurrent matrix, and the two simplest
// cells, the tanh RNN and the IRNN.
//
// Every model keeps its whole recurrent state in one [batch, StateSize] node, so that
// training, chunked backpropagation and the gradient analysis (‖∂C/∂h_t‖) treat
// them alike: the uRNN stores [Re h | Im h], the LSTM [h | c], and so on.
//
// A cell is used in three phases:
//
//  1. Init creates its variables with the paper's initialisation, drawn from a seeded
//     *rand.Rand (same seed, same weights), outside any graph; every cell declares them
//     as a []Var, stored by CreateVariables;
//  2. Build reads the variables into a graph (ReadVariables, which checks their shapes)
//     and hoists all per-parameter work (cos/sin of angles, normalised reflections,
//     broadcasts) out of the time loop;
//  3. the returned Step projects the inputs of all time steps with one matmul,
//     advances the state one step at a time, and reads out all steps with one matmul.
//
// Every cell passes the shared test suite of package celltest.
//
// References:
//
//	[1] Arjovsky, Shah, Bengio, "Unitary Evolution Recurrent Neural Networks", ICML 2016.
//	[2] Le, Jaitly, Hinton, "A Simple Way to Initialize Recurrent Networks of Rectified
//	    Linear Units", 2015 (the IRNN), as used in [1] §4.
//	[3] Galvan, "On Recurrent Neural Networks", thesis, 2015, §1.
//
// Full entries: docs/REFERENCES.md ([Arjovsky2016], [Le2015], [Galvan2015]).
package rnn

import (
	"math/rand/v2"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/support/exceptions"
)

// Sizes are the widths a cell works with.
type Sizes struct {
	In    int // input features per time step
	State int // floats of recurrent state per example
	Out   int // outputs per time step
}

// Cell is one recurrent model: its configuration, its variables and its graph.
type Cell interface {
	// Sizes returns the input, state and output widths.
	Sizes() Sizes
	// DType is the dtype of the cell's variables and states (Float32 by default;
	// gradient checks use Float64).
	DType() dtypes.DType
	// Init creates the cell's variables under scope, initialised as the paper says,
	// with random draws from rng. It returns an error for an invalid configuration.
	Init(scope *model.Scope, rng *rand.Rand) error
	// Build reads the variables (created by Init) into g and returns the step
	// functions with all per-parameter work done once.
	Build(scope *model.Scope, g *Graph) Step
}

// Step is a cell built into one graph.
type Step interface {
	// Initial returns the initial state h_0, shaped [batch, State].
	Initial(batch int) *Node
	// Project maps inputs to what Next receives: the inputs of all time steps at once,
	// [batch, T, In] → [batch, T, P], or of one step, [batch, In] → [batch, P] (as
	// UnrollStates calls it).
	Project(x *Node) *Node
	// Next is the recurrence: state [batch, State] and projected input [batch, P]
	// give the next state [batch, State].
	Next(state, px *Node) *Node
	// Readout maps states [..., State] to outputs [..., Out] (logits or regression values).
	Readout(states *Node) *Node
}

// Sequencer is implemented by the Steps that can compute the states of a whole chunk at
// once, in fewer graph nodes than T calls of Next: the linear recurrences, by blocks of
// matrix products in ⌈log_C T⌉ levels (package scan), and stacks of layers that are
// (package stack). States(h0, x) returns h_1 … h_T, [batch, T, State], for
// the inputs x [batch, T, In] from h_0 [batch, State]: the same values as T calls of
// Project and Next, to rounding. The trainer uses it (seq.Walker.Parallel); the gradient
// analysis, which differentiates with respect to each state, does not.
type Sequencer interface {
	States(h0, x *Node) *Node
}

// Filter is implemented by the Steps whose outputs are a linear time-invariant filter of
// their inputs and initial state (the diagonal linear recurrences with their linear readout):
// Filter(h0, x) returns the outputs Readout(h_1 … h_T), [batch, T, Out], and the last state
// h_T, [batch, State], for the inputs x [batch, T, In] from h_0 [batch, State], without
// forming the states (package scan, DiagonalFilter): the same values as T calls of Project,
// Next and Readout, to rounding. The trainer uses it (seq.Walker.Parallel).
type Filter interface {
	Filter(h0, x *Node) (outputs, last *Node)
}

// WholeSequence is implemented by the models whose output at a step depends on later inputs
// (the bidirectional RNN, package bidir): their Readout of a chunk's states runs back over the
// chunk's inputs, so a sequence cut into chunks would give each chunk's outputs without the
// chunks after it. seq.Walker and the trainer refuse to cut their sequences (seq.CheckChunk),
// package stack to stack them, and package dropout to wrap them.
type WholeSequence interface {
	WholeSequence()
}

// Transition is implemented by the cells whose one-step Jacobian is
//
//	∂h_t/∂h_{t−1} = diag(σ'(z_t)) · W^rec,   h_t = σ(z_t),
//
// for a square recurrent matrix W^rec held in one of their variables (the variable or its
// transpose: the same entries and singular values): the tanh RNN and the IRNN (W) and the
// LT-RNNs (V, linear in h). Gated cells (LSTM, GRU) and the uRNN (whose W is a product of
// factors acting on complex states) have none. Package analysis reads it for the gradient
// bounds of Galvan §1.6 [3], package train for the soft orthogonality constraint.
type Transition interface {
	// TransitionMatrix returns the name of the N×N variable holding W^rec (under the
	// cell's scope) and σ' as a function of the state, σ'(z) where h = σ(z), whose largest
	// value over a trajectory bounds diag(σ'); sigmaPrime is nil where 1 bounds σ' and the
	// states tell nothing tighter (ReLU, a transition linear in h).
	TransitionMatrix() (name string, sigmaPrime func(h float64) float64)
}

// ProjectInputs returns x·W for inputs x, [batch, In] (one step, as UnrollStates projects them)
// or [batch, T, In], and W [In, M]: [batch, M] or [batch, T, M] (W a vector [In]: [batch] or
// [batch, T]); the input product of the cells' Project. On one step's [batch, In] the gradient
// with respect to W contracts the batch axis of two matrices, which the Go backend lays out with
// its 2-D transpose; on [batch, 1, In] it would contract (batch, 1) in the middle of the adjoint,
// which the backend copies through its generic transpose at every step.
//
// A matrix W is multiplied by Product (see there for its gradient with respect to W).
func ProjectInputs(x, w *Node) *Node {
	if w.Rank() == 2 {
		return Product(x, x.Rank()-1, w, 0)
	}
	return DotGeneral(x, []int{x.Rank() - 1}, nil, w, []int{0}, nil)
}

// Times returns h·W for states h [batch, N] and W given by its transpose wT = Wᵀ [M, N], which
// a cell's Build computes once per graph (Transpose(W, 0, 1)). Contracting the last axis of wT
// makes GoMLX's gradient with respect to wT come out in wT's own layout, so the T per-step
// gradients of the recurrent matrix add up without a transpose each (the one transpose back to
// W is per graph); MatMul(h, W) transposes an N × M gradient at every step. The product is
// Product's (see there for its gradient with respect to wT).
func Times(h, wT *Node) *Node { return Product(h, 1, wT, 1) }

// TanhPrime is the derivative of tanh in terms of its value: tanh'(z) = 1 − tanh²(z) = 1 − h².
func TanhPrime(h float64) float64 { return 1 - h*h }

// Unroll runs step over the T time steps of x ([batch, T, In]) starting from state h0
// ([batch, State]; nil means step.Initial) and returns all states, [batch, T, State]
// (states[:, t] is h_{t+1}, the state after reading x_t).
//
// The graph holds one copy of Next per time step: its size grows with T.
func Unroll(step Step, x, h0 *Node) *Node {
	return Stack(UnrollStates(step, x, h0), 1)
}

// UnrollStates is Unroll with the T states h_1 … h_T returned as separate nodes,
// [batch, State] each, so that a gradient can be taken with respect to each of them.
//
// Each step projects its own input, Project(x[:, t]), rather than slicing one
// projection of all steps: the gradient of a slice is the adjoint padded with zeros to the
// whole [batch, T, P] (GoMLX's sliceVJP), so T slices of one projection cost T² · batch · P
// fills and adds in the backward pass — the largest cost of a training step of the LSTM and
// the tanh RNN at T = 128 per chunk. The inputs x are data: no gradient flows into their
// slices.
func UnrollStates(step Step, x, h0 *Node) []*Node { return UnrollStatesFlushing(step, x, h0, 0) }

// UnrollStatesFlushing is UnrollStates with the states' adjoints passed through
// FlushTinyGradient before every `every`-th step, t = 0, every, 2·every, …, in the backward
// pass (every = 0: never, UnrollStates). The graph's growth per step is UnrollStates'; the
// states and, to the values FlushTinyGradient zeroes, the gradients are the same.
func UnrollStatesFlushing(step Step, x, h0 *Node, every int) []*Node {
	batch, T := x.Shape().Dim(0), x.Shape().Dim(1)
	if h0 == nil {
		h0 = step.Initial(batch)
	}
	states := make([]*Node, T)
	h := h0
	for t := range T {
		if every > 0 && t%every == 0 {
			h = FlushTinyGradient(h)
		}
		h = step.Next(h, step.Project(Squeeze(SliceAxis(x, 1, AxisElem(t)), 1)))
		states[t] = h
	}
	return states
}

// TinyGradient is the magnitude below which FlushTinyGradient sets an adjoint's components
// to zero: far below the resolution of any float32 gradient they would be added to (2⁻²⁴
// of its value) unless that gradient is itself below about 1e-23.
const TinyGradient = 1e-30

// FlushEvery is how often, in steps, the trainer flushes the states' adjoints
// (UnrollStatesFlushing): a component that decays by less than eight orders of magnitude
// in FlushEvery steps is zeroed before it reaches the subnormal range.
const FlushEvery = 16

// FlushTinyGradient returns h; in the backward pass it sets to zero the components of h's
// adjoint smaller than TinyGradient in magnitude. A gradient that vanishes along the
// recurrence over hundreds of steps (‖∂C/∂h_t‖ of [3] §1) passes through the subnormal
// numbers (below 1.2e-38 in float32), on which the CPU takes a slow path for every
// operation; zeroed, the adjoint costs what any other does.
func FlushTinyGradient(h *Node) *Node {
	return IdentityWithCustomGradient(h, func(_, v *Node) *Node {
		return Where(LessThan(Abs(v), Scalar(v.Graph(), v.DType(), TinyGradient)), ZerosLike(v), v)
	})
}

// Sequence builds cell in g and returns the outputs of every time step, [batch, T, Out],
// and the states, [batch, T, State], for inputs x [batch, T, In].
func Sequence(cell Cell, scope *model.Scope, x *Node) (outputs, states *Node) {
	step := cell.Build(scope, x.Graph())
	states = Unroll(step, x, nil)
	return step.Readout(states), states
}

// Variable returns the node of the variable name under scope, panicking with a clear
// message when Init was not called.
func Variable(scope *model.Scope, g *Graph, name string) *Node {
	v := scope.GetVariable(name)
	if v == nil {
		// exceptions.Panicf, not panic: GoMLX turns it into an error of the Exec.
		exceptions.Panicf("rnn: variable %s/%s does not exist: call the cell's Init before Build", scope.Scope(), name)
	}
	return v.NodeValue(g)
}

// LiveVariables makes store's variables enter graph g as parameters, read from the store at
// every execution; every graph of this project that reads variables calls it first.
//
// compute's Go backend reports PreferConstantsForVariables, and GoMLX then embeds the value
// a variable has when a graph is built as a constant in any graph not marked as training.
// The project compiles a graph once and runs it many times while the variables change
// (held-out evaluation after updates, finite differences, gradient norms after training),
// so an embedded value would silently go stale. Marking the graph as training (GoMLX's
// Store.SetTraining) keeps variables as parameters; no model here reads the training flag
// otherwise.
func LiveVariables(store *model.Store, g *Graph) { store.SetTraining(g, true) }

// Constrained is implemented by the cells one of whose matrices lives on a group (unitary,
// orthogonal) and is moved along it by the cell's own rule, outside the differentiable graph,
// instead of by the optimiser: the full-capacity uRNN's Cayley step on W (Wisdom et al.
// 2016) and the scoRNN's step on the skew-symmetric A behind W (Helfrich et al. 2018).
//
// The trainer takes the gradients of every trainable variable as usual; it leaves the
// variables named by Constrained to Update (the optimiser neither clips nor moves them) and
// stores what Update returns after each optimiser step.
type Constrained interface {
	// ConstrainedVariables names the trainable variables (under the cell's scope) that
	// Update moves and the optimiser must not.
	ConstrainedVariables() []string
	// Update returns the new values of the variables it changes, by name (row-major, in
	// float64), from the current values of all the cell's variables (trainable or not), the
	// gradients of the ConstrainedVariables and the learning rate lr. It may change
	// non-trainable variables too (the scoRNN's A).
	Update(lr float64, values, grads map[string][]float64) (map[string][]float64, error)
}

// LRScaled is implemented by the cells some of whose variables their authors train at another
// learning rate than the rest (the expRNN's A: a tenth of it in Lezcano-Casado &
// Martínez-Rubio's code). The optimiser multiplies the step of each variable named (under the
// cell's scope) by its scale, > 0; the other variables keep scale 1.
type LRScaled interface {
	LRScales() map[string]float64
}

// LinearReadout is implemented by the cells whose readout is linear in the whole state,
//
//	y_t = h_t U + b_o,   U [State, Out], b_o [Out],
//
// so that it can be fitted in closed form (train.FitReadout: ridge regression on the states):
// the echo state network, whose readout is all it learns (Jaeger 2001).
type LinearReadout interface {
	// ReadoutVariables names U and b_o under the cell's scope.
	ReadoutVariables() (weights, bias string)
}

// DenseW is implemented by the cells whose state advances through one square recurrent
// matrix W that is not simply one of their variables (which Transition names): the uRNN's
// product of factors, the full-capacity uRNN's complex W, the expRNN's exp(A), the SCRN's
// block matrix over [h | s]. DenseW returns W for the variables under scope, computed on
// backend where it takes a graph, as W[k][j] = re[k][j] + i·im[k][j] (im nil for a real W),
// in the orientation of the cell's equations (W h_{t−1}; its transpose has the same
// eigenvalues and singular values). Package analysis reads it for W's spectrum.
type DenseW interface {
	DenseW(backend compute.Backend, scope *model.Scope) (re, im [][]float64, err error)
}
