package train

import (
	"fmt"

	"github.com/gomlx/compute"
	"gonum.org/v1/gonum/floats"

	"github.com/urnn-notebooks/longmemory/pkg/hessianfree"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// newHessianFree returns the Hessian-free optimiser of t (Config.HessianFree), which replaces
// RMSProp, or an error naming a setting it does not go with: its curvature products unroll the
// whole sequence in one graph (no Chunk shorter than it, no Scan), and they are of the loss
// itself (no ScaleHiddenGrad, no orthogonality penalty, no training noise, no cell that moves
// its own constrained variables).
func newHessianFree(backend compute.Backend, t *Trainer) (*hessianfree.Optimizer, error) {
	cfg, L := t.Config, t.Task.SeqLen()
	scope := t.Store.Scope(ModelScope)
	noise, err := rnn.SetNoise(scope, 0)
	if err != nil {
		return nil, err
	}
	_, constrained := t.Cell.(rnn.Constrained)
	for _, c := range []struct {
		bad  bool
		what string
	}{
		{cfg.Chunk > 0 && cfg.Chunk < L, fmt.Sprintf("Chunk = %d cuts the %d steps of %s (want 0: the curvature products unroll the whole sequence)", cfg.Chunk, L, t.Task)},
		{cfg.Scan, "Scan"},
		{cfg.AdamW.On(), "AdamW (both replace RMSProp)"},
		{cfg.ScaleHiddenGrad, "ScaleHiddenGrad (the scaled gradient is not the loss's)"},
		{cfg.Orthogonality.Points != 0, "Orthogonality"},
		{noise > 0, fmt.Sprintf("%T's training noise (dropout)", t.Cell)},
		{constrained, fmt.Sprintf("%T, which moves its own constrained variables (rnn.Constrained)", t.Cell)},
	} {
		if c.bad {
			return nil, fmt.Errorf("train: Config.HessianFree does not go with %s", c.what)
		}
	}
	return hessianfree.New(backend, scope, t.Cell, t.Runner.Vars, t.Store.Scope(OptimizerScope), cfg.HessianFree)
}

// hessianFreeStep takes one Hessian-free step on b from the loss and gradients of res and
// returns the gradient's norm.
func (t *Trainer) hessianFreeStep(b *tasks.Batch, res *Result) (float64, error) {
	grad := hessianfree.Flatten(res.Grads)
	_, err := t.hf.Step(b, res.Loss, grad, func() (float64, error) {
		r, err := t.Runner.Forward(b)
		if err != nil {
			return 0, err
		}
		return r.Loss, nil
	})
	return floats.Norm(grad, 2), err
}
