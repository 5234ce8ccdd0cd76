package seq

import (
	"context"
	"fmt"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// ChunkGraph is one chunk of a sequence built into a graph, as the Hooks of a Walker see
// it (B the batch, C the chunk's steps).
type ChunkGraph struct {
	Step rnn.Step
	// HIn is the state entering the chunk [B, State], X its inputs [B, C, In]; Targets,
	// Mask and Norm are as SequenceLoss takes them (Targets and Mask of the chunk's last step
	// alone, [B, 1], when it reads out its last state only: see Walker.ReadLast).
	HIn, X, Targets, Mask, Norm *Node
	// States are h after each step of the chunk, [B, State] each, as separate nodes (a
	// gradient can be taken with respect to each); Stacked is them stacked, [B, C, State],
	// the only node through which Outputs sees them (HOut alone when the chunk reads out its
	// last state only: Walker.ReadLast); HOut is the last state. A chunk computed by an
	// rnn.Filter (Walker.Parallel) has no States or Stacked: Outputs come from the filter.
	States        []*Node
	Stacked, HOut *Node
	// GOut is ∂ℒ/∂h_out [B, State] and Carry the values carried from the later chunk
	// (backward graphs only).
	GOut  *Node
	Carry []*Node

	gradScale          float64
	readLast           bool
	outputs, loss, gIn *Node
}

// Outputs returns Readout(Stacked), [B, C, Out], or Readout(HOut), [B, 1, Out], when the
// chunk reads out its last state only (Walker.ReadLast); built once. With
// Walker.HiddenGradScale the gradient that reaches the states from them is scaled.
func (c *ChunkGraph) Outputs() *Node {
	if c.outputs == nil {
		states := c.Stacked
		if c.readLast {
			states = InsertAxes(c.HOut, 1)
		}
		if s := c.gradScale; s != 0 && s != 1 {
			states = IdentityWithCustomGradient(states, func(_, v *Node) *Node { return MulScalar(v, s) })
		}
		c.outputs = c.Step.Readout(states)
	}
	return c.outputs
}

// Loss returns the chunk's share of the loss, SequenceLoss(Outputs(), Targets, Mask, Norm)
// (built once).
func (c *ChunkGraph) Loss() *Node {
	if c.loss == nil {
		c.loss = SequenceLoss(c.Outputs(), c.Targets, c.Mask, c.Norm)
	}
	return c.loss
}

// Gradient returns the gradients of f = Loss() + ⟨HOut, GOut⟩ with respect to wrt, taken in
// one pass together with ∂f/∂HIn = ∂ℒ/∂h_in, which the Walker carries to the earlier chunk
// (see the package doc). Backward graphs only; call it at most once.
func (c *ChunkGraph) Gradient(wrt ...*Node) []*Node {
	f := Add(c.Loss(), ReduceAllSum(Mul(c.HOut, c.GOut)))
	grads := Gradient(f, append([]*Node{c.HIn}, wrt...)...)
	c.gIn = grads[0]
	return grads[1:]
}

// Hooks choose what the chunk graphs of a Walker return besides the state (forward) or
// its adjoint (backward). Either may be nil.
type Hooks struct {
	// Forward returns the outputs of a forward chunk graph besides h_out.
	Forward func(c *ChunkGraph) []*Node
	// Backward returns the outputs of a backward chunk graph besides ∂ℒ/∂h_in: the values
	// carried to the earlier chunk (as many as c.Carry, of the same shapes) and the others.
	// If it does not call c.Gradient, the walker does (with no wrt).
	Backward func(c *ChunkGraph) (carry, out []*Node)
}

// Visit receives the [start, end) steps of a chunk and the outputs its hook added.
type Visit func(span [2]int, out []*tensors.Tensor)

// Walker runs a cell over batches chunk by chunk (see the package doc). Its chunk graphs
// are built on first use, one per distinct chunk length and batch size, and reused.
type Walker struct {
	Backend compute.Backend
	Scope   *model.Scope // where the cell's variables live
	Cell    rnn.Cell
	// Chunk is the number of time steps per graph; 0, or a value ≥ the sequence length,
	// unrolls the whole sequence in one graph.
	Chunk int
	// HiddenGradScale, when not 0 or 1, multiplies the gradient that reaches each hidden
	// state h_t from the outputs (Henaff et al. §4 use 1/T, T the number of time steps):
	// every gradient through the recurrence is scaled, the readout's own is not. Set it
	// before the first walk (the graphs are built then).
	HiddenGradScale float64
	// ReadLast, when set, makes the chunks of a batch whose mask is zero before its last step
	// (the adding problem, pixel MNIST: the loss reads the last output only) read out their
	// last state only: their graphs get the mask and labels of that step alone ([B, 1]) and
	// Outputs is [B, 1, Out], so the readouts of the other steps, which the mask zeroes, are
	// neither computed nor differentiated (the gradient of the stacked states was sliced
	// back into every step). The loss and gradients are the full readout's (tested in package
	// train); the chunk of a batch whose mask is not of that form reads every step. Hooks
	// that need every step's output leave it unset. Set it before the first walk.
	ReadLast bool
	// Parallel, when set, computes a chunk whose Step is an rnn.Filter by its Filter (the
	// outputs and the last state, without the states; ChunkGraph.States and Stacked are then
	// nil), or else, an rnn.Sequencer, by its States (one scan; ChunkGraph.States is then nil:
	// no gradient can be taken with respect to each state; Stacked and HOut are as before),
	// instead of a Next per step. With HiddenGradScale, which acts on the states, a Filter is
	// computed by its States. Set it before the first walk.
	Parallel bool
	// FlushEvery, when > 0, passes the states' adjoints through rnn.FlushTinyGradient every
	// FlushEvery steps of a chunk unrolled step by step (rnn.UnrollStatesFlushing), so that a
	// vanishing gradient does not linger in the slow subnormal numbers. The trainer sets it;
	// the gradient analysis (package analysis), which measures how small the gradients get,
	// does not. Set it before the first walk.
	FlushEvery int

	initExec, fwdExec, bwdExec *model.Exec
}

// NewWalker returns a Walker of cell, whose variables must exist under scope.
func NewWalker(backend compute.Backend, scope *model.Scope, cell rnn.Cell, chunk int, hooks Hooks) (*Walker, error) {
	if chunk < 0 {
		return nil, fmt.Errorf("seq: Chunk = %d, want >= 0 (0 means the whole sequence)", chunk)
	}
	w := &Walker{Backend: backend, Scope: scope, Cell: cell, Chunk: chunk}
	var err error
	mk := func(fn func(g *Graph, in []*Node) []*Node) *model.Exec {
		if err != nil {
			return nil
		}
		var e *model.Exec
		e, err = model.NewExec(backend, scope.Store(), func(_ *model.Scope, g *Graph, in []*Node) []*Node {
			rnn.LiveVariables(scope.Store(), g)
			return fn(g, in)
		})
		return e
	}
	// in = [ref [B]] → h_0 [B, State].
	w.initExec = mk(func(g *Graph, in []*Node) []*Node {
		return []*Node{w.Cell.Build(w.Scope, g).Initial(in[0].Shape().Dim(0))}
	})
	// in = [h_in, x, targets, mask, norm] → [h_out, Hooks.Forward…].
	w.fwdExec = mk(func(g *Graph, in []*Node) []*Node {
		c := w.chunkGraph(g, in)
		out := []*Node{c.HOut}
		if hooks.Forward != nil {
			out = append(out, hooks.Forward(c)...)
		}
		return out
	})
	// in = [h_in, x, targets, mask, norm, ∂ℒ/∂h_out, carry…] → [∂ℒ/∂h_in, carry…, others…].
	w.bwdExec = mk(func(g *Graph, in []*Node) []*Node {
		c := w.chunkGraph(g, in)
		c.GOut, c.Carry = in[5], in[6:]
		var carry, others []*Node
		if hooks.Backward != nil {
			carry, others = hooks.Backward(c)
		}
		if c.gIn == nil {
			c.Gradient()
		}
		return append(append([]*Node{c.gIn}, carry...), others...)
	})
	return w, err
}

// chunkGraph builds the chunk of inputs in = [h_in, x, targets, mask, norm, …] into g.
func (w *Walker) chunkGraph(g *Graph, in []*Node) *ChunkGraph {
	c := &ChunkGraph{Step: w.Cell.Build(w.Scope, g), HIn: in[0], X: in[1], Targets: in[2], Mask: in[3], Norm: in[4],
		gradScale: w.HiddenGradScale}
	// The mask has one column in the chunks of a walk that reads last (chunkArgs), and in a
	// chunk of one step, which reads the same either way when the walker reads last (a walker
	// that does not keeps Stacked as the readout's input: analysis differentiates through it).
	c.readLast = w.ReadLast && c.Mask.Shape().Dim(1) == 1
	if f, ok := c.Step.(rnn.Filter); ok && w.Parallel && (c.gradScale == 0 || c.gradScale == 1) {
		outputs, last := f.Filter(c.HIn, c.X)
		c.HOut = last
		if !c.readLast {
			c.outputs = outputs
		}
		return c
	}
	if sq, ok := c.Step.(rnn.Sequencer); ok && w.Parallel {
		c.Stacked = sq.States(c.HIn, c.X)
		T := c.Stacked.Shape().Dim(1)
		c.HOut = Squeeze(SliceAxis(c.Stacked, 1, AxisRange(T-1, T)), 1)
		return c
	}
	c.States = rnn.UnrollStatesFlushing(c.Step, c.X, c.HIn, w.FlushEvery)
	c.HOut = c.States[len(c.States)-1]
	c.Stacked = Stack(c.States, 1)
	return c
}

// CheckChunk returns an error when chunk cuts a sequence of length L that cell must see whole
// (rnn.WholeSequence: a bidirectional RNN reads each chunk backwards from its own end, so its
// outputs would miss the later chunks), or nil: chunk 0 or >= L, or a cell that runs forward only.
func CheckChunk(cell rnn.Cell, chunk, L int) error {
	if _, ok := cell.(rnn.WholeSequence); ok && chunk > 0 && chunk < L {
		return fmt.Errorf("seq: %T reads its sequences backwards too (rnn.WholeSequence), and a chunk of %d steps would cut the %d of each: want Chunk 0 (the whole sequence in one graph) or >= %d", cell, chunk, L, L)
	}
	return nil
}

// walk is one batch on its way through the chunks.
type walk struct {
	b     *tasks.Batch
	dtype dtypes.DType
	spans [][2]int
	norm  *tensors.Tensor // Σ mask, the norm of SequenceLoss
	last  bool            // the chunks read out their last state only (Walker.ReadLast)
}

// start checks b and returns its walk and h_0.
func (w *Walker) start(b *tasks.Batch) (*walk, *tensors.Tensor, error) {
	if err := b.Check(); err != nil {
		return nil, nil, err
	}
	if err := CheckChunk(w.Cell, w.Chunk, b.Len); err != nil {
		return nil, nil, err
	}
	if s := w.Cell.Sizes(); b.NumIn != s.In {
		return nil, nil, fmt.Errorf("seq: batch has %d inputs per step, cell %T expects %d", b.NumIn, w.Cell, s.In)
	}
	dt := w.Cell.DType()
	p := &walk{b: b, dtype: dt, spans: Chunks(b.Len, w.Chunk), norm: FloatTensor(dt, []float64{Masked(b)}),
		last: w.ReadLast && LastStepOnly(b)}
	h, err := w.initExec.Call1(FloatTensor(dt, make([]float64, b.Size), b.Size))
	return p, h, err
}

// chunkArgs returns the inputs of chunk k entered with state h.
func (p *walk) chunkArgs(k int, h *tensors.Tensor) []any {
	x, y, m := ChunkTensors(p.b, p.spans[k][0], p.spans[k][1], p.dtype)
	if p.last {
		y, m = LastStepTensors(p.b, p.spans[k][1], p.dtype)
	}
	return []any{h, x, y, m, p.norm}
}

// forward runs chunks [0, n) from h, visiting each, and returns the inputs of every chunk
// it ran and the state after the last.
func (w *Walker) forward(ctx context.Context, p *walk, h *tensors.Tensor, n int, visit Visit) ([][]any, *tensors.Tensor, error) {
	args := make([][]any, n)
	for k := range n {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		args[k] = p.chunkArgs(k, h)
		out, err := w.fwdExec.Call(args[k]...)
		if err != nil {
			return nil, nil, fmt.Errorf("seq: forward on steps [%d, %d): %w", p.spans[k][0], p.spans[k][1], err)
		}
		h = out[0]
		if visit != nil {
			visit(p.spans[k], out[1:])
		}
	}
	return args, h, nil
}

// Forward runs b through every chunk from the cell's h_0, calling visit (if not nil) with
// each chunk's steps and the outputs of Hooks.Forward, and returns the state after the last
// step, [B, State]. It returns ctx.Err() at the first chunk boundary after ctx is cancelled.
func (w *Walker) Forward(ctx context.Context, b *tasks.Batch, visit Visit) (*tensors.Tensor, error) {
	p, h, err := w.start(b)
	if err != nil {
		return nil, err
	}
	_, h, err = w.forward(ctx, p, h, len(p.spans), visit)
	return h, err
}

// Backward differentiates the loss on b (see the package doc). A forward sweep over every
// chunk but the last keeps the boundary states, calling fwd (if not nil) as Forward does;
// a backward sweep from the last chunk to the first, starting from ∂ℒ/∂h_L = 0 and carry,
// calls bwd (if not nil) with each chunk's steps and the outputs of Hooks.Backward that
// are not carried. It returns ∂ℒ/∂h_0, [B, State], and the carry after the first chunk,
// or ctx.Err() at the first chunk boundary after ctx is cancelled. It returns an error
// if b's mask is all zero (no loss to differentiate).
func (w *Walker) Backward(ctx context.Context, b *tasks.Batch, carry []*tensors.Tensor, fwd, bwd Visit) (*tensors.Tensor, []*tensors.Tensor, error) {
	if Masked(b) == 0 {
		return nil, nil, fmt.Errorf("seq: batch has an all-zero mask: no loss to differentiate")
	}
	p, h, err := w.start(b)
	if err != nil {
		return nil, nil, err
	}
	last := len(p.spans) - 1
	args, h, err := w.forward(ctx, p, h, last, fwd)
	if err != nil {
		return nil, nil, err
	}
	args = append(args, p.chunkArgs(last, h))
	sz := w.Cell.Sizes()
	g := FloatTensor(w.Cell.DType(), make([]float64, b.Size*sz.State), b.Size, sz.State)
	nc := len(carry)
	for k := last; k >= 0; k-- {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		in := append(slices.Clip(args[k]), g)
		for _, c := range carry {
			in = append(in, c)
		}
		out, err := w.bwdExec.Call(in...)
		if err != nil {
			return nil, nil, fmt.Errorf("seq: backward on steps [%d, %d): %w", p.spans[k][0], p.spans[k][1], err)
		}
		g, carry = out[0], out[1:1+nc]
		if bwd != nil {
			bwd(p.spans[k], out[1+nc:])
		}
	}
	return g, carry, nil
}
