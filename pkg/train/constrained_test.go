package train

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// sgdW is a tanh RNN whose W the optimiser must leave to Update, which takes a plain
// gradient step of factor times the learning rate: a rule RMSProp cannot produce.
type sgdW struct {
	*rnn.Simple
	name   string
	factor float64
	calls  int
}

func (c *sgdW) ConstrainedVariables() []string { return []string{c.name} }

func (c *sgdW) Update(lr float64, values, grads map[string][]float64) (map[string][]float64, error) {
	c.calls++
	if _, ok := values["V"]; !ok {
		return nil, fmt.Errorf("values lack V: %d variables", len(values))
	}
	w := append([]float64(nil), values["W"]...)
	for i, g := range grads["W"] {
		w[i] -= c.factor * lr * g
	}
	return map[string][]float64{"W": w}, nil
}

func TestConstrainedCellUpdatesItsOwnVariables(t *testing.T) {
	task := tasks.Adding{T: 6}
	cell := &sgdW{Simple: rnn.NewTanh(2, 5, 1), name: "W", factor: 3}
	cell.Type = dtypes.Float64
	tr, err := New(backend.MustNew(), cell, task, Config{Steps: 1, Batch: 4, Seed: 3, Optimizer: RMSProp{LR: 0.01}})
	if err != nil {
		t.Fatal(err)
	}
	scope := tr.Store.Scope(ModelScope)
	value := func(name string) []float64 { return seq.Floats(scope.GetVariable(name).MustValue()) }
	w0, v0 := value("W"), value("V")
	b, err := tr.Batch(0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Runner.run(context.Background(), b, true)
	if err != nil {
		t.Fatal(err)
	}
	grad := map[string][]float64{}
	for i, v := range tr.Runner.Vars {
		grad[v.Name()] = seq.Floats(res.Grads[i])
	}
	if err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if cell.calls != 1 {
		t.Fatalf("Update called %d times in one step, want 1", cell.calls)
	}
	w1, v1 := value("W"), value("V")
	for i := range w1 {
		if want := w0[i] - 3*0.01*grad["W"][i]; math.Abs(w1[i]-want) > 1e-12 {
			t.Fatalf("W[%d] = %.15g after one step, want Update's %.15g (the optimiser must not move W)", i, w1[i], want)
		}
	}
	// RMSProp's first step moves V by lr·g/√(ρ a₀ + (1−ρ) g²) with a₀ = 1e-3 (no clipping).
	for i := range v1 {
		g := grad["V"][i]
		if want := v0[i] - 0.01*g/math.Sqrt(0.9*1e-3+0.1*g*g); math.Abs(v1[i]-want) > 1e-12 {
			t.Fatalf("V[%d] = %.15g after one step, want RMSProp's %.15g", i, v1[i], want)
		}
	}
	for v := range tr.Store.Scope(OptimizerScope).IterVariables() {
		if strings.Contains(v.Name(), "_W") {
			t.Errorf("the optimiser keeps an accumulator %s for the constrained W", v.Name())
		}
	}
	// The gradient norm of the record still counts W's gradient.
	sum := 0.0
	for _, g := range grad {
		for _, x := range g {
			sum += x * x
		}
	}
	if got := tr.Log[0].GradNorm; math.Abs(got-math.Sqrt(sum)) > 1e-9*math.Sqrt(sum) {
		t.Errorf("GradNorm = %g, want %g over every trainable variable", got, math.Sqrt(sum))
	}
}

func TestConstrainedCellNamingAMissingVariableFails(t *testing.T) {
	cell := &sgdW{Simple: rnn.NewTanh(2, 5, 1), name: "Q"}
	_, err := New(backend.MustNew(), cell, tasks.Adding{T: 6}, Config{Steps: 1})
	if err == nil || !strings.Contains(err.Error(), `"Q"`) {
		t.Fatalf("New with a constrained variable Q that does not exist: err = %v, want one naming \"Q\"", err)
	}
}
