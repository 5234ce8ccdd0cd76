package train

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/lru"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// TestAdamWStep checks three updates against AdamW's formula (the AdamW doc) computed in plain
// Go: w at the base rate with weight decay, r at half the rate without it (a scaled variable).
func TestAdamWStep(t *testing.T) {
	store := model.NewStore()
	w0, r0 := []float64{1, -2, 3}, []float64{0.5, -0.25}
	for _, v := range []struct {
		name string
		vals []float64
	}{{"r", r0}, {"w", w0}} {
		if err := rnn.NewVariable(store.Scope(ModelScope), v.name, dtypes.Float64, v.vals, len(v.vals)); err != nil {
			t.Fatal(err)
		}
	}
	vars := []*model.Variable{store.GetVariable("/model/r"), store.GetVariable("/model/w")}
	opt := AdamW{LR: 0.1, Beta1: 0.8, Beta2: 0.9, Eps: 1e-3, WeightDecay: 0.05}
	scale := []float64{0.5, 1}
	a, err := newAdamW(backend.MustNew(), store, vars, make([]bool, 2), scale, opt)
	if err != nil {
		t.Fatal(err)
	}
	theta := [][]float64{append([]float64{}, r0...), append([]float64{}, w0...)}
	m := [][]float64{make([]float64, 2), make([]float64, 3)}
	v := [][]float64{make([]float64, 2), make([]float64, 3)}
	grads := [][][]float64{
		{{0.3, -1}, {2, 0, -0.5}},
		{{-0.1, 0.4}, {1, 1, 1}},
		{{0, 2}, {-3, 0.5, 0.25}},
	}
	for step, g := range grads {
		norm, err := a.apply([]*tensors.Tensor{tensors.FromFlatDataAndDimensions(g[0], 2), tensors.FromFlatDataAndDimensions(g[1], 3)})
		if err != nil {
			t.Fatal(err)
		}
		var sq float64
		tt := float64(step + 1)
		for k := range theta {
			lambda := 0.0
			if scale[k] == 1 {
				lambda = opt.WeightDecay
			}
			for i := range theta[k] {
				gi := g[k][i]
				sq += gi * gi
				m[k][i] = opt.Beta1*m[k][i] + (1-opt.Beta1)*gi
				v[k][i] = opt.Beta2*v[k][i] + (1-opt.Beta2)*gi*gi
				mHat, vHat := m[k][i]/(1-math.Pow(opt.Beta1, tt)), v[k][i]/(1-math.Pow(opt.Beta2, tt))
				theta[k][i] -= opt.LR * scale[k] * (mHat/(math.Sqrt(vHat)+opt.Eps) + lambda*theta[k][i])
			}
		}
		if want := math.Sqrt(sq); math.Abs(norm-want) > 1e-12 {
			t.Errorf("step %d: gradient norm %g, want %g", step+1, norm, want)
		}
		for k, vr := range vars {
			got := tensors.MustCopyFlatData[float64](vr.MustValue())
			for i := range got {
				if math.Abs(got[i]-theta[k][i]) > 1e-12 {
					t.Errorf("step %d: %s[%d] = %.15g, want %.15g", step+1, vr.Name(), i, got[i], theta[k][i])
				}
			}
		}
	}
	if got := store.GetVariable(OptimizerScope + "/" + adamStepName).MustValue().Value(); got != int64(3) {
		t.Errorf("AdamW's update count after 3 updates = %v, want 3", got)
	}
}

// TestAdamWConfig: defaults, a bad field named, and RMSProp-only settings refused with AdamW on.
func TestAdamWConfig(t *testing.T) {
	c, err := Config{Steps: 1, AdamW: AdamW{LR: 1e-3}}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if want := (AdamW{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}); c.AdamW != want {
		t.Errorf("AdamW with defaults %+v, want %+v", c.AdamW, want)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"β₂ 1", Config{Steps: 1, AdamW: AdamW{LR: 1e-3, Beta2: 1}}, "AdamW.Beta2 = 1"},
		{"negative decay", Config{Steps: 1, AdamW: AdamW{LR: 1e-3, WeightDecay: -1}}, "AdamW.WeightDecay = -1"},
		{"RMSProp's clipping", Config{Steps: 1, AdamW: AdamW{LR: 1e-3}, Optimizer: RMSProp{ClipValue: 1}}, "Optimizer.ClipValue = 1 with Config.AdamW on"},
	} {
		if _, err := tc.cfg.WithDefaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// deepLRU is a small deep LRU of two blocks whose recurrent parameters train at half the rate.
func deepLRU() rnn.Cell {
	return stack.New(
		&lru.Block{In: 6, H: 4, N: 3, Out: 4, RecurrentLR: 0.5},
		&lru.Block{In: 4, H: 4, N: 3, Out: 5, RecurrentLR: 0.5})
}

// TestAdamWResumeGivesTheSameRun: an AdamW run of the deep LRU through its filter, interrupted
// after 4 steps and resumed from its checkpoint (m, v and t among its variables), logs the
// same records and ends with the same variables as an uninterrupted run.
func TestAdamWResumeGivesTheSameRun(t *testing.T) {
	task := tasks.Copy{T: 5, Symbols: 4, Recall: 3}
	cfg := Config{Steps: 8, Batch: 4, Seed: 7, EvalEvery: 2, Scan: true, AdamW: AdamW{LR: 1e-2, WeightDecay: 0.05}}
	whole, err := New(backend.MustNew(), deepLRU(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := whole.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	first, err := newIn(dir, deepLRU(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := first.Run(ctx, func(r Record) {
		if r.Step == 4 {
			cancel()
		}
	}); err != context.Canceled {
		t.Fatalf("interrupted Run returned %v, want context.Canceled", err)
	}
	second, err := newIn(dir, deepLRU(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := second.Resume(); err != nil || !ok || second.Step != 4 {
		t.Fatalf("Resume = %v, %v at step %d; want a checkpoint at step 4", ok, err, second.Step)
	}
	if err := second.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(second.Log) != len(whole.Log) {
		t.Fatalf("resumed log has %d records, uninterrupted %d", len(second.Log), len(whole.Log))
	}
	for i := range whole.Log {
		a, b := whole.Log[i], second.Log[i]
		if a.Loss != b.Loss || a.GradNorm != b.GradNorm || !(a.EvalLoss == b.EvalLoss || math.IsNaN(a.EvalLoss) && math.IsNaN(b.EvalLoss)) {
			t.Errorf("step %d: resumed %+v, uninterrupted %+v", a.Step, b, a)
		}
	}
	n := 0
	for v := range whole.Store.RootScope().IterVariables() {
		n++
		w := second.Store.GetVariable(v.Path())
		if w == nil {
			t.Errorf("variable %s of the uninterrupted run is missing from the resumed one", v.Path())
			continue
		}
		if !reflect.DeepEqual(v.MustValue().Value(), w.MustValue().Value()) {
			t.Errorf("variable %s differs between the resumed and the uninterrupted run", v.Path())
		}
	}
	if m := whole.Store.GetVariable(OptimizerScope + "/" + momentName("v", ModelScope+"/layer1/nu_log")); m == nil {
		t.Errorf("no second moment of layer 1's ν^log among the %d variables", n)
	}
}

// TestAdamWTrainsTheRecurrentParametersSlower: the stack passes its blocks' RecurrentLR on
// (rnn.LRScaled), so that after the first AdamW update (|step| ≈ η s for every parameter with
// a nonzero gradient, since m̂/√v̂ = ±1 at t = 1) ν^log moves by half the rate and, undecayed,
// by nothing more.
func TestAdamWTrainsTheRecurrentParametersSlower(t *testing.T) {
	task := tasks.Copy{T: 5, Symbols: 4, Recall: 3}
	cell := deepLRU()
	if got := cell.(rnn.LRScaled).LRScales(); len(got) != 6 || got["layer1/theta_log"] != 0.5 {
		t.Fatalf("stack's LRScales = %v, want ν, θ, γ of both layers at 0.5", got)
	}
	const eta = 1e-2
	tr, err := New(backend.MustNew(), cell, task, Config{Steps: 1, Batch: 4, Seed: 3, Scan: true, AdamW: AdamW{LR: eta, WeightDecay: 0.05}})
	if err != nil {
		t.Fatal(err)
	}
	before := map[string][]float32{}
	for _, name := range []string{"layer0/nu_log", "layer0/C_re"} {
		before[name] = tensors.MustCopyFlatData[float32](tr.Store.GetVariable(ModelScope + "/" + name).MustValue())
	}
	if err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// At t = 1, m̂/(√v̂ + ε) = g/(|g| + ε) = ±1 to 1e-6 here: θ' − θ = −η s (±1 + λθ), with λ = 0
	// for the scaled ν^log.
	for name, c := range map[string]struct{ scale, decay float64 }{"layer0/nu_log": {0.5, 0}, "layer0/C_re": {1, 0.05}} {
		after := tensors.MustCopyFlatData[float32](tr.Store.GetVariable(ModelScope + "/" + name).MustValue())
		for i, b := range before[name] {
			moved := float64(after[i]) - float64(b) + eta*c.scale*c.decay*float64(b)
			if math.Abs(math.Abs(moved)-eta*c.scale) > 1e-4*eta {
				t.Errorf("%s[%d]: θ' − θ + ηsλθ = %g, want ±η·%g = ±%g", name, i, moved, c.scale, eta*c.scale)
			}
		}
	}
}
