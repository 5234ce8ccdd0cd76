package train

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// AdamW is Adam (Kingma & Ba 2015, Algorithm 1) with decoupled weight decay (Loshchilov &
// Hutter 2019, Algorithm 2), the optimiser the LRU is trained with (Orvieto et al. 2023; the
// rates the presets use: docs/SETTINGS.md, orvieto/*). Per parameter θ with gradient g, at the t-th update (t from 1):
//
//	m ← β₁ m + (1 − β₁) g,     v ← β₂ v + (1 − β₂) g²          (m, v start at 0)
//	θ ← θ − η s [ (m / (1 − β₁ᵗ)) / (√(v / (1 − β₂ᵗ)) + ε) + λ θ ]
//
// where s is the variable's rate scale and λ its weight decay: s = 1 and λ = WeightDecay for
// most variables; for the ones a cell trains at a rate of its own (rnn.LRScaled: the deep
// LRU's ν^log, θ^log and γ^log, lru.Block.RecurrentLR), s is that scale and λ = 0, as the
// LRU paper trains its recurrent parameters: at a smaller rate and without weight decay. This
// is optax.adamw's step (the authors' JAX; ε added outside the root) and GoMLX's
// (ml/train/optimizer/adam.go, applyAdamGraph), whose decay is also scaled by η.
//
// # Why not GoMLX's optimizer.Adam().WeightDecay(λ)
//
// Its UpdateGraphWithGradients applies gradients computed elsewhere, as the chunked Runner
// computes them, but it takes one rate and one decay for all the trainable variables under the
// scope it is given (adam.go, v0.28.15): the rate is a variable under that scope
// (optimizer.LearningRateVar: "<scope>/optimizers/learning_rate"), and WeightDecay applies to
// every variable it updates (its TODO). ν, θ and γ live beside B, C and the GLU under each
// block's scope (/model/layer0/…), so a second Adam for them would need a scope of its own
// that still contains them: the only candidates, "/" and "/model", hold every variable, and
// the two instances would each select their variables by which ones the graph had read so far
// (Variable.InUseByGraph), with one learning-rate variable landing inside the model's scope.
// Its moments are also created when the update graph is first built, after Resume has
// restored (and refused) the checkpoint's variables. The project's own update, beside RMSProp
// and with the same per-variable scales, skips and state scope, is the smaller thing: about
// twenty graph operations per variable.
//
// The zero value of each field means the default given; LR = 0 means AdamW is off.
type AdamW struct {
	LR    float64 // η; 0: AdamW is off and Config.Optimizer (RMSProp) trains
	Beta1 float64 `json:",omitempty"` // β₁; default 0.9 (Kingma & Ba; optax; GoMLX)
	Beta2 float64 `json:",omitempty"` // β₂; default 0.999
	Eps   float64 `json:",omitempty"` // ε; default 1e-8 (optax.adamw's, which the LRU's authors use)
	// WeightDecay is λ, applied to the variables trained at the base rate (see above); 0: none
	// (plain Adam).
	WeightDecay float64 `json:",omitempty"`
}

// On reports whether AdamW replaces RMSProp (LR > 0).
func (o AdamW) On() bool { return o.LR != 0 }

// withDefaults returns o with zero fields replaced by their defaults, or an error naming a bad field.
func (o AdamW) withDefaults() (AdamW, error) {
	if !o.On() {
		return o, nil
	}
	if o.Beta1 == 0 {
		o.Beta1 = 0.9
	}
	if o.Beta2 == 0 {
		o.Beta2 = 0.999
	}
	if o.Eps == 0 {
		o.Eps = 1e-8
	}
	for _, f := range []struct {
		name   string
		v      float64
		lo, hi float64
	}{
		{"LR", o.LR, 0, math.Inf(1)}, {"Beta1", o.Beta1, 0, 1}, {"Beta2", o.Beta2, 0, 1},
		{"Eps", o.Eps, 0, math.Inf(1)}, {"WeightDecay", o.WeightDecay, 0, math.Inf(1)},
	} {
		if !(f.v >= f.lo && f.v < f.hi) || (f.name == "LR" && f.v <= 0) {
			return o, fmt.Errorf("train: AdamW.%s = %g, want a number in [%g, %g)", f.name, f.v, f.lo, f.hi)
		}
	}
	return o, nil
}

// optimizer is the update the Trainer applies after each step's gradients: RMSProp (updater)
// or AdamW.
type optimizer interface {
	// apply updates the variables with grads (in Runner.Vars order) and returns the global
	// gradient norm before clipping.
	apply(grads []*tensors.Tensor) (float64, error)
}

// newOptimizer returns cfg's optimiser (defaults applied) for vars: AdamW when cfg.AdamW is
// on, else RMSProp (newUpdater). skip and scale are newUpdater's.
func newOptimizer(backend compute.Backend, store *model.Store, vars []*model.Variable, skip []bool, scale []float64, cfg Config) (optimizer, error) {
	if !cfg.AdamW.On() {
		return newUpdater(backend, store, vars, skip, scale, cfg.Optimizer)
	}
	return newAdamW(backend, store, vars, skip, scale, cfg.AdamW)
}

// checkAdamW returns an error when c turns AdamW on and also sets a field of c.Optimizer that
// only RMSProp's step reads (AdamW would silently leave it unused).
func (c Config) checkAdamW() error {
	if !c.AdamW.On() {
		return nil
	}
	if c.HessianFree.On() {
		return fmt.Errorf("train: Config.AdamW and Config.HessianFree are both on: want one optimiser")
	}
	o := c.Optimizer
	for _, f := range []struct {
		name string
		v    float64
	}{{"ClipValue", o.ClipValue}, {"ClipNorm", o.ClipNorm}, {"Nesterov", o.Nesterov}} {
		if f.v != 0 {
			return fmt.Errorf("train: Config.Optimizer.%s = %g with Config.AdamW on: AdamW replaces RMSProp's step and does not read it", f.name, f.v)
		}
	}
	return nil
}

// adamW applies AdamW to a list of variables, given their gradients; its state (m, v and the
// update count t) lives in variables under OptimizerScope, so that checkpoints hold it.
type adamW struct {
	store *model.Store
	opt   AdamW
	vars  []*model.Variable
	m, v  []*model.Variable // nil where skip
	step  *model.Variable   // t, the number of updates applied (int64)
	skip  []bool
	scale []float64 // each variable's rate as a multiple of LR; ≠ 1 also means no decay
	exec  *model.Exec
}

// adamStepName is the variable of AdamW's update count t, under OptimizerScope.
const adamStepName = "adam_step"

// momentName is the variable name of AdamW's first (which = "m") or second ("v") moment of
// the parameter at path.
func momentName(which, path string) string {
	return "adam_" + which + strings.ReplaceAll(path, "/", "_")
}

// newAdamW creates (or reuses, after a restore) AdamW's state for vars in store. The
// variables marked in skip keep no state and are not updated (they are refused: a cell that
// moves its own matrices, rnn.Constrained, takes RMSProp's rate); scale, when not nil,
// multiplies each variable's rate, and a variable with a scale other than 1 is not decayed.
func newAdamW(backend compute.Backend, store *model.Store, vars []*model.Variable, skip []bool, scale []float64, opt AdamW) (*adamW, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if !opt.On() {
		return nil, fmt.Errorf("train: AdamW.LR = 0: AdamW is off")
	}
	for i, s := range skip {
		if s {
			return nil, fmt.Errorf("train: AdamW with a cell that moves %s by a rule of its own (rnn.Constrained) is not offered: train it with RMSProp", vars[i].Path())
		}
	}
	if scale == nil {
		scale = make([]float64, len(vars))
		for i := range scale {
			scale[i] = 1
		}
	}
	a := &adamW{store: store, opt: opt, vars: vars, skip: skip, scale: scale}
	scope := store.Scope(OptimizerScope)
	state := func(name string, v *model.Variable) (*model.Variable, error) {
		if s := scope.GetVariable(name); s != nil {
			return s, nil
		}
		s, err := scope.CreateVariable(name, tensors.FromShape(v.Shape()))
		if err == nil {
			s.Trainable = false
		}
		return s, err
	}
	for _, v := range vars {
		m, err := state(momentName("m", v.Path()), v)
		if err != nil {
			return nil, err
		}
		s, err := state(momentName("v", v.Path()), v)
		if err != nil {
			return nil, err
		}
		a.m, a.v = append(a.m, m), append(a.v, s)
	}
	if a.step = scope.GetVariable(adamStepName); a.step == nil {
		if a.step, err = scope.CreateVariable(adamStepName, tensors.FromValue(int64(0))); err != nil {
			return nil, err
		}
		a.step.Trainable = false
	}
	a.exec, err = model.NewExec(backend, store, a.graph)
	return a, err
}

// graph: in = gradients (in a.vars order) → [‖g‖]; updates the variables, m, v and t.
func (a *adamW) graph(_ *model.Scope, g *Graph, grads []*Node) []*Node {
	rnn.LiveVariables(a.store, g)
	o := a.opt
	t := AddScalar(a.step.NodeValue(g), 1)
	a.step.SetNodeValue(t)
	for i, gr := range grads {
		dt := gr.DType()
		tf := ConvertDType(t, dt)
		debias1 := OneMinus(Pow(Scalar(g, dt, o.Beta1), tf)) // 1 − β₁ᵗ
		debias2 := OneMinus(Pow(Scalar(g, dt, o.Beta2), tf)) // 1 − β₂ᵗ
		m := Add(MulScalar(a.m[i].NodeValue(g), o.Beta1), MulScalar(gr, 1-o.Beta1))
		v := Add(MulScalar(a.v[i].NodeValue(g), o.Beta2), MulScalar(Square(gr), 1-o.Beta2))
		a.m[i].SetNodeValue(m)
		a.v[i].SetNodeValue(v)
		theta := a.vars[i].NodeValue(g)
		step := Div(Div(m, debias1), AddScalar(Sqrt(Div(v, debias2)), o.Eps))
		if o.WeightDecay > 0 && a.scale[i] == 1 {
			step = Add(step, MulScalar(theta, o.WeightDecay))
		}
		a.vars[i].SetNodeValue(Sub(theta, MulScalar(step, o.LR*a.scale[i])))
	}
	return []*Node{globalNorm(grads)}
}

// apply updates the variables with grads and returns the gradient norm.
func (a *adamW) apply(grads []*tensors.Tensor) (float64, error) {
	args := make([]any, len(grads))
	for i, g := range grads {
		args[i] = g
	}
	out, err := a.exec.Call(args...)
	if err != nil {
		return 0, err
	}
	return scalar(out[0]), nil
}
