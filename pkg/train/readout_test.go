package train_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/esn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// setup returns an initialised Float64 ESN of n units for task and a batch of it.
func setup(t *testing.T, task tasks.Task, n, batch int) (*esn.Cell, *model.Scope, *tasks.Batch) {
	t.Helper()
	cell := &esn.Cell{In: task.NumInputs(), N: n, Out: task.NumOutputs(), Type: dtypes.Float64}
	scope := model.NewStore().Scope("/esn")
	if err := cell.Init(scope, rand.New(rand.NewPCG(11, 1))); err != nil {
		t.Fatal(err)
	}
	b, err := task.Sample(rand.New(rand.NewPCG(12, 1)), batch)
	if err != nil {
		t.Fatal(err)
	}
	return cell, scope, b
}

// loss returns the task loss of the cell on b (seq.SequenceLoss, as training computes it).
func loss(t *testing.T, cell *esn.Cell, scope *model.Scope, b *tasks.Batch) float64 {
	t.Helper()
	w, err := seq.NewWalker(backend.MustNew(), scope, cell, 0, seq.Hooks{
		Forward: func(c *seq.ChunkGraph) []*Node { return []*Node{c.Loss()} },
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	if _, err := w.Forward(context.Background(), b, func(_ [2]int, out []*tensors.Tensor) {
		total += seq.Floats(out[0])[0]
	}); err != nil {
		t.Fatal(err)
	}
	return total
}

// design runs the reservoir over b in plain Go, from the stored W_in and W, and returns the
// least-squares system of the readout: S, one row [h_tᵀ, 1] per scored step, and Y, the
// one-hot class or the regression target of that step.
func design(t *testing.T, cell *esn.Cell, scope *model.Scope, b *tasks.Batch) (S, Y *mat.Dense) {
	t.Helper()
	n, out := cell.N, cell.Out
	win, w := values(t, scope, "Win"), values(t, scope, "W")
	var s, y []float64
	rows := 0
	for i := range b.Size {
		h := make([]float64, n)
		for step := range b.Len {
			next := make([]float64, n)
			for j := range n {
				z := 0.0
				for k := range b.NumIn {
					z += float64(b.At(i, step, k)) * win[k*n+j]
				}
				for k := range n {
					z += h[k] * w[k*n+j]
				}
				next[j] = math.Tanh(z)
			}
			h = next
			if b.MaskAt(i, step) == 0 {
				continue
			}
			s = append(append(s, h...), 1)
			target := make([]float64, out)
			if b.Labels != nil {
				target[b.Label(i, step)] = 1
			} else {
				target[0] = float64(b.Y[i])
			}
			y = append(y, target...)
			rows++
		}
	}
	return mat.NewDense(rows, n+1, s), mat.NewDense(rows, out, y)
}

// leastSquares solves min ‖S X − Y‖² + β‖X‖² directly, as the least-squares problem of the
// stacked system [S; √β I] X = [Y; 0] (gonum's QR solve, no normal equations).
func leastSquares(t *testing.T, S, Y *mat.Dense, beta float64) *mat.Dense {
	t.Helper()
	r, c := S.Dims()
	_, out := Y.Dims()
	a, rhs := S, Y
	if beta > 0 {
		a = mat.NewDense(r+c, c, nil)
		a.Stack(S, scaledIdentity(c, math.Sqrt(beta)))
		rhs = mat.NewDense(r+c, out, nil)
		rhs.Stack(Y, mat.NewDense(c, out, nil))
	}
	var x mat.Dense
	if err := x.Solve(a, rhs); err != nil {
		t.Fatal(err)
	}
	return &x
}

func scaledIdentity(n int, v float64) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := range n {
		m.Set(i, i, v)
	}
	return m
}

// stacked returns the fit as the [N+1, Out] matrix [U; b_oᵀ].
func stacked(fit *train.Readout, n, out int) *mat.Dense {
	return mat.NewDense(n+1, out, append(slices.Clone(fit.U), fit.Bo...))
}

// maxRelDiff returns max |a − b| / max(1, max |b|).
func maxRelDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1)) / max(1, mat.Norm(b, math.Inf(1)))
}

// TestFitReadout fits the readout on a small adding and a small copy instance and checks
// that the fit equals the direct least-squares solution of the same system (states computed
// here in plain Go), that it is stored, and that the task loss is no larger than with the
// initial readout (on adding the fitted loss is also the least-squares residual).
func TestFitReadout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		task  tasks.Task
		n     int
		batch int
		beta  float64
	}{
		{"adding T=20", tasks.Adding{T: 20}, 40, 100, 1e-4},
		{"copy T=5 K=3 S=2", tasks.Copy{T: 5, Symbols: 3, Recall: 2}, 30, 40, 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cell, scope, b := setup(t, tc.task, tc.n, tc.batch)
			before := loss(t, cell, scope, b)
			fit, err := train.FitReadout(backend.MustNew(), scope, cell, b, tc.beta)
			if err != nil {
				t.Fatal(err)
			}
			after := loss(t, cell, scope, b)
			t.Logf("%s: loss %.4g with the initial readout, %.4g with the ridge readout (%d scored steps; baseline %.4g)",
				tc.task, before, after, fit.Rows, tc.task.Baseline())
			if !(after <= before) {
				t.Errorf("loss with the ridge readout %.6g > %.6g with the initial one", after, before)
			}
			S, Y := design(t, cell, scope, b)
			if r, _ := S.Dims(); r != fit.Rows {
				t.Errorf("fit used %d rows, the batch has %d scored steps", fit.Rows, r)
			}
			want := leastSquares(t, S, Y, tc.beta)
			if d := maxRelDiff(stacked(fit, cell.N, cell.Out), want); d > 1e-8 {
				t.Errorf("ridge readout differs from the direct least-squares solution by %.3g (relative)", d)
			}
			if u := values(t, scope, "U"); !slices.Equal(u, fit.U) {
				t.Error("the stored U is not the fitted one")
			}
			if bo := values(t, scope, "bo"); !slices.Equal(bo, fit.Bo) {
				t.Error("the stored b_o is not the fitted one")
			}
			if b.Y != nil { // regression: the loss is the mean squared residual of the system
				var res mat.Dense
				res.Mul(S, want)
				res.Sub(&res, Y)
				r, _ := S.Dims()
				mse := mat.Norm(&res, 2) * mat.Norm(&res, 2) / float64(r)
				if math.Abs(after-mse) > 1e-9*max(1, mse) {
					t.Errorf("adding loss %.12g, least-squares residual %.12g", after, mse)
				}
			}
		})
	}
}

// TestRidgeToOLS checks that ridge with β → 0 tends to ordinary least squares on a
// well-conditioned case (few units, many scored steps), and that β = 0 is OLS.
func TestRidgeToOLS(t *testing.T) {
	cell, scope, b := setup(t, tasks.Adding{T: 10}, 8, 300)
	S, Y := design(t, cell, scope, b)
	ols := leastSquares(t, S, Y, 0)
	be := backend.MustNew()
	prev := math.Inf(1)
	for _, beta := range []float64{1e-1, 1e-3, 1e-5, 1e-7, 0} {
		fit, err := train.FitReadout(be, scope, cell, b, beta)
		if err != nil {
			t.Fatal(err)
		}
		d := maxRelDiff(stacked(fit, cell.N, cell.Out), ols)
		t.Logf("β = %g: ‖ridge − OLS‖∞ = %.3g", beta, d)
		if beta == 0 && d > 1e-8 {
			t.Errorf("β = 0: ridge readout differs from OLS by %.3g", d)
		}
		if beta > 0 && d >= prev {
			t.Errorf("β = %g: distance to OLS %.3g, not smaller than %.3g at the larger β", beta, d, prev)
		}
		prev = d
	}
}

// TestFitReadoutErrors checks the errors of FitReadout and that they leave the store alone.
func TestFitReadoutErrors(t *testing.T) {
	be := backend.MustNew()
	cell, scope, b := setup(t, tasks.Adding{T: 5}, 6, 4)
	copyBatch, err := tasks.Copy{T: 3, Symbols: 2, Recall: 1}.Sample(rand.New(rand.NewPCG(1, 1)), 2)
	if err != nil {
		t.Fatal(err)
	}
	u0 := values(t, scope, "U")
	zeroMask := *b
	zeroMask.Mask = make([]float32, len(b.Mask))
	for _, tc := range []struct {
		name string
		cell *esn.Cell
		b    *tasks.Batch
		beta float64
		want string
	}{
		{"negative β", cell, b, -1, "FitReadout β = -1, want β >= 0"},
		{"NaN β", cell, b, math.NaN(), "β = NaN"},
		{"infinite β", cell, b, math.Inf(1), "β = +Inf"},
		{"inputs", cell, copyBatch, 0.1, "the batch has 4 inputs per step, the cell In = 2"},
		{"regression with Out 2", &esn.Cell{In: 2, N: 6, Out: 2, Type: dtypes.Float64}, b, 0.1, "needs Out = 1"},
		{"classes", &esn.Cell{In: 4, N: 6, Out: 2, Type: dtypes.Float64}, copyBatch, 0.1, "3 classes, the cell Out = 2"},
		{"all-zero mask", cell, &zeroMask, 0.1, "no scored step"},
	} {
		_, err := train.FitReadout(be, scope, tc.cell, tc.b, tc.beta)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if !slices.Equal(values(t, scope, "U"), u0) {
		t.Error("a failed FitReadout changed U")
	}
}

// values returns variable name under scope as float64.
func values(t *testing.T, scope *model.Scope, name string) []float64 {
	t.Helper()
	v := scope.GetVariable(name)
	if v == nil {
		t.Fatalf("no variable %s", name)
	}
	return seq.Floats(v.MustValue())
}

func TestFitReadoutNeedsALinearReadout(t *testing.T) {
	task := tasks.Adding{T: 5}
	cell := rnn.NewTanh(2, 4, 1)
	scope := model.NewStore().Scope("/m")
	if err := cell.Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	b, _ := task.Sample(rand.New(rand.NewPCG(2, 1)), 4)
	if _, err := train.FitReadout(backend.MustNew(), scope, cell, b, 0.1); err == nil || !strings.Contains(err.Error(), "rnn.LinearReadout") {
		t.Errorf("FitReadout of a tanh RNN: err = %v, want one naming rnn.LinearReadout", err)
	}
}
