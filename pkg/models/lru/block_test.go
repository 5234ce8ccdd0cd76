package lru_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/lru"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
	"github.com/urnn-notebooks/longmemory/pkg/models/s4d"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
)

// TestBlock runs the shared cell suite on the deep LRU's block, with an encoder and a decoder
// (In, Out ≠ H) and without.
func TestBlock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block lru.Block
	}{
		{"encoder and decoder", lru.Block{In: 3, H: 4, N: 2, Out: 2}},
		{"width H throughout", lru.Block{In: 4, H: 4, N: 3, Out: 4, RMin: 0.5, RMax: 0.8}},
		{"no γ", lru.Block{In: 3, H: 4, N: 2, Out: 2, NoGamma: true}},
		{"S4D's recurrence", lru.Block{In: 3, H: 4, N: 2, Out: 2, Recurrence: &s4d.Cell{In: 4, N: 2, Out: 4}}},
		{"BatchNorm at evaluation (bn_mean 0, bn_var 1, as Init sets them)", lru.Block{In: 3, H: 4, N: 2, Out: 2, BatchNorm: true}},
		{"S4D-Inv, width H throughout", lru.Block{In: 4, H: 4, N: 3, Out: 4, Recurrence: &s4d.Cell{In: 4, N: 3, Out: 4, AInit: s4d.Inv}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.block
			celltest.Test(t, celltest.Config{
				New: func() rnn.Cell {
					c := b
					c.Type = dtypes.Float64
					return &c
				},
				Sizes: rnn.Sizes{In: b.In, State: 2*b.N + b.H, Out: b.Out},
				// The doc of NumParams: 3N + 4HN + 3H + 2H² + 2H, + In·H + H, + H·Out + Out.
				ParamCounts: []celltest.ParamCount{
					{Name: "copy, first block H 64, N 64", Cell: &lru.Block{In: 10, H: 64, N: 64, Out: 64}, Want: 192 + 16384 + 192 + 8192 + 128 + 704},
					{Name: "H 64 throughout", Cell: &lru.Block{In: 64, H: 64, N: 64, Out: 64}, Want: 192 + 16384 + 192 + 8192 + 128},
					{Name: "H 64 throughout, no γ", Cell: &lru.Block{In: 64, H: 64, N: 64, Out: 64, NoGamma: true}, Want: 128 + 16384 + 192 + 8192 + 128},
					{Name: "H 64 throughout, S4D", Cell: &lru.Block{In: 64, H: 64, N: 64, Out: 64, Recurrence: s4d.New(64, 64, 64)}, Want: 192 + 16384 + 192 + 8192 + 128},
				},
				Budget: celltest.GraphCost{Forward: 39, Training: 134},
				BadConfigs: []celltest.BadConfig{
					{Name: "zero H", Cell: &lru.Block{In: 3, H: 0, N: 2, Out: 2}, Want: "lru.Block: H = 0"},
					{Name: "negative N", Cell: &lru.Block{In: 3, H: 4, N: -1, Out: 2}, Want: "lru.Block: N = -1"},
					{Name: "RMax 1", Cell: &lru.Block{In: 3, H: 4, N: 2, Out: 2, RMax: 1}, Want: "RMax = 1"},
					{Name: "S4D of other sizes", Cell: &lru.Block{In: 3, H: 4, N: 2, Out: 2, Recurrence: s4d.New(4, 3, 4)}, Want: "want In = Out = H = 4 and State = 2N = 4"},
					{Name: "S4D with the LRU's ring", Cell: &lru.Block{In: 3, H: 4, N: 2, Out: 2, RMin: 0.5, Recurrence: s4d.New(4, 2, 4)}, Want: "RMin = 0.5"},
					{Name: "S4D of bad Δ", Cell: &lru.Block{In: 3, H: 4, N: 2, Out: 2, Recurrence: &s4d.Cell{In: 4, N: 2, Out: 4, DTMin: -1}}, Want: "DTMin = -1"},
				},
				Mismatched: []celltest.BadConfig{
					{Name: "other N", Cell: resized(b, 0, 1), Want: "/" + firstVar(b) + " has shape"},
					{Name: "other H", Cell: resized(b, 1, 0), Want: "variable /cell/"}, // a shape, or E, which In = H has not
				},
				Step: blockStep,
			})
		})
	}
}

// resized returns b with dh more features and dn more units, its Recurrence resized alike.
func resized(b lru.Block, dh, dn int) *lru.Block {
	b.H, b.N = b.H+dh, b.N+dn
	if r, ok := b.Recurrence.(*s4d.Cell); ok {
		c := *r
		c.In, c.N, c.Out = b.H, b.N, b.H
		b.Recurrence = &c
	}
	return &b
}

// firstVar names the first variable of b's recurrence, whose shape N sets.
func firstVar(b lru.Block) string {
	if b.Recurrence != nil {
		return b.Recurrence.RecurrentVars()[0]
	}
	return "nu_log"
}

// blockStep is one step of the block (lru.Block's doc) in plain Go for one example, with the
// state h = [Re x | Im x | e].
func blockStep(cell rnn.Cell, p map[string][]float64, h, u []float64) (next, y []float64) {
	b := cell.(*lru.Block)
	H, n := b.H, b.N
	matVec := func(v []float64, w []float64, rows, cols int) []float64 { // v·W, W [rows, cols]
		out := make([]float64, cols)
		for i := range rows {
			for k := range cols {
				out[k] += v[i] * w[i*cols+k]
			}
		}
		return out
	}
	add := func(a, c []float64) []float64 {
		out := make([]float64, len(a))
		for i := range a {
			out[i] = a[i] + c[i]
		}
		return out
	}
	norm := func(e []float64) []float64 {
		if b.BatchNorm { // the running statistics as Init sets them: μ̄ = 0, σ̄² = 1
			v := make([]float64, H)
			for k, x := range e {
				v[k] = x/math.Sqrt(1+1e-5)*p["ln_g"][k] + p["ln_b"][k]
			}
			return v
		}
		var mean, variance float64
		for _, x := range e {
			mean += x / float64(H)
		}
		for _, x := range e {
			variance += (x - mean) * (x - mean) / float64(H)
		}
		v := make([]float64, H)
		for k, x := range e {
			v[k] = (x-mean)/math.Sqrt(variance+1e-5)*p["ln_g"][k] + p["ln_b"][k]
		}
		return v
	}
	e := u
	if b.In != H {
		e = add(matVec(u, p["E"], b.In, H), p["be"])
	}
	v := norm(e)
	// unit j's λ and the gain of its input (B v)_j; the readout's factor.
	unit, scale := func(j int) (lambda, gain complex128) {
		lambda = cmplx.Exp(complex(-math.Exp(p["nu_log"][j]), math.Exp(p["theta_log"][j])))
		return lambda, gamma(p, j)
	}, 1.0
	if _, ok := b.Recurrence.(*s4d.Cell); ok { // Ā = exp(Δ a), B̄ = (Ā − 1)/a · B, y = 2 Re(C x)
		unit, scale = func(j int) (lambda, gain complex128) {
			a := complex(-math.Exp(p["a_re_log"][j]), p["a_im"][j])
			lambda = cmplx.Exp(complex(math.Exp(p["log_dt"][j]), 0) * a)
			return lambda, (lambda - 1) / a
		}, 2
	}
	next = make([]float64, 2*n+H)
	x := make([]complex128, n)
	for j := range n {
		lambda, gain := unit(j)
		var bv complex128
		for k := range H {
			bv += complex(p["B_re"][k*n+j], p["B_im"][k*n+j]) * complex(v[k], 0)
		}
		x[j] = lambda*complex(h[j], h[n+j]) + gain*bv
		next[j], next[n+j] = real(x[j]), imag(x[j])
	}
	copy(next[2*n:], e)
	yy := make([]float64, H)
	for k := range H {
		var cx complex128
		for j := range n {
			cx += complex(p["C_re"][j*H+k], p["C_im"][j*H+k]) * x[j]
		}
		yy[k] = scale*real(cx) + p["D"][k]*v[k]
	}
	g1, g2 := add(matVec(yy, p["W1"], H, H), p["b1"]), add(matVec(yy, p["W2"], H, H), p["b2"])
	z := make([]float64, H)
	for k := range H {
		z[k] = e[k] + g1[k]/(1+math.Exp(-g2[k]))
	}
	if b.Out == H {
		return next, z
	}
	return next, add(matVec(z, p["Wo"], H, b.Out), p["bo"])
}

// TestDeepStates checks that a stack of blocks (a deep LRU, its middle block S4D's) computes a chunk's states by its
// layers' scans (stack's States, the blocks' rnn.Sequencer) as its steps do, and its outputs
// and last state by its layers' filters (stack's Filter, the blocks' rnn.Filter), with the
// same outputs and gradients with respect to every variable, to 1e-12 and 1e-10.
func TestDeepStates(t *testing.T) {
	const B, T = 2, 70
	deep := stack.New(
		&lru.Block{In: 3, H: 4, N: 3, Out: 4, Type: dtypes.Float64},
		&lru.Block{In: 4, H: 4, N: 3, Out: 4, Type: dtypes.Float64, Recurrence: s4d.New(4, 3, 4)},
		&lru.Block{In: 4, H: 4, N: 3, Out: 2, Type: dtypes.Float64})
	store := model.NewStore()
	scope := store.RootScope()
	if err := deep.Init(scope, rand.New(rand.NewPCG(8, 1))); err != nil {
		t.Fatal(err)
	}
	rnn.RandomizeVariables(scope, rand.New(rand.NewPCG(8, 2)), -0.5, 0.5)
	rng := rand.New(rand.NewPCG(9, 1))
	x := tensors.FromFlatDataAndDimensions(rnn.Uniform(rng, B*T*3, -1, 1), B, T, 3)
	w := tensors.FromFlatDataAndDimensions(rnn.Uniform(rng, B*T*2, -1, 1), B, T, 2)
	var names []string
	res, err := model.ExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
		rnn.LiveVariables(store, g)
		st := deep.Build(scope, g)
		u := Const(g, x)
		stepped := rnn.Unroll(st, u, nil)
		scanned := st.(rnn.Sequencer).States(st.Initial(B), u)
		var vars []*Node
		names = names[:0]
		for v := range scope.IterVariables() {
			if v.Trainable {
				names = append(names, v.Name())
				vars = append(vars, v.NodeValue(g))
			}
		}
		filtered, last := st.(rnn.Filter).Filter(st.Initial(B), u)
		out := []*Node{stepped, scanned, st.Readout(stepped), filtered, SliceAxis(stepped, 1, AxisElem(T-1)), InsertAxes(last, 1)}
		for _, outputs := range []*Node{st.Readout(stepped), st.Readout(scanned), filtered} {
			loss := ReduceAllSum(Mul(outputs, Const(g, w)))
			out = append(out, Gradient(loss, vars...)...)
		}
		return out
	})
	if err != nil {
		t.Fatal(err)
	}
	compare := func(what string, got, want *tensors.Tensor, tol float64) {
		g, w := tensors.MustCopyFlatData[float64](got), tensors.MustCopyFlatData[float64](want)
		for i := range w {
			if math.Abs(g[i]-w[i]) > tol*max(1, math.Abs(w[i])) {
				t.Errorf("%s[%d]: scan %.17g, steps %.17g", what, i, g[i], w[i])
				return
			}
		}
	}
	compare("states", res[1], res[0], 1e-12)
	compare("filter outputs", res[3], res[2], 1e-12)
	compare("filter last state", res[5], res[4], 1e-12)
	nv := len(names)
	for k, name := range names {
		compare(fmt.Sprintf("gradient wrt %s (%d)", name, k), res[6+nv+k], res[6+k], 1e-10)
		compare(fmt.Sprintf("filter gradient wrt %s (%d)", name, k), res[6+2*nv+k], res[6+k], 1e-10)
	}
}
