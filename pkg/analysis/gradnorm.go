package analysis

import (
	"context"
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// GradNorms are the norms of the gradient of the loss C with respect to the hidden
// states, for t = 0..L (h_0 the initial state, h_t the state after reading x_{t−1}):
//
//	Total[t]  = ‖∂C/∂h_t‖    the total derivative, through every later step
//	                         (Arjovsky et al. 2016, §1: ∂C/∂h_t = ∂C/∂h_T · Π_{k=t}^{T−1} ∂h_{k+1}/∂h_k)
//	Direct[t] = ‖∂C_t/∂h_t‖  only through the output y_t = Readout(h_t) of the same step
//	                         (0 for t = 0 and where the mask is 0)
//
// Both are Frobenius norms of the [batch, State] gradient, summed in float64: the Euclidean
// norm over all state floats of all examples (for the uRNN the complex norm of h, for the
// LSTM that of [h | c]). C is the task's training loss (seq.SequenceLoss: the masked mean
// cross-entropy, or the MSE at the last step for adding), so the norms are those of the
// gradients training back-propagates. Loss is C.
type GradNorms struct {
	Total, Direct []float64
	Loss          float64
}

// HiddenGradNorms computes GradNorms of cell (variables under scope, e.g.
// trainer.Store.Scope(train.ModelScope) after training, or a freshly initialised scope)
// on batch b with GoMLX's reverse-mode autodiff. The sequence is unrolled with every state
// an explicit node (h_t = step.Next(h_{t−1}, px_t)) and graph.Gradient is taken with
// respect to each of them, so Total[t] is the total derivative. With chunk > 0 the
// sequence is cut into chunks of that many steps and walked by a seq.Walker: a forward
// pass keeps the boundary states, and a backward pass over the chunks in reverse feeds
// ∂C/∂h at each boundary into the previous chunk (exact chain rule, as in training), so
// long sequences need no full-length graph. chunk = 0 unrolls the whole sequence in one
// graph.
func HiddenGradNorms(backend compute.Backend, scope *model.Scope, cell rnn.Cell, b *tasks.Batch, chunk int) (*GradNorms, error) {
	res := &GradNorms{}
	w, err := seq.NewWalker(backend, scope, cell, chunk, seq.Hooks{Backward: stateGradNorms})
	if err != nil {
		return nil, fmt.Errorf("analysis: HiddenGradNorms: %w", err)
	}
	g0, _, err := w.Backward(context.Background(), b, nil, nil, func(c [2]int, out []*tensors.Tensor) {
		if res.Total == nil { // the last chunk, b checked
			res.Total, res.Direct = make([]float64, b.Len+1), make([]float64, b.Len+1)
		}
		copy(res.Total[c[0]+1:c[1]+1], floats(out[0]))
		copy(res.Direct[c[0]+1:c[1]+1], floats(out[1]))
		res.Loss += floats(out[2])[0]
	})
	if err != nil {
		return nil, fmt.Errorf("analysis: HiddenGradNorms: %w", err)
	}
	res.Total[0] = norm2(floats(g0))
	return res, nil
}

// stateGradNorms is the backward hook of HiddenGradNorms: ‖∂C/∂h_t‖ [C] and ‖∂C_t/∂h_t‖ [C]
// for the states of the chunk, and the chunk's loss. The gradient of
//
//	f = C_chunk(h_in) + ⟨h_out, ∂C/∂h_out⟩
//
// with respect to each state is the total ∂C/∂h_t (chain rule), and with respect to the
// stacked states, through which alone the readout sees them, the direct one (so the walker
// of HiddenGradNorms leaves seq.Walker.ReadLast unset: its readout reads every state).
func stateGradNorms(c *seq.ChunkGraph) (carry, out []*Node) {
	grads := c.Gradient(append([]*Node{c.Stacked}, c.States...)...)
	// In float64: the squares of a float32 gradient above ~1.8e19 overflow float32, and a norm
	// that is infinite where every element is finite would misreport an exploding gradient.
	frob := func(g *Node) *Node { return Sqrt(ReduceSum(Square(ConvertDType(g, dtypes.Float64)), 0, 2)) } // [B, C, S] → [C]
	return nil, []*Node{frob(Stack(grads[1:], 1)), frob(grads[0]), c.Loss()}
}
