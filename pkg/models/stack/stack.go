// Package stack is the stacked (deep) recurrent network of Barber's slides ("multiple LSTM or
// GRU units in a net … stacked LSTM"; Sutskever et al. 2014 used four layers) and Galvan §2.1:
// layers of any cells, each reading the one below at every time step,
//
//	h¹_t = f¹(h¹_{t−1}, x_t),   hˡ_t = fˡ(hˡ_{t−1}, yˡ⁻¹_t),   yˡ_t = Readoutˡ(hˡ_t),   y_t = y^L_t,
//
// where layer l's readout (a linear map of its state for every cell here) is the connection
// to layer l + 1, so that a layer is any rnn.Cell as it stands: Layers[l].Out must equal
// Layers[l+1].In. The state is the layers' states side by side, [h¹ | h² | … | h^L], one node
// as package rnn asks, so that training, chunked backpropagation and the gradient analysis
// treat a stack as any other cell.
//
// A layer whose matrices are moved by a rule of its own (rnn.Constrained: the full-capacity
// uRNN, the scoRNN) is refused: its variables would live under the stack's scope, where the
// trainer does not look for them.
package stack

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Cell is a stack of recurrent layers, the first reading the inputs, the last giving the
// outputs.
type Cell struct {
	Layers []rnn.Cell
}

// New returns a stack of layers.
func New(layers ...rnn.Cell) *Cell { return &Cell{Layers: layers} }

// layerScope is where layer l keeps its variables, under the stack's scope (At: Init and
// every Build visit it).
func layerScope(scope *model.Scope, l int) *model.Scope { return scope.At("layer%d", l) }

// Sizes implements rnn.Cell: the first layer's inputs, the layers' states together, the
// last layer's outputs.
func (c *Cell) Sizes() rnn.Sizes {
	if len(c.Layers) == 0 {
		return rnn.Sizes{}
	}
	s := rnn.Sizes{In: c.Layers[0].Sizes().In, Out: c.Layers[len(c.Layers)-1].Sizes().Out}
	for _, l := range c.Layers {
		s.State += l.Sizes().State
	}
	return s
}

// DType implements rnn.Cell: the layers' (Init checks that they agree).
func (c *Cell) DType() dtypes.DType {
	if len(c.Layers) == 0 {
		return dtypes.Float32
	}
	return c.Layers[0].DType()
}

// NumParams returns the layers' trainable parameters added up.
func (c *Cell) NumParams() int {
	n := 0
	for _, l := range c.Layers {
		if p, ok := l.(interface{ NumParams() int }); ok {
			n += p.NumParams()
		}
	}
	return n
}

var _ rnn.LRScaled = (*Cell)(nil)

// LRScales implements rnn.LRScaled: the layers' own scales (the deep LRU's recurrent
// parameters, lru.Block.RecurrentLR), each name under its layer's scope ("layer0/nu_log");
// nil when no layer scales any.
func (c *Cell) LRScales() map[string]float64 {
	var out map[string]float64
	for l, layer := range c.Layers {
		s, ok := layer.(rnn.LRScaled)
		if !ok {
			continue
		}
		for name, scale := range s.LRScales() {
			if out == nil {
				out = map[string]float64{}
			}
			out[fmt.Sprintf("layer%d/%s", l, name)] = scale
		}
	}
	return out
}

var _ rnn.BatchStatistics = (*Cell)(nil)

// BatchStatistics implements rnn.BatchStatistics: whether any layer normalises by batch
// statistics.
func (c *Cell) BatchStatistics() bool {
	for _, layer := range c.Layers {
		if s, ok := layer.(rnn.BatchStatistics); ok && s.BatchStatistics() {
			return true
		}
	}
	return false
}

// check returns an error naming the first layer that does not fit: none at all, a nil
// layer, a constrained one, another dtype, or inputs that are not the outputs of the layer
// below.
func (c *Cell) check() error {
	if len(c.Layers) == 0 {
		return fmt.Errorf("stack.Cell: Layers is empty, want at least 1 layer")
	}
	for l, layer := range c.Layers {
		switch {
		case layer == nil:
			return fmt.Errorf("stack.Cell: Layers[%d] is nil", l)
		case layer.DType() != c.DType():
			return fmt.Errorf("stack.Cell: Layers[%d] is %s, Layers[0] %s: want one dtype", l, layer.DType(), c.DType())
		case l > 0 && layer.Sizes().In != c.Layers[l-1].Sizes().Out:
			return fmt.Errorf("stack.Cell: Layers[%d].In = %d, want Layers[%d].Out = %d (a layer reads the one below)", l, layer.Sizes().In, l-1, c.Layers[l-1].Sizes().Out)
		}
		if _, ok := layer.(rnn.WholeSequence); ok {
			return fmt.Errorf("stack.Cell: Layers[%d] (%T) reads its sequences backwards too (rnn.WholeSequence), which a layer read step by step cannot", l, layer)
		}
		if _, ok := layer.(rnn.Constrained); ok {
			return fmt.Errorf("stack.Cell: Layers[%d] (%T) moves its matrices by a rule of its own (rnn.Constrained), which a stack does not carry", l, layer)
		}
	}
	return nil
}

// Init implements rnn.Cell: each layer's own initialisation, from a seed drawn from rng for
// it. Every layer is first initialised in a scratch store, so that a layer that refuses its
// configuration leaves no variable of the layers below it behind.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.check(); err != nil {
		return err
	}
	seeds := make([]uint64, len(c.Layers))
	for l := range seeds {
		seeds[l] = rng.Uint64()
	}
	layerRNG := func(l int) *rand.Rand { return rand.New(rand.NewPCG(seeds[l], uint64(l))) }
	for l, layer := range c.Layers {
		if err := layer.Init(model.NewStore().Scope("/scratch"), layerRNG(l)); err != nil {
			return fmt.Errorf("stack.Cell: Layers[%d]: %w", l, err)
		}
	}
	for l, layer := range c.Layers {
		if err := layer.Init(layerScope(scope, l), layerRNG(l)); err != nil {
			return fmt.Errorf("stack.Cell: Layers[%d]: %w", l, err)
		}
	}
	return nil
}

// Build implements rnn.Cell.
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	s := &step{}
	for l, layer := range c.Layers {
		s.steps = append(s.steps, layer.Build(layerScope(scope, l), g))
		s.widths = append(s.widths, layer.Sizes().State)
	}
	return s
}

type step struct {
	steps  []rnn.Step
	widths []int // each layer's state width
}

// split returns each layer's part of the stacked states [..., State].
func (s *step) split(h *Node) []*Node {
	parts := make([]*Node, len(s.steps))
	at := 0
	for l, w := range s.widths {
		parts[l] = SliceAxis(h, -1, AxisRange(at, at+w))
		at += w
	}
	return parts
}

func (s *step) Initial(batch int) *Node {
	var h []*Node
	for _, st := range s.steps {
		h = append(h, st.Initial(batch))
	}
	return Concatenate(h, -1)
}

// Project is the first layer's: only it reads the inputs.
func (s *step) Project(x *Node) *Node { return s.steps[0].Project(x) }

func (s *step) Next(h, px *Node) *Node {
	parts := s.split(h)
	for l, st := range s.steps {
		if l > 0 {
			px = st.Project(s.steps[l-1].Readout(parts[l-1]))
		}
		parts[l] = st.Next(parts[l], px)
	}
	return Concatenate(parts, -1)
}

// Readout is the last layer's, of its part of the states.
func (s *step) Readout(states *Node) *Node {
	parts := s.split(states)
	return s.steps[len(s.steps)-1].Readout(parts[len(parts)-1])
}
