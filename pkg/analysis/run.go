package analysis

import (
	"context"
	"fmt"
	"math"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// Trajectory is what a cell computes on one batch, as plain row-major slices (b the
// example, t = 0..Len−1 the step, so that index t holds h_{t+1}, the state after reading
// x_t, as rnn.Unroll returns it):
//
//	Outputs    [Batch][Len][Out]    y_t (logits or regression values)
//	StateNorms [Batch][Len]         ‖h_{t+1}‖₂ over the whole state vector
//	States     [Batch][Len][State]  h_{t+1}; only with RunOptions.States (it can be large)
type Trajectory struct {
	Batch, Len, State, Out int
	Outputs                []float64
	StateNorms             []float64
	States                 []float64
}

// Output returns y_t of example b, a slice of Out values (shared with Outputs).
func (tr *Trajectory) Output(b, t int) []float64 {
	i := (b*tr.Len + t) * tr.Out
	return tr.Outputs[i : i+tr.Out]
}

// StateAt returns h_{t+1} of example b (shared with States); it panics without States.
func (tr *Trajectory) StateAt(b, t int) []float64 {
	if tr.States == nil {
		panic("analysis: Trajectory.StateAt: the states were not kept (RunOptions.States)")
	}
	i := (b*tr.Len + t) * tr.State
	return tr.States[i : i+tr.State]
}

// RunOptions configures Run.
type RunOptions struct {
	// Chunk is the number of time steps per graph (one graph is compiled per distinct chunk
	// length and reused); 0, or a value ≥ the sequence length, unrolls the whole sequence
	// in one graph. Graph size and build time grow with the chunk.
	Chunk int
	// States keeps every state (Batch·Len·State floats); otherwise only their norms.
	States bool
}

// Run runs cell, whose variables live under scope, over the inputs of batch b from the
// cell's initial state and returns its outputs and state norms at every step (and the
// states with opt.States). Chunks of opt.Chunk steps are run one graph at a time
// (seq.Walker), the last state of a chunk feeding the next, so the result does not depend
// on the chunk length (up to rounding). Inputs are converted to the cell's dtype.
func Run(backend compute.Backend, scope *model.Scope, cell rnn.Cell, b *tasks.Batch, opt RunOptions) (*Trajectory, error) {
	sz := cell.Sizes()
	tr := &Trajectory{Batch: b.Size, Len: b.Len, State: sz.State, Out: sz.Out}
	// Outputs [B, C, Out], norms [B, C] (, states [B, C, State]) of each chunk.
	w, err := seq.NewWalker(backend, scope, cell, opt.Chunk, seq.Hooks{Forward: func(c *seq.ChunkGraph) []*Node {
		res := []*Node{c.Outputs(), Sqrt(ReduceSum(Square(c.Stacked), -1))}
		if opt.States {
			res = append(res, c.Stacked)
		}
		return res
	}})
	if err != nil {
		return nil, fmt.Errorf("analysis: Run: %w", err)
	}
	if _, err := w.Forward(context.Background(), b, func(c [2]int, out []*tensors.Tensor) {
		scatter(&tr.Outputs, floats(out[0]), b.Size, b.Len, sz.Out, c)
		scatter(&tr.StateNorms, floats(out[1]), b.Size, b.Len, 1, c)
		if opt.States {
			scatter(&tr.States, floats(out[2]), b.Size, b.Len, sz.State, c)
		}
	}); err != nil {
		return nil, fmt.Errorf("analysis: Run: %w", err)
	}
	return tr, nil
}

// scatter copies chunk values [B, C, width] into *dst [B, L, width] at steps c, allocating
// *dst at the first chunk.
func scatter(dst *[]float64, src []float64, B, L, width int, c [2]int) {
	if *dst == nil {
		*dst = make([]float64, B*L*width)
	}
	C := c[1] - c[0]
	for i := range B {
		copy((*dst)[(i*L+c[0])*width:(i*L+c[1])*width], src[i*C*width:(i+1)*C*width])
	}
}

// floats returns the values of a Float32 or Float64 tensor as float64.
func floats(t *tensors.Tensor) []float64 {
	if t.DType() == dtypes.Float64 {
		return tensors.MustCopyFlatData[float64](t)
	}
	f := tensors.MustCopyFlatData[float32](t)
	out := make([]float64, len(f))
	for i, v := range f {
		out[i] = float64(v)
	}
	return out
}

// norm2 returns the Euclidean norm of v.
func norm2(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}
