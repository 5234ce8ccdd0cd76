package train

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// ModelScope is the scope under which a Runner's cell keeps its variables.
const ModelScope = "/model"

// Runner computes the loss of a cell on task batches, and its exact gradient with respect
// to every trainable variable, one chunk graph at a time: a seq.Walker (whose Backend, Cell,
// Chunk, HiddenGradScale and ReadLast it shows; NewRunner sets ReadLast) with the loss, the
// accuracy and the gradients as hooks.
type Runner struct {
	*seq.Walker
	Store *model.Store
	// Vars are the cell's trainable variables, sorted by path: the order of gradients.
	Vars []*model.Variable

	initGradExec *model.Exec
}

// NewRunner returns a Runner for cell, whose variables must already exist under
// ModelScope in store (cell.Init(store.Scope(ModelScope), rng)). chunk is the number of
// time steps per graph; 0, or a value ≥ the sequence length, unrolls the whole sequence in
// one graph.
func NewRunner(backend compute.Backend, store *model.Store, cell rnn.Cell, chunk int) (*Runner, error) {
	r := &Runner{Store: store}
	scope := store.Scope(ModelScope)
	for v := range scope.IterVariables() {
		if v.Trainable {
			r.Vars = append(r.Vars, v)
		}
	}
	if len(r.Vars) == 0 {
		return nil, fmt.Errorf("train: no trainable variable under %s: call the cell's Init(store.Scope(train.ModelScope), rng) first", ModelScope)
	}
	slices.SortFunc(r.Vars, func(a, b *model.Variable) int { return strings.Compare(a.Path(), b.Path()) })
	var err error
	r.Walker, err = seq.NewWalker(backend, scope, cell, chunk, seq.Hooks{Forward: lossAndAccuracy, Backward: r.backward})
	if err != nil {
		return nil, err
	}
	r.ReadLast = true // only the loss and the gradients leave the chunk graphs
	r.FlushEvery = rnn.FlushEvery
	// in = [∂ℒ/∂h_0] → ∂ℒ/∂θ through h_0 = Initial(θ).
	r.initGradExec, err = model.NewExec(backend, store, func(_ *model.Scope, g *Graph, in []*Node) []*Node {
		rnn.LiveVariables(store, g)
		h0 := cell.Build(scope, g).Initial(in[0].Shape().Dim(0))
		return Gradient(ReduceAllSum(Mul(h0, in[0])), r.varNodes(g)...)
	})
	return r, err
}

// varNodes returns the nodes of r.Vars in g.
func (r *Runner) varNodes(g *Graph) []*Node {
	nodes := make([]*Node, len(r.Vars))
	for i, v := range r.Vars {
		nodes[i] = v.NodeValue(g)
	}
	return nodes
}

// lossAndAccuracy is the forward hook: the chunk's loss and its number of masked steps
// predicted right (0 for regression).
func lossAndAccuracy(c *seq.ChunkGraph) []*Node {
	out := c.Outputs()
	acc := ScalarZero(out.Graph(), out.DType())
	if c.Targets.DType().IsInt() {
		acc = seq.Accuracy(out, c.Targets, c.Mask, out.DType())
	}
	return []*Node{c.Loss(), acc}
}

// backward is the backward hook: it carries the accumulated ∂ℒ/∂θ (zeros for the variables
// the chunk does not use) plus this chunk's, and returns lossAndAccuracy.
func (r *Runner) backward(c *seq.ChunkGraph) (carry, out []*Node) {
	grads := c.Gradient(r.varNodes(c.HIn.Graph())...)
	for i, sum := range c.Carry {
		carry = append(carry, Add(sum, grads[i]))
	}
	return carry, lossAndAccuracy(c)
}

// Result is the outcome of one pass over a batch.
type Result struct {
	Loss    float64 // the task's loss (mean over the masked steps)
	Correct float64 // masked steps predicted right (classification), else 0
	Masked  float64 // number of masked steps
	Grads   []*tensors.Tensor
	FinalH  *tensors.Tensor // state after the last step, [B, State] (Forward only)
}

// Forward returns the loss (and accuracy counts) of the cell on b without gradients.
func (r *Runner) Forward(b *tasks.Batch) (*Result, error) {
	return r.run(context.Background(), b, false)
}

// Gradients returns the loss on b and its gradient with respect to r.Vars.
func (r *Runner) Gradients(b *tasks.Batch) (*Result, error) {
	return r.run(context.Background(), b, true)
}

// run computes the loss, and the gradients if backward is set; it returns ctx.Err() at the
// first chunk boundary after ctx is cancelled (Trainer.Run's interrupt).
func (r *Runner) run(ctx context.Context, b *tasks.Batch, backward bool) (*Result, error) {
	res := &Result{Masked: seq.Masked(b)}
	if res.Masked == 0 {
		return nil, fmt.Errorf("train: batch has an all-zero mask: no step to compute a loss on")
	}
	add := func(_ [2]int, out []*tensors.Tensor) {
		res.Loss += scalar(out[0])
		res.Correct += scalar(out[1])
	}
	var err error
	if !backward {
		res.FinalH, err = r.Walker.Forward(ctx, b, add)
		return res, err
	}
	acc := make([]*tensors.Tensor, len(r.Vars))
	for i, v := range r.Vars {
		acc[i] = seq.FloatTensor(v.DType(), make([]float64, v.Shape().Size()), v.Shape().Dimensions...)
	}
	// The backward graphs compute every chunk's loss again: only the last one's is new.
	g0, acc, err := r.Walker.Backward(ctx, b, acc, add, func(span [2]int, out []*tensors.Tensor) {
		if span[1] == b.Len {
			add(span, out)
		}
	})
	if err != nil {
		return nil, err
	}
	initGrads, err := r.initGradExec.Call(g0)
	if err != nil {
		return nil, err
	}
	res.Grads = make([]*tensors.Tensor, len(acc))
	for i := range acc {
		res.Grads[i] = addTensors(acc[i], initGrads[i])
	}
	return res, nil
}

func scalar(t *tensors.Tensor) float64 {
	switch v := t.Value().(type) {
	case float32:
		return float64(v)
	case float64:
		return v
	}
	panic(fmt.Sprintf("train: scalar of %s", t.Shape()))
}

// addTensors returns a + b elementwise (same shape, float32 or float64).
func addTensors(a, b *tensors.Tensor) *tensors.Tensor {
	switch a.DType().Size() {
	case 8:
		x, y := tensors.MustCopyFlatData[float64](a), tensors.MustCopyFlatData[float64](b)
		for i := range x {
			x[i] += y[i]
		}
		return tensors.FromFlatDataAndDimensions(x, a.Shape().Dimensions...)
	default:
		x, y := tensors.MustCopyFlatData[float32](a), tensors.MustCopyFlatData[float32](b)
		for i := range x {
			x[i] += y[i]
		}
		return tensors.FromFlatDataAndDimensions(x, a.Shape().Dimensions...)
	}
}
