package stack

import (
	. "github.com/gomlx/gomlx/core/graph"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

var (
	_ rnn.Sequencer = (*step)(nil)
	_ rnn.Filter    = (*step)(nil)
)

// States implements rnn.Sequencer: the states of a chunk layer by layer, each layer over the
// whole chunk before the next reads its outputs — by the layer's own States when its step is
// an rnn.Sequencer (the LRU blocks: one scan), else by its steps (rnn.UnrollStates) — side by
// side, [batch, T, State]: the values of T calls of Next, which interleave the layers step by
// step, since layer l + 1 reads only layer l's output at the same step.
func (s *step) States(h0, x *Node) *Node {
	parts := s.split(h0)
	states := make([]*Node, len(s.steps))
	for l, st := range s.steps {
		states[l] = layerStates(st, parts[l], x)
		x = st.Readout(states[l])
	}
	return Concatenate(states, -1)
}

// Filter implements rnn.Filter: layer by layer as States, a layer's outputs by its own Filter
// when its step is an rnn.Filter (the LRU blocks), else read out from its states; the last
// state is the layers' last states side by side. The stacked states are never formed, nor
// sliced back into layers.
func (s *step) Filter(h0, x *Node) (outputs, last *Node) {
	parts := s.split(h0)
	lasts := make([]*Node, len(s.steps))
	for l, st := range s.steps {
		if f, ok := st.(rnn.Filter); ok {
			x, lasts[l] = f.Filter(parts[l], x)
			continue
		}
		states := layerStates(st, parts[l], x)
		lasts[l] = Squeeze(SliceAxis(states, 1, AxisElem(states.Shape().Dim(1)-1)), 1)
		x = st.Readout(states)
	}
	return x, Concatenate(lasts, -1)
}

// layerStates returns the states [batch, T, State] of layer step st for the inputs x from h0:
// by its States when it is an rnn.Sequencer, else by its steps.
func layerStates(st rnn.Step, h0, x *Node) *Node {
	if sq, ok := st.(rnn.Sequencer); ok {
		return sq.States(h0, x)
	}
	return Stack(rnn.UnrollStates(st, x, h0), 1)
}
