package train

import (
	"fmt"
	"math"
	"slices"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
)

// constrainedStep moves the variables of an rnn.Constrained cell (the full-capacity uRNN's
// W, the scoRNN's W through A) by the cell's own Update after each optimiser step, with
// the optimiser's learning rate; the optimiser leaves them alone (updater.skip).
type constrainedStep struct {
	cell  rnn.Constrained
	scope *model.Scope
	lr    float64
	grads map[string]int // name under the cell's scope → index into Runner.Vars (and the gradients)
}

// newConstrainedStep returns nil when cell is not rnn.Constrained. It checks that every
// name the cell gives is one of its trainable variables.
func newConstrainedStep(cell rnn.Cell, scope *model.Scope, vars []*model.Variable, lr float64) (*constrainedStep, error) {
	c, ok := cell.(rnn.Constrained)
	if !ok {
		return nil, nil
	}
	s := &constrainedStep{cell: c, scope: scope, lr: lr, grads: map[string]int{}}
	for _, name := range c.ConstrainedVariables() {
		i := varIndex(vars, scope, name)
		if i < 0 {
			return nil, fmt.Errorf("train: %T names %q as constrained, but it is not a trainable variable under %s", cell, name, scope.Scope())
		}
		s.grads[name] = i
	}
	return s, nil
}

// varIndex returns the index in vars of the variable name under scope, or -1.
func varIndex(vars []*model.Variable, scope *model.Scope, name string) int {
	return slices.IndexFunc(vars, func(v *model.Variable) bool { return v.Path() == scope.Scope()+"/"+name })
}

// skip marks the entries of vars that the optimiser must not update.
func (s *constrainedStep) skip(vars []*model.Variable) []bool {
	out := make([]bool, len(vars))
	if s != nil {
		for _, i := range s.grads {
			out[i] = true
		}
	}
	return out
}

// apply runs the cell's Update on the gradients of one step and stores its results.
func (s *constrainedStep) apply(grads []*tensors.Tensor) error {
	values := map[string][]float64{}
	vars := map[string]*model.Variable{}
	for v := range s.scope.IterVariables() {
		name := v.Name()
		t, err := v.Value()
		if err != nil {
			return err
		}
		if t.DType().IsFloat() {
			values[name] = seq.Floats(t)
		}
		vars[name] = v
	}
	g := make(map[string][]float64, len(s.grads))
	for name, i := range s.grads {
		g[name] = seq.Floats(grads[i])
	}
	out, err := s.cell.Update(s.lr, values, g)
	if err != nil {
		return fmt.Errorf("train: %T.Update: %w", s.cell, err)
	}
	for name, vals := range out {
		v := vars[name]
		if v == nil {
			return fmt.Errorf("train: %T.Update returned %q, which is not a variable under %s", s.cell, name, s.scope.Scope())
		}
		if len(vals) != v.Shape().Size() {
			return fmt.Errorf("train: %T.Update returned %d values for %s, shaped %s", s.cell, len(vals), v.Path(), v.Shape())
		}
		for _, x := range vals {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("train: %T.Update returned NaN or Inf for %s", s.cell, v.Path())
			}
		}
		if err := v.SetValue(seq.FloatTensor(v.DType(), vals, v.Shape().Dimensions...)); err != nil {
			return err
		}
	}
	return nil
}
