package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
)

// Orthogonality configures Henaff et al.'s soft orthogonality constraint (§4.3, the pooling
// runs): after every optimisation step, one SGD step on
//
//	L(V) = (1/m) Σ_i ‖VᵀV x_i − x_i‖²   (ltrnn.OrthogonalityPenalty)
//
// or, with Norm, on L₁(V) = (1/m) Σ_i ‖VᵀV x_i − x_i‖ (ltrnn.OrthogonalityNorm), at m = Points
// random unit vectors x_i, for the cell's square transition matrix V (rnn.Transition: V of the
// LT-RNNs, W of the tanh RNN and IRNN). The log's Penalty is L, the squared form, before the
// step whichever form it takes, so that runs of the two forms compare.
// The points are drawn from Config.Seed and the step, so runs repeat exactly.
type Orthogonality struct {
	Points int     // m; 0 turns the constraint off (Henaff et al. use 50, the minibatch size)
	LR     float64 // SGD learning rate; default: Config.Optimizer.LR
	// Norm steps on the mean of the norms instead of the mean of their squares (the paper
	// does not say whether its norm is squared).
	Norm bool `json:",omitempty"`
}

const saltOrtho = 0x6f727468 // "orth"

// orthoStep is the compiled SGD step on the penalty.
type orthoStep struct {
	cfg  Orthogonality
	v    *model.Variable
	exec *model.Exec
}

func newOrthoStep(t *Trainer, lr float64) (*orthoStep, error) {
	o := t.Config.Orthogonality
	if o.Points < 0 || o.LR < 0 || math.IsNaN(o.LR) {
		return nil, fmt.Errorf("train: Config.Orthogonality = %+v, want Points >= 0 and LR >= 0", o)
	}
	if o.LR == 0 {
		o.LR = lr
	}
	tc, ok := t.Cell.(rnn.Transition)
	if !ok {
		return nil, fmt.Errorf("train: Config.Orthogonality needs a cell with a square transition matrix (rnn.Transition: an LT-RNN, tanh RNN or IRNN); %T has none", t.Cell)
	}
	name, _ := tc.TransitionMatrix()
	v := t.Store.Scope(ModelScope).GetVariable(name)
	if v == nil || v.Shape().Rank() != 2 || v.Shape().Dim(0) != v.Shape().Dim(1) {
		return nil, fmt.Errorf("train: Config.Orthogonality: the transition matrix %s/%s of %T is missing or not square", ModelScope, name, t.Cell)
	}
	s := &orthoStep{cfg: o, v: v}
	var err error
	s.exec, err = model.NewExec(t.Runner.Backend, t.Store, func(_ *model.Scope, x *Node) *Node {
		rnn.LiveVariables(t.Store, x.Graph())
		vn := v.NodeValue(x.Graph())
		loss := ltrnn.OrthogonalityPenalty(vn, x)
		step := loss
		if o.Norm {
			step = ltrnn.OrthogonalityNorm(vn, x)
		}
		v.SetNodeValue(Sub(vn, MulScalar(Gradient(step, vn)[0], o.LR)))
		return loss
	})
	return s, err
}

// apply takes the SGD step of optimisation step s and returns the penalty before it.
func (o *orthoStep) apply(seed uint64, s int) (float64, error) {
	n := o.v.Shape().Dim(0)
	rng := rand.New(rand.NewPCG(seed^saltOrtho, uint64(s)))
	x := make([]float64, o.cfg.Points*n)
	for i := range o.cfg.Points {
		row := x[i*n : (i+1)*n]
		norm := 0.0
		for j := range row {
			row[j] = rng.NormFloat64()
			norm += row[j] * row[j]
		}
		for j := range row {
			row[j] /= math.Sqrt(norm)
		}
	}
	out, err := o.exec.Call(seq.FloatTensor(o.v.DType(), x, o.cfg.Points, n))
	if err != nil {
		return 0, err
	}
	return scalar(out[0]), nil
}
