package ltrnn_test

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
)

// ref is a plain-Go LT-RNN, written from the equations of the package doc, that the
// graph is compared with.
type ref struct {
	in, n, out int
	sigma      ltrnn.Sigma
	clip       float64 // 0: off
	pooling    bool
	w          ltrnn.Weights
}

// step advances the state h by one step on input x and returns h_t, y_t and the norm of
// the state before clipping.
func (r ref) step(h, x []float64) (next, y []float64, preNorm float64) {
	next = make([]float64, r.n)
	for i := range r.n {
		z := 0.0
		if r.w.B != nil {
			z = r.w.B[i]
		}
		for k := range r.in {
			z += r.w.U[i*r.in+k] * x[k]
		}
		switch r.sigma {
		case ltrnn.ReLU:
			z = max(z, 0)
		case ltrnn.Tanh:
			z = math.Tanh(z)
		}
		for j := range r.n {
			z += r.w.V[i*r.n+j] * h[j]
		}
		next[i] = z
	}
	for _, v := range next {
		preNorm += v * v
	}
	preNorm = math.Sqrt(preNorm)
	if r.clip > 0 && preNorm > r.clip {
		for i := range next {
			next[i] *= r.clip / preNorm
		}
	}
	y = make([]float64, r.out)
	for o := range r.out {
		if r.w.BY != nil {
			y[o] = r.w.BY[o]
		}
		for j := range r.n {
			y[o] += r.w.W[o*r.n+j] * next[j]
		}
		if r.pooling {
			for j := range r.n / 2 {
				y[o] += r.w.WP[o*(r.n/2)+j] * math.Sqrt(next[2*j]*next[2*j]+next[2*j+1]*next[2*j+1]+ltrnn.PoolEps)
			}
		}
	}
	return next, y, preNorm
}

// run returns the outputs y_t and states h_t of one sequence x [T][In] from h_0 = 0, and
// the norms of the states before clipping.
func (r ref) run(x [][]float64) (ys, hs [][]float64, preNorms []float64) {
	h := make([]float64, r.n)
	for _, xt := range x {
		var y []float64
		var norm float64
		h, y, norm = r.step(h, xt)
		ys, hs, preNorms = append(ys, y), append(hs, h), append(preNorms, norm)
	}
	return ys, hs, preNorms
}

// inputs returns batch sequences [batch][T][in] with entries in [−1, 1].
func inputs(seed uint64, batch, T, in int) [][][]float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := make([][][]float64, batch)
	for b := range x {
		x[b] = make([][]float64, T)
		for t := range x[b] {
			x[b][t] = rnn.Uniform(rng, in, -1, 1)
		}
	}
	return x
}

func values(scope *model.Scope, name string) []float64 {
	return tensors.MustCopyFlatData[float64](scope.GetVariable(name).MustValue())
}

func setValues(scope *model.Scope, name string, v []float64) {
	dims := scope.GetVariable(name).MustValue().Shape().Dimensions
	scope.GetVariable(name).MustSetValue(tensors.FromFlatDataAndDimensions(v, dims...))
}

// refOf reads the Float64 weights of cell from scope into a ref.
func refOf(cell *ltrnn.Cell, scope *model.Scope, clip float64) ref {
	p := map[string][]float64{}
	for v := range scope.IterVariables() {
		p[v.Name()] = values(scope, v.Name())
	}
	return refFrom(cell, p, clip)
}

// refFrom returns the ref of cell with the weights p (by variable name).
func refFrom(cell *ltrnn.Cell, p map[string][]float64, clip float64) ref {
	return ref{in: cell.In, n: cell.N, out: cell.Out, sigma: cell.Sigma, clip: clip, pooling: cell.Pooling,
		w: ltrnn.Weights{U: p["U"], V: p["V"], W: p["W"], B: p["b"], WP: p["WP"], BY: p["by"]}}
}

// TestCell runs the shared cell suite on LT-RNNs of each σ and initialisation, with and
// without pooling, output bias and clipping.
func TestCell(t *testing.T) {
	const in, n, out = 3, 4, 2
	for _, tc := range []struct {
		name   string
		cell   ltrnn.Cell
		budget celltest.GraphCost
	}{
		{"ornn linear", ltrnn.Cell{VInit: ltrnn.Orthogonal}, celltest.GraphCost{Forward: 16, Training: 69}},
		{"irnn relu", ltrnn.Cell{VInit: ltrnn.Identity, Sigma: ltrnn.ReLU}, celltest.GraphCost{Forward: 16, Training: 69}},
		{"ornn tanh pooled", ltrnn.Cell{Sigma: ltrnn.Tanh, Pooling: true}, celltest.GraphCost{Forward: 16, Training: 69}},
		{"ornn linear pooled bias unclipped", ltrnn.Cell{Pooling: true, OutputBias: true, ClipNorm: ltrnn.NoClip}, celltest.GraphCost{Forward: 8, Training: 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mismatched []celltest.BadConfig
			mismatched = append(mismatched, celltest.BadConfig{Name: "other N", Cell: ltrnn.NewORNN(in, 6, out), Want: "/U has shape (Float64)[4, 3], want dimensions [6 3]"})
			if !tc.cell.Pooling {
				mismatched = append(mismatched, celltest.BadConfig{Name: "pooling not initialised", Cell: &ltrnn.Cell{In: in, N: n, Out: out, Pooling: true}, Want: "WP does not exist"})
			}
			celltest.Test(t, celltest.Config{
				New: func() rnn.Cell {
					c := tc.cell
					c.In, c.N, c.Out, c.Type = in, n, out, dtypes.Float64
					return &c
				},
				Sizes: rnn.Sizes{In: in, State: n, Out: out},
				// N·In + N + N² + Out·N [+ Out·N/2] [+ Out] at the paper's sizes ([1] §4.1).
				ParamCounts: []celltest.ParamCount{
					{Name: "copy", Cell: ltrnn.NewORNN(10, 80, 9), Want: 8000},
					{Name: "adding", Cell: ltrnn.NewIRNN(2, 128, 1), Want: 16896},
					{Name: "copy pooled", Cell: &ltrnn.Cell{In: 10, N: 80, Out: 9, Pooling: true}, Want: 8000 + 9*40},
					{Name: "adding pooled", Cell: &ltrnn.Cell{In: 2, N: 128, Out: 1, Pooling: true}, Want: 16896 + 64},
					{Name: "copy output bias", Cell: &ltrnn.Cell{In: 10, N: 80, Out: 9, OutputBias: true}, Want: 8000 + 9},
				},
				Budget:     tc.budget,
				BadConfigs: badConfigs(),
				Mismatched: mismatched,
				Step: func(cell rnn.Cell, p map[string][]float64, h, x []float64) (next, y []float64) {
					c := cell.(*ltrnn.Cell)
					clip := 0.0 // off
					if c.ClipNorm == 0 {
						clip = ltrnn.DefaultClipNorm
					}
					next, y, _ = refFrom(c, p, clip).step(h, x)
					return next, y
				},
			})
		})
	}
}

// badConfigs are invalid configurations, with the part of Init's error naming the field.
func badConfigs() []celltest.BadConfig {
	w := func(n int) []float64 { return make([]float64, n) }
	return []celltest.BadConfig{
		{Name: "odd N with pooling", Cell: &ltrnn.Cell{In: 2, N: 5, Out: 1, Pooling: true}, Want: "N = 5"},
		{Name: "zero In", Cell: &ltrnn.Cell{In: 0, N: 4, Out: 1}, Want: "In = 0"},
		{Name: "negative Out", Cell: &ltrnn.Cell{In: 1, N: 4, Out: -2}, Want: "Out = -2"},
		{Name: "bad Sigma", Cell: &ltrnn.Cell{In: 1, N: 4, Out: 1, Sigma: 7}, Want: "Sigma = 7"},
		{Name: "bad VInit", Cell: &ltrnn.Cell{In: 1, N: 4, Out: 1, VInit: 3}, Want: "VInit = 3"},
		{Name: "NaN ClipNorm", Cell: &ltrnn.Cell{In: 1, N: 4, Out: 1, ClipNorm: math.NaN()}, Want: "ClipNorm = NaN"},
		{Name: "Int32 Type", Cell: &ltrnn.Cell{In: 1, N: 4, Out: 1, Type: dtypes.Int32}, Want: "Type = Int32"},
		{Name: "short Preset.U", Cell: &ltrnn.Cell{In: 2, N: 2, Out: 1, Preset: &ltrnn.Weights{U: w(3), V: w(4), W: w(2)}}, Want: "Preset.U has 3 values, want 4"},
		{Name: "Preset.WP without pooling", Cell: &ltrnn.Cell{In: 2, N: 2, Out: 1, Preset: &ltrnn.Weights{U: w(4), V: w(4), W: w(2), WP: w(1)}}, Want: "Preset.WP"},
		{Name: "short Preset.B", Cell: &ltrnn.Cell{In: 2, N: 2, Out: 1, Preset: &ltrnn.Weights{U: w(4), V: w(4), W: w(2), B: w(1)}}, Want: "Preset.B has 1 values, want 2"},
	}
}

// sequence runs cell on x in the graph and returns outputs [batch, T, Out] and states
// [batch, T, N], flattened.
func sequence(store *model.Store, cell *ltrnn.Cell, x [][][]float64) (out, states []float64) {
	res := model.MustExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
		o, s := rnn.Sequence(cell, scope, Const(g, x))
		return []*Node{o, s}
	})
	return tensors.MustCopyFlatData[float64](res[0]), tensors.MustCopyFlatData[float64](res[1])
}

// compare checks graph outputs and states against the plain-Go reference.
func compare(t *testing.T, r ref, x [][][]float64, out, states []float64, tol float64) {
	t.Helper()
	T := len(x[0])
	for b := range x {
		ys, hs, _ := r.run(x[b])
		for s := range T {
			for o := range r.out {
				if got, want := out[(b*T+s)*r.out+o], ys[s][o]; math.Abs(got-want) > tol*max(1, math.Abs(want)) {
					t.Errorf("y[b=%d, t=%d, %d] = %.15g, want %.15g", b, s+1, o, got, want)
				}
			}
			for j := range r.n {
				if got, want := states[(b*T+s)*r.n+j], hs[s][j]; math.Abs(got-want) > tol*max(1, math.Abs(want)) {
					t.Errorf("h[b=%d, t=%d, %d] = %.15g, want %.15g", b, s+1, j, got, want)
				}
			}
		}
	}
}

// TestStepByHand runs preset weights through the graph and through the plain-Go equations
// h_t = clip_l(V h_{t−1} + σ(U x_t + b)), y_t = W h_t + W_P pool(h_t) + b_y.
func TestStepByHand(t *testing.T) {
	const in, n, out = 2, 4, 3
	rng := rand.New(rand.NewPCG(5, 5))
	u := func(k int) []float64 { return rnn.Uniform(rng, k, -1, 1) }
	base := ltrnn.Weights{U: u(n * in), V: u(n * n), W: u(out * n), B: u(n)}
	for _, tc := range []struct {
		name    string
		sigma   ltrnn.Sigma
		pooling bool
		clip    bool
	}{
		{"linear", ltrnn.Linear, false, false},
		{"relu", ltrnn.ReLU, false, false},
		{"tanh pooled", ltrnn.Tanh, true, false},
		{"linear pooled clipped", ltrnn.Linear, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := base
			if tc.pooling {
				w.WP, w.BY = u(out*n/2), u(out)
			}
			cell, err := ltrnn.FromWeights(tc.sigma, w)
			if err != nil {
				t.Fatal(err)
			}
			if cell.In != in || cell.N != n || cell.Out != out || cell.Pooling != tc.pooling || cell.OutputBias != tc.pooling {
				t.Fatalf("FromWeights sizes In, N, Out, Pooling, OutputBias = %d, %d, %d, %v, %v, want %d, %d, %d, %v, %v",
					cell.In, cell.N, cell.Out, cell.Pooling, cell.OutputBias, in, n, out, tc.pooling, tc.pooling)
			}
			cell.Type = dtypes.Float64
			x := inputs(9, 2, 4, in)
			r := ref{in: in, n: n, out: out, sigma: tc.sigma, pooling: tc.pooling, w: w}
			if tc.clip {
				r.clip = clipMix(t, r, x)
				cell.ClipNorm = r.clip
			}
			store := model.NewStore()
			if err := cell.Init(store.RootScope(), nil); err != nil {
				t.Fatal(err)
			}
			o, s := sequence(store, cell, x)
			compare(t, r, x, o, s, 1e-12)
		})
	}
}

// TestClippedGradients checks ∂L/∂θ for every parameter against central differences with
// clipping active on some steps and inactive on others (the other configurations are in
// TestCell).
func TestClippedGradients(t *testing.T) {
	const in, n, out, batch, T = 3, 4, 2, 2, 5
	for _, tc := range []struct {
		name string
		cell ltrnn.Cell
	}{
		{"irnn linear clipped", ltrnn.Cell{VInit: ltrnn.Identity, OutputBias: true}},
		// Not ReLU: a step with σ(U x + b) = 0 after a clipped one lands exactly on ‖h‖ = l.
		{"ornn tanh pooled clipped", ltrnn.Cell{Sigma: ltrnn.Tanh, Pooling: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cell := tc.cell
			cell.In, cell.N, cell.Out, cell.Type, cell.ClipNorm = in, n, out, dtypes.Float64, ltrnn.NoClip
			store := model.NewStore()
			scope := store.RootScope()
			if err := cell.Init(scope, rand.New(rand.NewPCG(1, 2))); err != nil {
				t.Fatal(err)
			}
			// Give the zero-initialised biases generic values.
			rng := rand.New(rand.NewPCG(4, 4))
			setValues(scope, "b", rnn.Uniform(rng, n, -0.5, 0.5))
			if cell.OutputBias {
				setValues(scope, "by", rnn.Uniform(rng, out, -0.5, 0.5))
			}
			x := inputs(3, batch, T, in)
			cell.ClipNorm = clipMix(t, refOf(&cell, scope, 0), x)
			o, s := sequence(store, &cell, x)
			compare(t, refOf(&cell, scope, cell.ClipNorm), x, o, s, 1e-12)
			wy := rnn.Uniform(rng, batch*T*out, -1, 1)
			loss := func(scope *model.Scope, g *Graph) *Node {
				o, _ := rnn.Sequence(&cell, scope, Const(g, x))
				return ReduceAllSum(Mul(o, Reshape(Const(g, wy), batch, T, out)))
			}
			if err := celltest.CheckGradient(backend.MustNew(), store, loss, celltest.FD{}); err != nil {
				t.Error(err)
			}
		})
	}
}

// clipMix returns a clipping radius l between the median state norms of r (unclipped)
// on x, and checks that with it clipping is active on some steps and inactive on others,
// with every pre-clip norm at least 0.1% away from l (so finite differences do not
// cross the kink of clip_l).
func clipMix(t *testing.T, r ref, x [][][]float64) float64 {
	t.Helper()
	var norms []float64
	for b := range x {
		_, _, pre := r.run(x[b])
		norms = append(norms, pre...)
	}
	sort.Float64s(norms)
	k := len(norms) / 2
	r.clip = (norms[k-1] + norms[k]) / 2
	var clipped, free int
	for b := range x {
		_, _, pre := r.run(x[b])
		for _, p := range pre {
			if math.Abs(p-r.clip) < 1e-3*r.clip {
				t.Fatalf("pre-clip norm %.17g within 0.1%% of l = %.17g", p, r.clip)
			}
			if p > r.clip {
				clipped++
			} else {
				free++
			}
		}
	}
	if clipped == 0 || free == 0 {
		t.Fatalf("l = %g: %d clipped and %d unclipped steps, want both > 0", r.clip, clipped, free)
	}
	t.Logf("l = %.4g: %d steps clipped, %d not", r.clip, clipped, free)
	return r.clip
}

// TestClipState checks that clipping rescales a state to norm l exactly and leaves
// smaller states (and 0) bit-for-bit unchanged, per example.
func TestClipState(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    float64
		h    []float64
		want []float64
	}{
		{"3-4-5 clipped to 2", 2, []float64{3, 4}, []float64{1.2, 1.6}},
		{"inside", 2, []float64{0.3, -0.4}, []float64{0.3, -0.4}},
		{"zero", 0.1, []float64{0, 0}, []float64{0, 0}},
		{"just inside l = 0.1", 0.1, []float64{0.06, 0.0799}, []float64{0.06, 0.0799}},
		{"big", 1000, []float64{3e3, -4e3}, []float64{600, -800}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tensors.MustCopyFlatData[float64](MustExecOnce(backend.MustNew(), func(g *Graph) *Node {
				return ltrnn.ClipState(Const(g, [][]float64{tc.h}), tc.l)
			}))
			norm := math.Hypot(got[0], got[1])
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-12*max(1, math.Abs(tc.want[i])) {
					t.Errorf("clip(%v)[%d] = %.17g, want %.17g", tc.h, i, got[i], tc.want[i])
				}
			}
			if inNorm := math.Hypot(tc.h[0], tc.h[1]); inNorm <= tc.l {
				if got[0] != tc.h[0] || got[1] != tc.h[1] {
					t.Errorf("clip(%v) = %v, want it unchanged (norm %g <= l = %g)", tc.h, got, inNorm, tc.l)
				}
			} else if math.Abs(norm-tc.l) > 1e-13*tc.l {
				t.Errorf("‖clip(%v)‖ = %.17g, want l = %g", tc.h, norm, tc.l)
			}
		})
	}
	// Per example: a batch with one row above and one below l.
	got := tensors.MustCopyFlatData[float64](MustExecOnce(backend.MustNew(), func(g *Graph) *Node {
		return ltrnn.ClipState(Const(g, [][]float64{{6, 8, 0}, {0.5, 0, 0.5}}), 5)
	}))
	want := []float64{3, 4, 0, 0.5, 0, 0.5}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("batch clip: [%d] = %g, want %g", i, got[i], want[i])
		}
	}
}

// TestPool checks pool(h)_j = ‖(h_{2j}, h_{2j+1})‖ and its gradient, finite at 0.
func TestPool(t *testing.T) {
	h := [][]float64{{3, 4, 0, 0, -1, 1}, {0.6, -0.8, 5, 12, 1e-3, 0}}
	want := [][]float64{{5, 0, math.Sqrt2}, {1, 13, 1e-3}}
	res := MustExecOnceN(backend.MustNew(), func(g *Graph) []*Node {
		x := Const(g, h)
		p := ltrnn.Pool(x)
		return []*Node{p, Gradient(ReduceAllSum(p), x)[0]}
	})
	p, grad := tensors.MustCopyFlatData[float64](res[0]), tensors.MustCopyFlatData[float64](res[1])
	if dims := res[0].Shape().Dimensions; dims[0] != 2 || dims[1] != 3 {
		t.Fatalf("Pool shape %v, want [2 3]", dims)
	}
	for b := range h {
		for j := range 3 {
			if got := p[b*3+j]; math.Abs(got-want[b][j]) > 1e-6 {
				t.Errorf("pool[%d][%d] = %.12g, want %.12g", b, j, got, want[b][j])
			}
			// ∂p_j/∂h_{2j} = h_{2j}/p_j (0 when the pair is 0).
			for k := 2 * j; k <= 2*j+1; k++ {
				wantG := 0.0
				if want[b][j] > 0 {
					wantG = h[b][k] / want[b][j]
				}
				if got := grad[b*6+k]; math.IsNaN(got) || math.IsInf(got, 0) || math.Abs(got-wantG) > 1e-5 {
					t.Errorf("∂Σpool/∂h[%d][%d] = %g, want %g", b, k, got, wantG)
				}
			}
		}
	}
}

// TestAddingConstruction runs the explicit adding solution of [1] §3.2.1 through
// FromWeights: one ReLU unit, V = 1, U = (1, 1000), b = −1000, W = 1, so h adds x_t
// exactly when the marker is on and the last output is the sum of the marked values.
func TestAddingConstruction(t *testing.T) {
	const markerGain = 1000 // [1] §3.2.1: U = (1, 1000), bias −1000
	cell, err := ltrnn.FromWeights(ltrnn.ReLU, ltrnn.Weights{
		U: []float64{1, markerGain}, V: []float64{1}, W: []float64{1}, B: []float64{-markerGain},
	})
	if err != nil {
		t.Fatal(err)
	}
	cell.Type = dtypes.Float64
	store := model.NewStore()
	if err := cell.Init(store.RootScope(), nil); err != nil {
		t.Fatal(err)
	}
	vals := []float64{0.25, 0.9, 0.125, 0.5, 0.75, 0.3}
	marks := []float64{0, 1, 0, 0, 1, 0}
	x := make([][]float64, len(vals))
	for i := range vals {
		x[i] = []float64{vals[i], marks[i]}
	}
	out, _ := sequence(store, cell, [][][]float64{x})
	if got, want := out[len(out)-1], 0.9+0.75; math.Abs(got-want) > 1e-12 {
		t.Errorf("adding construction: last output %.15g, want x_2 + x_5 = %.15g", got, want)
	}
}
