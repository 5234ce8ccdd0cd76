package train

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// ModelScope is the scope under which a Runner's cell keeps its variables.
const ModelScope = "/model"

// Runner computes the loss of a cell on task batches, and its exact gradient with respect
// to every trainable variable, one chunk graph at a time (see the package doc).
type Runner struct {
	Backend compute.Backend
	Store   *model.Store
	Cell    rnn.Cell
	// Chunk is the number of time steps per graph; 0, or a value ≥ the sequence length,
	// unrolls the whole sequence in one graph.
	Chunk int
	// Vars are the cell's trainable variables, sorted by path: the order of gradients.
	Vars []*model.Variable
	// HiddenGradScale, when not 0 or 1, multiplies the gradient that reaches each hidden
	// state h_t from the outputs (Henaff et al. §4 use 1/T, T the number of time steps):
	// every gradient through the recurrence is scaled, the decoder's own is not. Set it
	// before the first call (the graphs are built then).
	HiddenGradScale float64

	initExec, initGradExec, fwdExec, bwdExec *model.Exec
}

// NewRunner returns a Runner for cell, whose variables must already exist under
// ModelScope in store (cell.Init(store.Scope(ModelScope), rng)).
func NewRunner(backend compute.Backend, store *model.Store, cell rnn.Cell, chunk int) (*Runner, error) {
	if chunk < 0 {
		return nil, fmt.Errorf("train: Chunk = %d, want >= 0 (0 means the whole sequence)", chunk)
	}
	r := &Runner{Backend: backend, Store: store, Cell: cell, Chunk: chunk}
	for v := range store.Scope(ModelScope).IterVariables() {
		if v.Trainable {
			r.Vars = append(r.Vars, v)
		}
	}
	if len(r.Vars) == 0 {
		return nil, fmt.Errorf("train: no trainable variable under %s: call the cell's Init(store.Scope(train.ModelScope), rng) first", ModelScope)
	}
	slices.SortFunc(r.Vars, func(a, b *model.Variable) int { return strings.Compare(a.Path(), b.Path()) })
	var err error
	mk := func(fn model.CanonicalExecGraphFn) *model.Exec {
		if err != nil {
			return nil
		}
		var e *model.Exec
		e, err = model.NewExec(backend, store, func(_ *model.Scope, g *Graph, in []*Node) []*Node {
			rnn.LiveVariables(store, g)
			return fn(store.Scope(ModelScope), g, in)
		})
		return e
	}
	r.initExec = mk(r.initGraph)
	r.initGradExec = mk(r.initGradGraph)
	r.fwdExec = mk(r.forwardGraph)
	r.bwdExec = mk(r.backwardGraph)
	return r, err
}

// gradients returns ∂(Σ f·w)/∂v for every variable of r.Vars (zeros for those f does not use).
func (r *Runner) gradients(f *Node) []*Node {
	g := f.Graph()
	nodes := make([]*Node, len(r.Vars))
	for i, v := range r.Vars {
		nodes[i] = v.NodeValue(g)
	}
	return Gradient(f, nodes...)
}

// initGraph: in = [ref [B]] → [h_0 [B, State]].
func (r *Runner) initGraph(scope *model.Scope, g *Graph, in []*Node) []*Node {
	return []*Node{r.Cell.Build(scope, g).Initial(in[0].Shape().Dim(0))}
}

// initGradGraph: in = [ref [B], ∂ℒ/∂h_0] → ∂ℒ/∂θ through h_0 = Initial(θ).
func (r *Runner) initGradGraph(scope *model.Scope, g *Graph, in []*Node) []*Node {
	h0 := r.Cell.Build(scope, g).Initial(in[0].Shape().Dim(0))
	return r.gradients(ReduceAllSum(Mul(h0, in[1])))
}

// chunkLoss runs one chunk: in = [h_in, x, targets, mask, norm, …] → h_out, loss, accuracy count.
func (r *Runner) chunkLoss(scope *model.Scope, g *Graph, in []*Node) (hOut, loss, acc *Node) {
	step := r.Cell.Build(scope, g)
	states := rnn.Unroll(step, in[1], in[0])
	hOut = Squeeze(SliceAxis(states, 1, AxisElem(-1)), 1)
	if s := r.HiddenGradScale; s != 0 && s != 1 {
		// Only the gradient arriving from the outputs is scaled; the one arriving through
		// h_out (from later chunks) was scaled there already.
		states = IdentityWithCustomGradient(states, func(_, v *Node) *Node { return MulScalar(v, s) })
	}
	out := step.Readout(states)
	loss = SequenceLoss(out, in[2], in[3], in[4])
	acc = ScalarZero(g, out.DType())
	if in[2].DType().IsInt() {
		acc = Accuracy(out, in[2], in[3], out.DType())
	}
	return
}

func (r *Runner) forwardGraph(scope *model.Scope, g *Graph, in []*Node) []*Node {
	hOut, loss, acc := r.chunkLoss(scope, g, in)
	return []*Node{hOut, loss, acc}
}

// backwardGraph: in = [h_in, x, targets, mask, norm, ∂ℒ/∂h_out, accumulated ∂ℒ/∂θ…] →
// [loss, accuracy count, ∂ℒ/∂h_in, accumulated ∂ℒ/∂θ + this chunk's].
func (r *Runner) backwardGraph(scope *model.Scope, g *Graph, in []*Node) []*Node {
	hIn := in[0]
	hOut, loss, acc := r.chunkLoss(scope, g, in)
	f := Add(loss, ReduceAllSum(Mul(hOut, in[5])))
	nodes := []*Node{hIn}
	for _, v := range r.Vars {
		nodes = append(nodes, v.NodeValue(g))
	}
	grads := Gradient(f, nodes...)
	out := []*Node{loss, acc, grads[0]}
	for i, sum := range in[6:] {
		out = append(out, Add(sum, grads[1+i]))
	}
	return out
}

// Chunks returns the [start, end) step ranges of a sequence of length L cut into chunks
// of c steps (c ≤ 0 or c ≥ L: one chunk).
func Chunks(L, c int) [][2]int {
	if c <= 0 || c > L {
		c = L
	}
	var out [][2]int
	for s := 0; s < L; s += c {
		out = append(out, [2]int{s, min(s+c, L)})
	}
	return out
}

// ChunkTensors returns the inputs x [B, C, NumIn], targets (int32 labels [B, C] or
// regression targets [B, 1]) and mask [B, C] of steps [start, end) of b, C = end − start,
// floats in dtype (Float32 or Float64).
func ChunkTensors(b *tasks.Batch, start, end int, dtype dtypes.DType) (x, targets, mask *tensors.Tensor) {
	dtypeIs64 := dtype == dtypes.Float64
	C := end - start
	xs := make([]float64, 0, b.Size*C*b.NumIn)
	ms := make([]float64, 0, b.Size*C)
	var labels []int32
	for i := 0; i < b.Size; i++ {
		xs = append(xs, toF64(b.X[(i*b.Len+start)*b.NumIn:(i*b.Len+end)*b.NumIn])...)
		ms = append(ms, toF64(b.Mask[i*b.Len+start:i*b.Len+end])...)
		if b.Labels != nil {
			labels = append(labels, b.Labels[i*b.Len+start:i*b.Len+end]...)
		}
	}
	x = floatTensor(xs, dtypeIs64, b.Size, C, b.NumIn)
	mask = floatTensor(ms, dtypeIs64, b.Size, C)
	if b.Labels != nil {
		targets = tensors.FromFlatDataAndDimensions(labels, b.Size, C)
	} else {
		targets = floatTensor(toF64(b.Y), dtypeIs64, b.Size, 1)
	}
	return
}

func toF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, f := range v {
		out[i] = float64(f)
	}
	return out
}

func floatTensor(v []float64, is64 bool, dims ...int) *tensors.Tensor {
	if is64 {
		return tensors.FromFlatDataAndDimensions(v, dims...)
	}
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return tensors.FromFlatDataAndDimensions(f, dims...)
}

// Result is the outcome of one pass over a batch.
type Result struct {
	Loss     float64 // the task's loss (mean over the masked steps)
	Correct  float64 // masked steps predicted right (classification), else 0
	Masked   float64 // number of masked steps
	Grads    []*tensors.Tensor
	FinalH   *tensors.Tensor   // state after the last step, [B, State] (Forward only)
	Boundary []*tensors.Tensor // state at the start of each chunk, [B, State]
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
func (r *Runner) run(ctx context.Context, b *tasks.Batch, backward bool) (res *Result, err error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	if s := r.Cell.Sizes(); b.NumIn != s.In {
		return nil, fmt.Errorf("train: batch has %d inputs per step, cell %T expects %d", b.NumIn, r.Cell, s.In)
	}
	is64 := r.Cell.DType().Size() == 8
	res = &Result{}
	for _, m := range b.Mask {
		res.Masked += float64(m)
	}
	if res.Masked == 0 {
		return nil, fmt.Errorf("train: batch has an all-zero mask: no step to compute a loss on")
	}
	norm := floatTensor([]float64{res.Masked}, is64)
	ref := floatTensor(make([]float64, b.Size), is64, b.Size)
	h, err := r.initExec.Call1(ref)
	if err != nil {
		return nil, err
	}
	chunks := Chunks(b.Len, r.Chunk)
	type chunkIn struct{ x, y, m *tensors.Tensor }
	ins := make([]chunkIn, len(chunks))
	// Forward through the chunks, keeping the boundary states. With gradients, the last
	// chunk's forward pass is left to the backward graph, which computes it anyway.
	nFwd := len(chunks)
	if backward {
		nFwd--
	}
	for k, c := range chunks {
		x, y, m := ChunkTensors(b, c[0], c[1], r.Cell.DType())
		ins[k] = chunkIn{x, y, m}
		res.Boundary = append(res.Boundary, h)
		if k >= nFwd {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out, err := r.fwdExec.Call(h, x, y, m, norm)
		if err != nil {
			return nil, err
		}
		h = out[0]
		res.Loss += scalar(out[1])
		res.Correct += scalar(out[2])
	}
	if !backward {
		res.FinalH = h
		return res, nil
	}
	// Backward, last chunk first.
	g := floatTensor(make([]float64, b.Size*r.Cell.Sizes().State), is64, b.Size, r.Cell.Sizes().State)
	acc := make([]*tensors.Tensor, len(r.Vars))
	for i, v := range r.Vars {
		acc[i] = floatTensor(make([]float64, v.Shape().Size()), is64, v.Shape().Dimensions...)
	}
	for k := len(chunks) - 1; k >= 0; k-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		args := []any{res.Boundary[k], ins[k].x, ins[k].y, ins[k].m, norm, g}
		for _, a := range acc {
			args = append(args, a)
		}
		out, err := r.bwdExec.Call(args...)
		if err != nil {
			return nil, err
		}
		if k == len(chunks)-1 {
			res.Loss += scalar(out[0])
			res.Correct += scalar(out[1])
		}
		g, acc = out[2], out[3:]
	}
	initGrads, err := r.initGradExec.Call(ref, g)
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
