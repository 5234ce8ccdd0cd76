package train

import (
	"context"
	"fmt"
	"math"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// FitChunk is the number of time steps per graph when FitReadout runs the reservoir (see
// seq.Walker.Chunk): the graph stays small at any sequence length, and the states are those
// of the whole sequence run at once.
const FitChunk = 100

// Readout is the readout FitReadout computed and stored, row-major as the variables.
type Readout struct {
	U    []float64 // [N, Out]
	Bo   []float64 // [Out]
	Rows int       // scored steps (Mask ≠ 0) the fit used
}

// FitReadout fits the linear readout of cell (rnn.LinearReadout) in closed form, as echo
// state networks are trained (Jaeger 2001; Lukoševičius & Jaeger 2009, docs/REFERENCES.md):
// it runs the cell over batch b (its variables under scope, the graph on backend, in chunks
// of FitChunk steps), takes the state h_t at every scored step (Mask ≠ 0), and solves
// the ridge regression
//
//	(SᵀS + βI) [U; b_oᵀ] = SᵀY
//
// for S the rows [h_tᵀ, 1] (one per scored step, N + 1 columns: the readout's bias is
// penalised like U) and Y the targets: the one-hot class (Out columns) for classification
// batches (copy), the real target b.Y of the sequence for regression batches (adding,
// Out = 1). A mask weight m other than 1 weighs its row's squared error by m. The normal
// equations are solved with gonum's Cholesky factorisation. U and b_o are then written into
// the store and returned.
//
// On a regression task the fit minimises the task's own loss: the sum of the squared
// errors at the scored steps (the MSE times their number) plus β‖[U; b_o]‖²; on a
// classification task it fits the one-hot targets in least squares, so
// its outputs are class scores, not calibrated logits, and the cross-entropy of softmax of
// them is not what it minimises.
//
// It returns an error, without changing the store, when β is negative, NaN or +Inf, when b
// does not fit the cell (inputs, classes, or Out ≠ 1 for regression), when no step is
// scored, or when SᵀS + βI is singular (β = 0 with linearly dependent states: use β > 0).
func FitReadout(backend compute.Backend, scope *model.Scope, cell rnn.Cell, b *tasks.Batch, beta float64) (*Readout, error) {
	lr, ok := cell.(rnn.LinearReadout)
	if !ok {
		return nil, fmt.Errorf("train: FitReadout: %T has no linear readout (rnn.LinearReadout)", cell)
	}
	wName, bName := lr.ReadoutVariables()
	if !(beta >= 0) || math.IsInf(beta, 1) {
		return nil, fmt.Errorf("train: FitReadout β = %g, want β >= 0 (0 is ordinary least squares)", beta)
	}
	if err := b.Check(); err != nil {
		return nil, err
	}
	sizes := cell.Sizes()
	n, out := sizes.State, sizes.Out
	switch {
	case b.NumIn != sizes.In:
		return nil, fmt.Errorf("train: FitReadout: the batch has %d inputs per step, the cell In = %d", b.NumIn, sizes.In)
	case b.Labels != nil && b.NumClasses != out:
		return nil, fmt.Errorf("train: FitReadout: the batch has %d classes, the cell Out = %d", b.NumClasses, out)
	case b.Y != nil && out != 1:
		return nil, fmt.Errorf("train: FitReadout: a regression batch needs Out = 1, the cell has Out = %d", out)
	}
	walker, err := seq.NewWalker(backend, scope, cell, FitChunk, seq.Hooks{
		Forward: func(c *seq.ChunkGraph) []*Node { return []*Node{c.Stacked} },
	})
	if err != nil {
		return nil, err
	}
	// Accumulate SᵀS and SᵀY chunk by chunk: S itself is never held whole.
	sts := mat.NewSymDense(n+1, nil)
	sty := mat.NewDense(n+1, out, nil)
	rows := 0
	var visitErr error
	visit := func(span [2]int, res []*tensors.Tensor) {
		states := seq.Floats(res[0]) // [B, C, N]
		C := span[1] - span[0]
		var s, y []float64
		r := 0
		for i := range b.Size {
			for k := range C {
				t := span[0] + k
				m := float64(b.Mask[i*b.Len+t])
				if m == 0 {
					continue
				}
				if m < 0 {
					visitErr = fmt.Errorf("train: FitReadout: Mask[%d, %d] = %g, want >= 0", i, t, m)
					return
				}
				w := math.Sqrt(m)
				h := states[(i*C+k)*n : (i*C+k+1)*n]
				for _, v := range h {
					s = append(s, w*v)
				}
				s = append(s, w)
				target := make([]float64, out)
				if b.Labels != nil {
					target[b.Labels[i*b.Len+t]] = w
				} else {
					target[0] = w * float64(b.Y[i])
				}
				y = append(y, target...)
				r++
			}
		}
		if r == 0 {
			return
		}
		S, Y := mat.NewDense(r, n+1, s), mat.NewDense(r, out, y)
		sts.SymRankK(sts, 1, S.T())
		var p mat.Dense
		p.Mul(S.T(), Y)
		sty.Add(sty, &p)
		rows += r
	}
	if _, err := walker.Forward(context.Background(), b, visit); err != nil {
		return nil, err
	}
	if visitErr != nil {
		return nil, visitErr
	}
	if rows == 0 {
		return nil, fmt.Errorf("train: FitReadout: the batch's mask is all zero: no scored step to fit")
	}
	for i := range n + 1 {
		sts.SetSym(i, i, sts.At(i, i)+beta)
	}
	var chol mat.Cholesky
	if !chol.Factorize(sts) {
		return nil, fmt.Errorf("train: FitReadout: SᵀS + βI (β = %g) is not positive definite: the %d states are linearly dependent; use β > 0", beta, rows)
	}
	var x mat.Dense // [N+1, Out]
	if err := chol.SolveTo(&x, sty); err != nil {
		return nil, fmt.Errorf("train: FitReadout: SᵀS + βI (β = %g) is singular: %w; use a larger β", beta, err)
	}
	fit := &Readout{U: make([]float64, 0, n*out), Bo: make([]float64, out), Rows: rows}
	for i := range n {
		fit.U = append(fit.U, x.RawRowView(i)...)
	}
	copy(fit.Bo, x.RawRowView(n))
	dt := cell.DType()
	for _, v := range []struct {
		name   string
		values []float64
		dims   []int
	}{{wName, fit.U, []int{n, out}}, {bName, fit.Bo, []int{out}}} {
		variable := scope.GetVariable(v.name)
		if variable == nil {
			return nil, fmt.Errorf("train: FitReadout: variable %s/%s does not exist: call the cell's Init first", scope.Scope(), v.name)
		}
		if err := variable.SetValue(seq.FloatTensor(dt, v.values, v.dims...)); err != nil {
			return nil, fmt.Errorf("train: FitReadout: storing %s: %w", v.name, err)
		}
	}
	return fit, nil
}
