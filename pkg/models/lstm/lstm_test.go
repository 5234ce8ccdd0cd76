package lstm_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// initRandom creates the cell's variables in a new store and then overwrites every one of
// them (biases, h0 and c0 included) with values from U[−1, 1], so that no gradient or term
// of the hand computation is trivially zero. It returns the store and the values by name.
func initRandom(t *testing.T, c *lstm.Cell, seed uint64) (*model.Store, map[string][]float64) {
	t.Helper()
	store := model.NewStore()
	scope := store.RootScope()
	rng := rand.New(rand.NewPCG(seed, 1))
	if err := c.Init(scope, rng); err != nil {
		t.Fatal(err)
	}
	var vars []*model.Variable
	for v := range scope.IterVariables() {
		vars = append(vars, v)
	}
	slices.SortFunc(vars, func(a, b *model.Variable) int { return strings.Compare(a.Name(), b.Name()) })
	values := map[string][]float64{}
	for _, v := range vars {
		vals := rnn.Uniform(rng, v.Shape().Size(), -1, 1)
		v.MustSetValue(tensors.FromFlatDataAndDimensions(vals, v.Shape().Dimensions...))
		values[v.Name()] = vals
	}
	return store, values
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// byHand runs the LSTM equations of the package doc in plain Go for one example x ([T][In])
// with the variables p (flat, row-major, shapes as documented) and returns y_t ([T][Out])
// and the states [h_t | c_t] ([T][2N]).
func byHand(c *lstm.Cell, p map[string][]float64, x [][]float64) (ys, states [][]float64) {
	n, in, out := c.N, c.In, c.Out
	h := slices.Clone(p["h0"])
	cell := slices.Clone(p["c0"])
	for _, xt := range x {
		pre := func(k, j int) float64 { // gate k, unit j: V_k x + W_k h + b_k
			z := p["b"][k*n+j]
			for i := range in {
				z += xt[i] * p["V"][k*in*n+i*n+j]
			}
			for m := range n {
				z += h[m] * p["W"][k*n*n+m*n+j]
			}
			return z
		}
		newC := make([]float64, n)
		for j := range n {
			i, f, g := sigmoid(pre(lstm.GateI, j)), sigmoid(pre(lstm.GateF, j)), math.Tanh(pre(lstm.GateG, j))
			newC[j] = f*cell[j] + i*g
		}
		newH := make([]float64, n)
		for j := range n {
			zo := pre(lstm.GateO, j)
			if c.Peephole {
				for m := range n {
					zo += newC[m] * p["P"][m*n+j]
				}
			}
			newH[j] = sigmoid(zo) * math.Tanh(newC[j])
		}
		h, cell = newH, newC
		y := slices.Clone(p["bo"])
		for q := range out {
			for j := range n {
				y[q] += h[j] * p["U"][j*out+q]
			}
		}
		ys = append(ys, y)
		states = append(states, append(slices.Clone(h), cell...))
	}
	return ys, states
}

// TestStepByHand compares two steps of the graph, for a batch of two, with byHand, for
// the cell with and without the peephole.
func TestStepByHand(t *testing.T) {
	const batch, T = 2, 2
	for _, tc := range []struct {
		name string
		cell *lstm.Cell
	}{
		{"zaremba", lstm.New(3, 4, 2)},
		{"peephole", &lstm.Cell{In: 3, N: 4, Out: 2, Peephole: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cell
			c.Type = dtypes.Float64
			store, p := initRandom(t, c, 11)
			x := rnn.Uniform(rand.New(rand.NewPCG(5, 5)), batch*T*c.In, -1, 1)
			res := model.MustExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
				out, states := rnn.Sequence(c, scope, Reshape(Const(g, x), batch, T, c.In))
				return []*Node{out, states}
			})
			gotY := tensors.MustCopyFlatData[float64](res[0])
			gotS := tensors.MustCopyFlatData[float64](res[1])
			for b := range batch {
				xb := make([][]float64, T)
				for s := range T {
					xb[s] = x[(b*T+s)*c.In : (b*T+s+1)*c.In]
				}
				ys, states := byHand(c, p, xb)
				for s := range T {
					for q, want := range ys[s] {
						if got := gotY[(b*T+s)*c.Out+q]; math.Abs(got-want) > 1e-12 {
							t.Errorf("y[%d, %d, %d] = %.15g, want %.15g", b, s, q, got, want)
						}
					}
					for k, want := range states[s] {
						if got := gotS[(b*T+s)*2*c.N+k]; math.Abs(got-want) > 1e-12 {
							t.Errorf("state[%d, %d, %d] = %.15g, want %.15g ([h | c], N = %d)", b, s, k, got, want, c.N)
						}
					}
				}
			}
		})
	}
}
