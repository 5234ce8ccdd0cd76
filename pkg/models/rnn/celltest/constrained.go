package celltest

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Constrained-check settings: the updates a run of a thousand steps makes, with gradients of
// the size training sees, and values rounded to float32 after each, as a Float32 variable
// stores them.
const (
	constrainedUpdates = 1000
	constrainedLR      = 1e-3
	constrainedGrad    = 0.1 // standard deviation of each gradient entry
	// GroupTolerance is the largest max |WᴴW − I| accepted after the updates.
	GroupTolerance = 1e-5
)

// checkConstrained runs, for a cell that is rnn.Constrained, 1000 Updates with random
// gradients on the values Init gave (rounded to float32 after each) and checks that W —
// rnn.DenseW's or the rnn.Transition variable — stays on its group: max |WᴴW − I| ≤
// GroupTolerance; that Update returns only the constrained and the non-trainable variables;
// and that it refuses a missing gradient and a value of the wrong size, naming the variable.
func checkConstrained(cfg Config, logf func(string, ...any)) error {
	cell := cfg.New()
	c, ok := cell.(rnn.Constrained)
	if !ok {
		return fmt.Errorf("%w: %T is not rnn.Constrained", errSkip, cell)
	}
	_, scope, err := initCell(cell, 1)
	if err != nil {
		return err
	}
	values := map[string][]float64{}
	trainable := map[string]bool{}
	for v := range scope.IterVariables() {
		values[v.Name()] = valuesOf(v)
		trainable[v.Name()] = v.Trainable
	}
	names := c.ConstrainedVariables()
	for _, name := range names {
		if !trainable[name] {
			return fmt.Errorf("%T.ConstrainedVariables names %q, not a trainable variable of the cell", cell, name)
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	grads := func() map[string][]float64 {
		g := map[string][]float64{}
		for _, name := range names {
			g[name] = make([]float64, len(values[name]))
			for i := range g[name] {
				g[name][i] = constrainedGrad * rng.NormFloat64()
			}
		}
		return g
	}
	for range constrainedUpdates {
		out, err := c.Update(constrainedLR, values, grads())
		if err != nil {
			return fmt.Errorf("%T.Update: %w", cell, err)
		}
		for name, v := range out {
			if trainable[name] && !slices.Contains(names, name) {
				return fmt.Errorf("%T.Update changed %q, a trainable variable it does not constrain (the optimiser's)", cell, name)
			}
			if len(v) != len(values[name]) {
				return fmt.Errorf("%T.Update returned %d values for %q, want %d", cell, len(v), name, len(values[name]))
			}
			for i, x := range v {
				v[i] = float64(float32(x))
			}
			values[name] = v
		}
	}
	for v := range scope.IterVariables() {
		if v.DType() == dtypes.Float64 {
			if err := v.SetValue(tensors.FromFlatDataAndDimensions(values[v.Name()], v.Shape().Dimensions...)); err != nil {
				return err
			}
		}
	}
	dev, err := groupDeviation(cell, scope)
	if err != nil {
		return err
	}
	logf("%T: max |WᴴW − I| = %.3g after %d updates (float32 storage)", cell, dev, constrainedUpdates)
	if !(dev <= GroupTolerance) {
		return fmt.Errorf("%T: max |WᴴW − I| = %.3g after %d updates with gradients of σ = %g at λ = %g, want ≤ %g",
			cell, dev, constrainedUpdates, constrainedGrad, constrainedLR, GroupTolerance)
	}
	// A missing gradient and a short value are refused, naming the variable.
	g := grads()
	delete(g, names[0])
	if _, err := c.Update(constrainedLR, values, g); err == nil || !strings.Contains(err.Error(), names[0]) {
		return fmt.Errorf("%T.Update without the gradient of %q: err = %v, want one naming it", cell, names[0], err)
	}
	short := map[string][]float64{}
	for k, v := range values {
		short[k] = v
	}
	short[names[0]] = values[names[0]][:1]
	if _, err := c.Update(constrainedLR, short, grads()); err == nil || !strings.Contains(err.Error(), names[0]) {
		return fmt.Errorf("%T.Update with 1 value for %q: err = %v, want one naming it", cell, names[0], err)
	}
	return nil
}

// groupDeviation returns max |WᴴW − I| for the cell's W (rnn.DenseW, else the
// rnn.Transition variable).
func groupDeviation(cell rnn.Cell, scope *model.Scope) (float64, error) {
	var w [][]complex128
	switch x := cell.(type) {
	case rnn.DenseW:
		re, im, err := x.DenseW(backend.MustNew(), scope)
		if err != nil {
			return 0, err
		}
		for k := range re {
			row := make([]complex128, len(re[k]))
			for j := range row {
				row[j] = complex(re[k][j], 0)
				if im != nil {
					row[j] += complex(0, im[k][j])
				}
			}
			w = append(w, row)
		}
	case rnn.Transition:
		name, _ := x.TransitionMatrix()
		v, err := rnn.VariableValues(scope, name)
		if err != nil {
			return 0, err
		}
		n := int(math.Round(math.Sqrt(float64(len(v)))))
		for _, row := range rnn.Rows(v, n) {
			w = append(w, realRow(row))
		}
	default:
		return 0, fmt.Errorf("%T is rnn.Constrained but has no W to check (neither rnn.DenseW nor rnn.Transition)", cell)
	}
	dev := 0.0
	for i := range w {
		for j := range w {
			var s complex128
			for k := range w {
				s += cmplx.Conj(w[k][i]) * w[k][j]
			}
			if i == j {
				s -= 1
			}
			dev = max(dev, cmplx.Abs(s))
		}
	}
	return dev, nil
}

// valuesOf is values (celltest.go), callable where a local map is named values.
func valuesOf(v *model.Variable) []float64 { return values(v) }

func realRow(v []float64) []complex128 {
	out := make([]complex128, len(v))
	for i, x := range v {
		out[i] = complex(x, 0)
	}
	return out
}
