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

// OptimizerScope is the scope of the optimizer's state (RMSProp accumulators).
const OptimizerScope = "/optimizer"

// RMSProp is the optimiser of both papers (Arjovsky et al. §4: learning rate 1e-3, decay
// 0.9, for all models; Henaff et al. §4: decay 0.9, learning rates 1e-4 for LT-RNNs and
// 1e-3 for LSTMs). Per parameter θ with gradient g:
//
//	g ← clip(g, −ClipValue, ClipValue)          (element-wise, when ClipValue > 0)
//	g ← g · min(1, ClipNorm / ‖g‖)             (global norm over all parameters, when ClipNorm > 0)
//	a ← ρ a + (1 − ρ) g²
//	θ ← θ − η g / √(a + ε)
//
// (η times the variable's scale for the cells that train some variables at their own rate,
// rnn.LRScaled.)
//
// The uRNN authors' code starts a at 1e-3, uses no ε, and clips the LSTM's and RNN's
// gradients element-wise at 1 (not the uRNN's). The zero value of each field means the
// default given.
//
// With Nesterov = μ > 0 the step is instead stochastic gradient descent with Nesterov's
// accelerated gradient, in the form Sutskever et al. 2013 (§2, eqs. 3–4) train RNNs with
// (Galvan §2.2.4): v ← μ v − η g(θ + μ v), θ ← θ + v. The gradient is taken at the
// parameters the trainer holds, which are the look-ahead point Θ = θ + μ v (Bengio et al.
// 2013's rewriting), so that with g = g(Θ):
//
//	v' = μ v − η g,   Θ ← Θ + μ v' − η g
//
// (the clipping above applies first; Decay, AccInit and Eps are unused).
type RMSProp struct {
	LR        float64 // η; default 1e-3
	Decay     float64 // ρ; default 0.9
	AccInit   float64 // initial a; default 1e-3 (the authors' code)
	Eps       float64 // ε; default 0 (the authors' code has none)
	ClipValue float64 // element-wise clipping threshold; 0: none
	ClipNorm  float64 // global-norm clipping threshold; 0: none
	// Nesterov is the momentum μ of Nesterov's accelerated gradient, which then replaces
	// RMSProp's step (see above); 0: RMSProp.
	Nesterov float64 `json:",omitempty"`
}

// withDefaults returns o with zero fields replaced by their defaults, or an error naming a bad field.
func (o RMSProp) withDefaults() (RMSProp, error) {
	if o.LR == 0 {
		o.LR = 1e-3
	}
	if o.Decay == 0 {
		o.Decay = 0.9
	}
	if o.AccInit == 0 {
		o.AccInit = 1e-3
	}
	for _, f := range []struct {
		name   string
		v      float64
		lo, hi float64
	}{
		{"LR", o.LR, 0, math.Inf(1)}, {"Decay", o.Decay, 0, 1}, {"AccInit", o.AccInit, 0, math.Inf(1)},
		{"Eps", o.Eps, 0, math.Inf(1)}, {"ClipValue", o.ClipValue, 0, math.Inf(1)}, {"ClipNorm", o.ClipNorm, 0, math.Inf(1)},
		{"Nesterov", o.Nesterov, 0, 1},
	} {
		if !(f.v >= f.lo && f.v < f.hi) || (f.name == "LR" && f.v <= 0) {
			return o, fmt.Errorf("train: RMSProp.%s = %g, want a number in [%g, %g)", f.name, f.v, f.lo, f.hi)
		}
	}
	if o.AccInit == 0 && o.Eps == 0 {
		return o, fmt.Errorf("train: RMSProp with AccInit = 0 and Eps = 0 divides by zero")
	}
	return o, nil
}

// updater applies RMSProp to a list of variables, given their gradients.
type updater struct {
	store *model.Store
	opt   RMSProp
	vars  []*model.Variable
	accs  []*model.Variable
	skip  []bool    // variables moved by an rnn.Constrained cell's Update instead (their gradients count in the norm)
	scale []float64 // each variable's learning rate as a multiple of LR (rnn.LRScaled; 1 for most)
	exec  *model.Exec
}

// accName is the accumulator's variable name for the parameter at path: RMSProp's a, or the
// velocity v of Nesterov's momentum.
func accName(path string, nesterov bool) string {
	if nesterov {
		return "vel" + strings.ReplaceAll(path, "/", "_")
	}
	return "acc" + strings.ReplaceAll(path, "/", "_")
}

// newUpdater creates (or reuses, after a restore) the accumulators of vars in store.
// The variables marked in skip keep no accumulator and are not updated; scale, when not nil,
// multiplies each variable's learning rate.
func newUpdater(backend compute.Backend, store *model.Store, vars []*model.Variable, skip []bool, scale []float64, opt RMSProp) (*updater, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if scale == nil {
		scale = make([]float64, len(vars))
		for i := range scale {
			scale[i] = 1
		}
	}
	u := &updater{store: store, opt: opt, vars: vars, skip: skip, scale: scale}
	scope := store.Scope(OptimizerScope)
	for i, v := range vars {
		if skip[i] {
			u.accs = append(u.accs, nil)
			continue
		}
		nesterov := opt.Nesterov > 0
		acc := scope.GetVariable(accName(v.Path(), nesterov))
		if acc == nil {
			t := tensors.FromShape(v.Shape())
			if !nesterov {
				fillConst(t, opt.AccInit)
			}
			if acc, err = scope.CreateVariable(accName(v.Path(), nesterov), t); err != nil {
				return nil, err
			}
			acc.Trainable = false
		}
		u.accs = append(u.accs, acc)
	}
	u.exec, err = model.NewExec(backend, store, u.graph)
	return u, err
}

func fillConst(t *tensors.Tensor, v float64) {
	t.MustMutableFlatData(func(flat any) {
		switch f := flat.(type) {
		case []float32:
			for i := range f {
				f[i] = float32(v)
			}
		case []float64:
			for i := range f {
				f[i] = v
			}
		}
	})
}

// globalNorm returns √(Σ_i ‖g_i‖²) over all gradients.
func globalNorm(grads []*Node) *Node {
	sum := ReduceAllSum(Mul(grads[0], grads[0]))
	for _, gr := range grads[1:] {
		sum = Add(sum, ReduceAllSum(Mul(gr, gr)))
	}
	return Sqrt(sum)
}

// graph: in = gradients (in u.vars order) → [‖g‖ before clipping]; updates the variables.
func (u *updater) graph(_ *model.Scope, g *Graph, grads []*Node) []*Node {
	rnn.LiveVariables(u.store, g)
	o := u.opt
	norm := globalNorm(grads)
	if o.ClipValue > 0 {
		for i := range grads {
			grads[i] = ClipScalar(grads[i], -o.ClipValue, o.ClipValue)
		}
	}
	if o.ClipNorm > 0 {
		n := globalNorm(grads) // after element-wise clipping, if any
		scale := Min(ScalarOne(g, n.DType()), Div(Scalar(g, n.DType(), o.ClipNorm), MaxScalar(n, 1e-30)))
		for i := range grads {
			grads[i] = Mul(grads[i], scale)
		}
	}
	for i, gr := range grads {
		if u.skip[i] {
			continue
		}
		lr := o.LR * u.scale[i]
		if o.Nesterov > 0 {
			step := MulScalar(gr, lr)
			v := Sub(MulScalar(u.accs[i].NodeValue(g), o.Nesterov), step)
			u.accs[i].SetNodeValue(v)
			u.vars[i].SetNodeValue(Sub(Add(u.vars[i].NodeValue(g), MulScalar(v, o.Nesterov)), step))
			continue
		}
		acc := Add(MulScalar(u.accs[i].NodeValue(g), o.Decay), MulScalar(Mul(gr, gr), 1-o.Decay))
		u.accs[i].SetNodeValue(acc)
		step := Div(MulScalar(gr, lr), Sqrt(AddScalar(acc, o.Eps)))
		u.vars[i].SetNodeValue(Sub(u.vars[i].NodeValue(g), step))
	}
	return []*Node{norm}
}

// apply updates the variables with grads and returns the gradient norm before clipping.
func (u *updater) apply(grads []*tensors.Tensor) (float64, error) {
	args := make([]any, len(grads))
	for i, g := range grads {
		args[i] = g
	}
	out, err := u.exec.Call(args...)
	if err != nil {
		return 0, err
	}
	return scalar(out[0]), nil
}
