package analysis_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// setup initialises cell under a fresh store's model scope and samples a batch of task.
func setup(t *testing.T, cell rnn.Cell, task tasks.Task, batch int, seed uint64) (*model.Scope, *tasks.Batch) {
	t.Helper()
	scope := model.NewStore().Scope(train.ModelScope)
	if err := cell.Init(scope, rand.New(rand.NewPCG(seed, 1))); err != nil {
		t.Fatal(err)
	}
	b, err := task.Sample(rand.New(rand.NewPCG(seed, 2)), batch)
	if err != nil {
		t.Fatal(err)
	}
	return scope, b
}

// setMatrix overwrites variable name under scope with values (Float64 variables).
func setMatrix(scope *model.Scope, name string, values []float64) {
	v := scope.GetVariable(name)
	v.MustSetValue(tensors.FromFlatDataAndDimensions(values, v.Shape().Dimensions...))
}

// fdGradNorm returns ‖∂C/∂h_t‖ by central differences: the loss is rebuilt with a
// perturbation δ [B, State] added to the state h_t (t ≥ 1, after reading x_{t−1}), and each
// element of δ is moved by ±step. This unrolls the cell independently of HiddenGradNorms.
func fdGradNorm(t *testing.T, scope *model.Scope, cell rnn.Cell, b *tasks.Batch, at int, step float64) float64 {
	t.Helper()
	x, targets, mask := b.Tensors()
	masked := 0.0
	for _, m := range b.Mask {
		masked += float64(m)
	}
	exec, err := model.NewExec(backend.MustNew(), scope.Store(), func(_ *model.Scope, g *Graph, in []*Node) *Node {
		s := cell.Build(scope, g)
		xs := ConvertDType(in[0], dtypes.Float64)
		px := s.Project(xs)
		h := s.Initial(b.Size)
		var states []*Node
		for k := range b.Len {
			h = s.Next(h, Squeeze(SliceAxis(px, 1, AxisElem(k)), 1))
			if k+1 == at {
				h = Add(h, in[3])
			}
			states = append(states, h)
		}
		y := in[1]
		if y.DType() != dtypes.Int32 {
			y = ConvertDType(y, dtypes.Float64)
		}
		return seq.SequenceLoss(s.Readout(Stack(states, 1)), y, in[2], Scalar(g, dtypes.Float64, masked))
	})
	if err != nil {
		t.Fatal(err)
	}
	n := b.Size * cell.Sizes().State
	sum := 0.0
	for i := range n {
		var l [2]float64
		for k, sign := range []float64{1, -1} {
			d := make([]float64, n)
			d[i] = sign * step
			out, err := exec.Call(x, targets, mask, tensors.FromFlatDataAndDimensions(d, b.Size, cell.Sizes().State))
			if err != nil {
				t.Fatal(err)
			}
			l[k] = tensors.ToScalar[float64](out[0])
		}
		g := (l[0] - l[1]) / (2 * step)
		sum += g * g
	}
	return math.Sqrt(sum)
}

// TestHiddenGradNormsFiniteDifferences checks ‖∂C/∂h_t‖ from autodiff against central
// differences at two steps of a small tanh RNN on a copy batch (loss at every step), and
// that chunking the sequence does not change the norms.
func TestHiddenGradNormsFiniteDifferences(t *testing.T) {
	cell := &rnn.Simple{In: 5, N: 4, Out: 4, Type: dtypes.Float64}
	scope, b := setup(t, cell, tasks.Copy{T: 3, Symbols: 3, Recall: 2}, 2, 5)
	whole, err := analysis.HiddenGradNorms(backend.MustNew(), scope, cell, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(whole.Total), b.Len+1; got != want {
		t.Fatalf("len(Total) = %d, want L+1 = %d", got, want)
	}
	for _, at := range []int{2, b.Len - 1} {
		want := fdGradNorm(t, scope, cell, b, at, 1e-6)
		if got := whole.Total[at]; math.Abs(got-want) > 1e-6*want {
			t.Errorf("‖∂C/∂h_%d‖: autodiff %.12g, finite differences %.12g", at, got, want)
		}
	}
	chunked, err := analysis.HiddenGradNorms(backend.MustNew(), scope, cell, b, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range whole.Total {
		if d := math.Abs(chunked.Total[i] - whole.Total[i]); d > 1e-12*whole.Total[i] {
			t.Errorf("Total[%d]: chunk 3 gives %.15g, whole sequence %.15g", i, chunked.Total[i], whole.Total[i])
		}
		if d := math.Abs(chunked.Direct[i] - whole.Direct[i]); d > 1e-12*max(whole.Direct[i], 1e-300) {
			t.Errorf("Direct[%d]: chunk 3 gives %.15g, whole sequence %.15g", i, chunked.Direct[i], whole.Direct[i])
		}
	}
	if math.Abs(chunked.Loss-whole.Loss) > 1e-12 {
		t.Errorf("loss: chunk 3 gives %.15g, whole sequence %.15g", chunked.Loss, whole.Loss)
	}
}

// TestGradNormsOrthogonal checks the norm-preservation argument of Arjovsky et al. §1 on
// an LT-RNN with identity nonlinearity and the adding loss (last step only): with V
// orthogonal, ∂C/∂h_t = (Vᵀ)^{L−t} ∂C/∂h_L has the same norm for every t; with V = 0.9·Q
// it shrinks by exactly 0.9 per step.
func TestGradNormsOrthogonal(t *testing.T) {
	const n, T = 16, 60
	for _, tc := range []struct {
		name  string
		scale float64
	}{{"orthogonal", 1}, {"0.9 × orthogonal", 0.9}} {
		t.Run(tc.name, func(t *testing.T) {
			cell := &ltrnn.Cell{In: 2, N: n, Out: 1, Sigma: ltrnn.Linear, VInit: ltrnn.Orthogonal, ClipNorm: ltrnn.NoClip, Type: dtypes.Float64}
			scope, b := setup(t, cell, tasks.Adding{T: T}, 4, 9)
			v, _, err := analysis.VariableMatrix(scope, "V")
			if err != nil {
				t.Fatal(err)
			}
			for i := range v {
				v[i] *= tc.scale
			}
			setMatrix(scope, "V", v)
			gn, err := analysis.HiddenGradNorms(backend.MustNew(), scope, cell, b, 25)
			if err != nil {
				t.Fatal(err)
			}
			// The singular-value bound is tight here: μmax(V) = scale, σ' = 1.
			bd, err := analysis.BoundsFor(backend.MustNew(), scope, cell, b)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(bd.SV-tc.scale) > 1e-12 || bd.SigmaPrime != 1 {
				t.Errorf("BoundsFor: σ'max·μmax = %.15g with σ'max = %g, want %g with σ'max = 1", bd.SV, bd.SigmaPrime, tc.scale)
			}
			for k, want := range analysis.Curve(bd.SV, gn.Direct) {
				if math.Abs(gn.Total[k]/want-1) > 1e-9 {
					t.Fatalf("t = %d: ‖∂C/∂h_t‖ = %.12g, singular-value bound %.12g, want equal (tight)", k, gn.Total[k], want)
				}
			}
			last := gn.Total[T]
			if !(last > 0) {
				t.Fatalf("‖∂C/∂h_L‖ = %g, want > 0", last)
			}
			for k, g := range gn.Total {
				want := last * math.Pow(tc.scale, float64(T-k))
				if math.Abs(g/want-1) > 1e-4 {
					t.Fatalf("‖∂C/∂h_%d‖ = %.10g, want ‖∂C/∂h_L‖·%g^%d = %.10g (relative error %.2g > 1e-4)", k, g, tc.scale, T-k, want, math.Abs(g/want-1))
				}
			}
		})
	}
}

// TestBoundsHoldTanh checks that Hochreiter's and the singular-value bounds (Galvan §1.6),
// computed from the actual W and σ'max of the trajectory, are above the measured
// ‖∂C/∂h_t‖ of a tanh RNN, for an expanding (Glorot) and a contracting (0.3 × Glorot) W
// and for a loss at the last step (adding) or at every step (copy).
func TestBoundsHoldTanh(t *testing.T) {
	for _, tc := range []struct {
		name  string
		task  tasks.Task
		scale float64
	}{
		{"adding glorot", tasks.Adding{T: 40}, 1},
		{"adding contracting", tasks.Adding{T: 40}, 0.3},
		{"copy glorot", tasks.Copy{T: 20, Symbols: 4, Recall: 3}, 1},
		{"copy contracting", tasks.Copy{T: 20, Symbols: 4, Recall: 3}, 0.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 12
			cell := &rnn.Simple{In: tc.task.NumInputs(), N: n, Out: tc.task.NumOutputs(), Type: dtypes.Float64}
			scope, b := setup(t, cell, tc.task, 3, 4)
			w, _, err := analysis.VariableMatrix(scope, "W")
			if err != nil {
				t.Fatal(err)
			}
			for i := range w {
				w[i] *= tc.scale
			}
			setMatrix(scope, "W", w)
			be := backend.MustNew()
			bd, err := analysis.BoundsFor(be, scope, cell, b)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := analysis.Run(be, scope, cell, b, analysis.RunOptions{States: true})
			if err != nil {
				t.Fatal(err)
			}
			if manual, _ := analysis.NewBounds(w, n, analysis.TanhSigmaPrime(tr)); manual != bd {
				t.Errorf("BoundsFor = %+v, want NewBounds(W, %d, TanhSigmaPrime) = %+v", bd, n, manual)
			}
			gn, err := analysis.HiddenGradNorms(be, scope, cell, b, 0)
			if err != nil {
				t.Fatal(err)
			}
			hoch, sv := analysis.Curve(bd.Tau, gn.Direct), analysis.Curve(bd.SV, gn.Direct)
			t.Logf("r %d, ‖W‖max %.3f, σ'max %.4f, τ %.3f, μmax %.3f, σ'max·μmax %.3f; ‖∂C/∂h_0‖ %.3g, SV bound %.3g, τ bound %.3g",
				bd.R, bd.WMax, bd.SigmaPrime, bd.Tau, bd.MuMax, bd.SV, gn.Total[0], sv[0], hoch[0])
			for k, g := range gn.Total {
				if !(g <= sv[k]*(1+1e-9)) {
					t.Errorf("t = %d: ‖∂C/∂h_t‖ = %.6g above the singular-value bound %.6g", k, g, sv[k])
				}
				if !(sv[k] <= hoch[k]*(1+1e-12)) {
					t.Errorf("t = %d: singular-value bound %.6g above Hochreiter's %.6g (μmax ≤ r‖W‖max)", k, sv[k], hoch[k])
				}
			}
			if _, err := analysis.BoundsFor(be, scope, &lstm.Cell{In: 1, N: 1, Out: 1}, b); err == nil {
				t.Error("BoundsFor an LSTM: no error, want one (no diag(σ')·W Jacobian)")
			}
			if tc.scale < 1 && !(bd.SV < 1) {
				t.Errorf("contracting W: σ'max·μmax = %g, want < 1 (so the bound decays)", bd.SV)
			}
		})
	}
}

// TestHiddenGradNormsAfterTraining shows the notebook's use: train with pkg/train, then
// measure on the trainer's store (variables under train.ModelScope). The norms must be
// finite and differ from those at initialisation.
func TestHiddenGradNormsAfterTraining(t *testing.T) {
	task := tasks.Copy{T: 10, Symbols: 4, Recall: 3}
	cell := rnn.NewTanh(task.NumInputs(), 16, task.NumOutputs())
	be := backend.MustNew()
	tr, err := train.New(be, cell, task, train.Config{Steps: 20, Batch: 8, Seed: 3, EvalBatch: 8, Optimizer: train.RMSProp{LR: 1e-2}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := task.Sample(rand.New(rand.NewPCG(4, 4)), 8)
	if err != nil {
		t.Fatal(err)
	}
	scope := tr.Store.Scope(train.ModelScope)
	before, err := analysis.HiddenGradNorms(be, scope, cell, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	after, err := analysis.HiddenGradNorms(be, scope, cell, b, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !(after.Loss < before.Loss) {
		t.Errorf("loss %.4f after 20 steps, %.4f before: want lower (is the trained store used?)", after.Loss, before.Loss)
	}
	for k := range after.Total {
		if math.IsNaN(after.Total[k]) || after.Total[k] == before.Total[k] {
			t.Fatalf("t = %d: ‖∂C/∂h_t‖ %g after training, %g before: want finite and changed", k, after.Total[k], before.Total[k])
		}
	}
}
