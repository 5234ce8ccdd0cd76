package hessianfree

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/gru"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/urnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

const scopeName = "/model"

// setup initialises cell in a new store and returns its scope, its trainable variables and
// a batch of task.
func setup(t *testing.T, cell rnn.Cell, task tasks.Task, batch int, seed uint64) (*model.Scope, []*model.Variable, *tasks.Batch) {
	t.Helper()
	store := model.NewStore()
	scope := store.Scope(scopeName)
	if err := cell.Init(scope, rand.New(rand.NewPCG(seed, 1))); err != nil {
		t.Fatal(err)
	}
	b, err := task.Sample(rand.New(rand.NewPCG(seed, 2)), batch)
	if err != nil {
		t.Fatal(err)
	}
	var vars []*model.Variable // in path order, as train.Runner.Vars
	for v := range scope.IterVariables() {
		if v.Trainable {
			vars = append(vars, v)
		}
	}
	slices.SortFunc(vars, func(a, b *model.Variable) int { return strings.Compare(a.Path(), b.Path()) })
	return scope, vars, b
}

// explicitCurvature returns G + μ S as a dense matrix: J_F and J_h by central differences
// of the outputs and states (step 1e-6), H_L in closed form (seq.SequenceLoss: 2m/norm on
// the first output for squared error; m/norm (diag p − p pᵀ) for softmax cross-entropy).
func explicitCurvature(t *testing.T, scope *model.Scope, cell rnn.Cell, vars []*model.Variable, b *tasks.Batch, mu float64) [][]float64 {
	t.Helper()
	forward, err := model.NewExec(backend.MustNew(), scope.Store(), func(_ *model.Scope, g *Graph, in []*Node) []*Node {
		rnn.LiveVariables(scope.Store(), g)
		out, states := rnn.Sequence(cell, scope, in[0])
		return []*Node{out, states}
	})
	if err != nil {
		t.Fatal(err)
	}
	x, _, _ := seq.ChunkTensors(b, 0, b.Len, cell.DType())
	run := func() (out, states []float64) {
		res, err := forward.Call(x)
		if err != nil {
			t.Fatal(err)
		}
		return seq.Floats(res[0]), seq.Floats(res[1])
	}
	theta := Values(vars)
	n := len(theta)
	out0, _ := run()
	jF, jH := make([][]float64, n), make([][]float64, n) // columns
	const h = 1e-6
	for i := range n {
		p := append([]float64(nil), theta...)
		p[i] += h
		SetValues(vars, p)
		oP, sP := run()
		p[i] -= 2 * h
		SetValues(vars, p)
		oM, sM := run()
		jF[i], jH[i] = make([]float64, len(oP)), make([]float64, len(sP))
		for k := range oP {
			jF[i][k] = (oP[k] - oM[k]) / (2 * h)
		}
		for k := range sP {
			jH[i][k] = (sP[k] - sM[k]) / (2 * h)
		}
	}
	SetValues(vars, theta)
	norm, nOut := seq.Masked(b), cell.Sizes().Out
	// hl(w) = H_L w for a vector w over the outputs, [B, T, Out] flattened.
	hl := func(w []float64) []float64 {
		r := make([]float64, len(w))
		for bt := range b.Size * b.Len {
			m := float64(b.Mask[bt]) / norm
			o, wk, rk := out0[bt*nOut:(bt+1)*nOut], w[bt*nOut:(bt+1)*nOut], r[bt*nOut:(bt+1)*nOut]
			if b.Labels == nil {
				rk[0] = 2 * m * wk[0]
				continue
			}
			mx, z := math.Inf(-1), 0.0
			for _, v := range o {
				mx = math.Max(mx, v)
			}
			p := make([]float64, nOut)
			for k, v := range o {
				p[k] = math.Exp(v - mx)
				z += p[k]
			}
			pw := 0.0
			for k := range p {
				p[k] /= z
				pw += p[k] * wk[k]
			}
			for k := range p {
				rk[k] = m * (p[k]*wk[k] - p[k]*pw)
			}
		}
		return r
	}
	dot := func(a, c []float64) float64 {
		s := 0.0
		for k := range a {
			s += a[k] * c[k]
		}
		return s
	}
	G := make([][]float64, n)
	for i := range n {
		G[i] = make([]float64, n)
		for j := range n {
			G[i][j] = dot(jF[i], hl(jF[j])) + mu*dot(jH[i], jH[j])/norm
		}
	}
	return G
}

// TestCurvatureExplicit checks (G + μ S) e_j, column by column, against the explicit matrix,
// in float64, for cells whose graphs use different ops (tanh, logistic gates, slices and
// concatenations, the uRNN's real-arithmetic FFT and modReLU) on a regression and two
// classification losses: reverse over reverse goes through all of them.
func TestCurvatureExplicit(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell rnn.Cell
		task tasks.Task
	}{
		{"tanh/multiplication", &rnn.Simple{In: 2, N: 3, Out: 1, Type: dtypes.Float64}, tasks.Multiplication{T: 4}},
		{"tanh/xor", &rnn.Simple{In: 2, N: 3, Out: 2, Type: dtypes.Float64}, tasks.XOR{T: 4}},
		{"tanh/copy", &rnn.Simple{In: 4, N: 2, Out: 3, Type: dtypes.Float64}, tasks.Copy{T: 2, Symbols: 2, Recall: 1}},
		{"lstm/order", &lstm.Cell{In: 6, N: 2, Out: 4, Type: dtypes.Float64}, tasks.TemporalOrder{T: 10}},
		{"gru/adding", &gru.Cell{In: 2, N: 2, Out: 1, Type: dtypes.Float64}, tasks.Adding{T: 4}},
		{"urnn/adding", &urnn.Cell{In: 2, N: 4, Out: 1, Type: dtypes.Float64}, tasks.Adding{T: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scope, vars, b := setup(t, tc.cell, tc.task, 3, 7)
			c, err := NewCurvature(backend.MustNew(), scope, tc.cell, vars)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.SetBatch(b); err != nil {
				t.Fatal(err)
			}
			for _, mu := range []float64{0, 0.3} {
				want := explicitCurvature(t, scope, tc.cell, vars, b, mu)
				n := len(want)
				scale := 0.0
				for i := range n {
					scale = math.Max(scale, math.Abs(want[i][i]))
				}
				for j := range n {
					e := make([]float64, n)
					e[j] = 1
					got, err := c.Times(e, mu)
					if err != nil {
						t.Fatal(err)
					}
					for i := range n {
						if d := math.Abs(got[i] - want[i][j]); d > 1e-6*(scale+math.Abs(want[i][j])) {
							t.Fatalf("μ = %g: (G + μS)[%d][%d] = %.10g, explicit %.10g (of %d parameters)", mu, i, j, got[i], want[i][j], n)
						}
					}
				}
			}
		})
	}
}
