package analysis

import (
	"fmt"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// GradNorms are the norms of the gradient of the loss C with respect to the hidden
// states, for t = 0..L (h_0 the initial state, h_t the state after reading x_{t−1}):
//
//	Total[t]  = ‖∂C/∂h_t‖    the total derivative, through every later step
//	                         (Arjovsky et al. 2016, §1: ∂C/∂h_t = ∂C/∂h_T · Π_{k=t}^{T−1} ∂h_{k+1}/∂h_k)
//	Direct[t] = ‖∂C_t/∂h_t‖  only through the output y_t = Readout(h_t) of the same step
//	                         (0 for t = 0 and where the mask is 0)
//
// Both are Frobenius norms of the [batch, State] gradient: the Euclidean norm over all
// state floats of all examples (for the uRNN the complex norm of h, for the LSTM that of
// [h | c]). C is the task's training loss (train.SequenceLoss: the masked mean
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
// sequence is cut into chunks of that many steps: a forward pass keeps the boundary
// states, and a backward pass over the chunks in reverse feeds ∂C/∂h at each boundary
// into the previous chunk (exact chain rule, as train.Runner does), so long sequences
// need no full-length graph. chunk = 0 unrolls the whole sequence in one graph.
func HiddenGradNorms(backend compute.Backend, scope *model.Scope, cell rnn.Cell, b *tasks.Batch, chunk int) (*GradNorms, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	sz := cell.Sizes()
	if b.NumIn != sz.In {
		return nil, fmt.Errorf("analysis: HiddenGradNorms: batch has %d inputs per step, cell %T expects %d", b.NumIn, cell, sz.In)
	}
	if chunk < 0 {
		return nil, fmt.Errorf("analysis: HiddenGradNorms: chunk = %d, want >= 0 (0 means the whole sequence)", chunk)
	}
	dt := cell.DType()
	masked := 0.0
	for _, m := range b.Mask {
		masked += float64(m)
	}
	if masked == 0 {
		return nil, fmt.Errorf("analysis: HiddenGradNorms: batch has an all-zero mask: no loss to differentiate")
	}
	store := scope.Store()
	fwd, err := model.NewExec(backend, store, func(_ *model.Scope, g *Graph, in []*Node) []*Node {
		rnn.LiveVariables(store, g)
		states := rnn.Unroll(cell.Build(scope, g), in[1], in[0])
		return []*Node{Squeeze(SliceAxis(states, 1, AxisElem(-1)), 1)}
	})
	if err != nil {
		return nil, err
	}
	bwd, err := model.NewExec(backend, store, func(_ *model.Scope, g *Graph, in []*Node) []*Node {
		rnn.LiveVariables(store, g)
		return backwardChunk(cell.Build(scope, g), in)
	})
	if err != nil {
		return nil, err
	}
	h, err := initialState(backend, scope, cell, b.Size)
	if err != nil {
		return nil, err
	}
	chunks := train.Chunks(b.Len, chunk)
	type chunkIn struct{ h, x, y, m *tensors.Tensor }
	ins := make([]chunkIn, len(chunks))
	for k, c := range chunks {
		x, y, m := train.ChunkTensors(b, c[0], c[1], dt)
		ins[k] = chunkIn{h, x, y, m}
		if k == len(chunks)-1 {
			break
		}
		if h, err = fwd.Call1(h, x); err != nil {
			return nil, fmt.Errorf("analysis: HiddenGradNorms forward on steps [%d, %d): %w", c[0], c[1], err)
		}
	}
	res := &GradNorms{Total: make([]float64, b.Len+1), Direct: make([]float64, b.Len+1)}
	norm := tensorOf(dt, []float64{masked})
	g := tensorOf(dt, make([]float64, b.Size*sz.State), b.Size, sz.State)
	for k := len(chunks) - 1; k >= 0; k-- {
		c, in := chunks[k], ins[k]
		out, err := bwd.Call(in.h, in.x, in.y, in.m, norm, g)
		if err != nil {
			return nil, fmt.Errorf("analysis: HiddenGradNorms backward on steps [%d, %d): %w", c[0], c[1], err)
		}
		g = out[0]
		copy(res.Total[c[0]+1:c[1]+1], floats(out[1]))
		copy(res.Direct[c[0]+1:c[1]+1], floats(out[2]))
		res.Loss += floats(out[3])[0]
	}
	res.Total[0] = norm2(floats(g))
	return res, nil
}

// backwardChunk builds the backward graph of one chunk: in = [h_in [B, S], x [B, C, In],
// targets, mask [B, C], norm (total mask), ∂C/∂h_out [B, S]] → [∂C/∂h_in, ‖∂C/∂h_t‖ [C],
// ‖∂C_t/∂h_t‖ [C], the chunk's loss]. It differentiates
//
//	f = C_chunk(h_in) + ⟨h_out, ∂C/∂h_out⟩
//
// whose gradient with respect to each state of the chunk is the total ∂C/∂h_t (chain rule).
func backwardChunk(step rnn.Step, in []*Node) []*Node {
	hIn, x, targets, mask, norm, gOut := in[0], in[1], in[2], in[3], in[4], in[5]
	px := step.Project(x)
	C := x.Shape().Dim(1)
	states := make([]*Node, C)
	h := hIn
	for t := range C {
		h = step.Next(h, Squeeze(SliceAxis(px, 1, AxisElem(t)), 1))
		states[t] = h
	}
	stacked := Stack(states, 1) // [B, C, S]: the readout sees the states only through this node
	loss := train.SequenceLoss(step.Readout(stacked), targets, mask, norm)
	f := Add(loss, ReduceAllSum(Mul(h, gOut)))
	grads := Gradient(f, append([]*Node{hIn, stacked}, states...)...)
	frob := func(g *Node) *Node { return Sqrt(ReduceSum(Square(g), 0, 2)) } // [B, C, S] → [C]
	return []*Node{grads[0], frob(Stack(grads[2:], 1)), frob(grads[1]), loss}
}
