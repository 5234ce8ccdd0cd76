package hessianfree

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/floats"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// Settings are Hessian-free optimisation's settings (train.Config.HessianFree). The zero
// value of each field but CGIters means the default given.
type Settings struct {
	// CGIters is the most conjugate-gradient iterations per step (Martens 2010 §4.4 also stops
	// CG earlier, when the quadratic stops falling: CG); 0: Hessian-free is off.
	CGIters int `json:",omitempty"`
	// Damping is λ at the first step (then adapted by the Levenberg–Marquardt rule); default 1.
	Damping float64 `json:",omitempty"`
	// StructuralDamping is μ, the weight of the change of the hidden states in the damping
	// term λ (½‖δ‖² + μ S(δ)) (Martens & Sutskever 2011; Galvan eq. 2.27); 0: Tikhonov damping alone.
	StructuralDamping float64 `json:",omitempty"`
	// WarmStart is ζ: CG starts from ζ times the previous step (Martens 2010 §4.5); default 0.95.
	WarmStart float64 `json:",omitempty"`
}

// On reports whether Hessian-free optimisation replaces the first-order optimiser.
func (s Settings) On() bool { return s.CGIters != 0 }

// WithDefaults returns s with its zero fields replaced by their defaults, or an error naming
// the first bad field and its accepted range.
func (s Settings) WithDefaults() (Settings, error) {
	if !s.On() {
		return s, nil
	}
	if s.Damping == 0 {
		s.Damping = 1
	}
	if s.WarmStart == 0 {
		s.WarmStart = 0.95
	}
	switch {
	case s.CGIters < 0:
		return s, fmt.Errorf("hessianfree: Settings.CGIters = %d, want >= 1 (0: off)", s.CGIters)
	case !(s.Damping > 0) || math.IsInf(s.Damping, 1):
		return s, fmt.Errorf("hessianfree: Settings.Damping = %g, want a number > 0", s.Damping)
	case !(s.StructuralDamping >= 0) || math.IsInf(s.StructuralDamping, 1):
		return s, fmt.Errorf("hessianfree: Settings.StructuralDamping = %g, want a number >= 0", s.StructuralDamping)
	case !(s.WarmStart > 0 && s.WarmStart <= 1):
		return s, fmt.Errorf("hessianfree: Settings.WarmStart = %g, want a number in (0, 1]", s.WarmStart)
	}
	return s, nil
}

// The Levenberg–Marquardt rule (Galvan eq. 2.26): λ ← λ·drop when ρ > 3/4, λ ← λ·boost when
// ρ < 1/4.
const (
	drop, boost     = 2.0 / 3, 3.0 / 2
	rhoHigh, rhoLow = 0.75, 0.25
	lambdaName      = "hf_lambda"
	deltaPrefix     = "hf_delta"
)

// Optimizer is one run's Hessian-free optimiser: the curvature products of its cell and its
// state, λ and the previous step δ (for CG's warm start), kept in variables of the store so
// that a checkpoint holds them and a resumed run continues exactly.
type Optimizer struct {
	Settings  Settings
	Curvature *Curvature
	lambda    *model.Variable   // λ, a float64 scalar
	prev      []*model.Variable // δ of the last step, one per variable of Curvature.Vars
}

// Stats describe one step.
type Stats struct {
	Lambda   float64 // λ the step was damped with (Step then adapts it)
	Rho      float64 // reduction ratio ρ (Galvan eq. 2.25)
	Iters    int     // CG iterations
	Loss     float64 // loss on the batch after the step (before it, if not Accepted)
	Accepted bool    // the step lowered the loss and was taken
}

// New returns the optimiser of cell, whose trainable variables vars (in the order of the
// vectors) live under scope; its state is created under state, or reused when it exists
// there (a restored checkpoint).
func New(backend compute.Backend, scope *model.Scope, cell rnn.Cell, vars []*model.Variable, state *model.Scope, s Settings) (*Optimizer, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return nil, err
	}
	if !s.On() {
		return nil, fmt.Errorf("hessianfree: Settings.CGIters = 0: Hessian-free is off")
	}
	o := &Optimizer{Settings: s}
	if o.Curvature, err = NewCurvature(backend, scope, cell, vars); err != nil {
		return nil, err
	}
	get := func(name string, init *tensors.Tensor) (*model.Variable, error) {
		if v := state.GetVariable(name); v != nil {
			return v, nil
		}
		v, err := state.CreateVariable(name, init)
		if err == nil {
			v.Trainable = false
		}
		return v, err
	}
	if o.lambda, err = get(lambdaName, tensors.FromValue(s.Damping)); err != nil {
		return nil, err
	}
	for _, v := range vars {
		p, err := get(deltaPrefix+strings.ReplaceAll(v.Path(), "/", "_"), tensors.FromShape(v.Shape()))
		if err != nil {
			return nil, err
		}
		o.prev = append(o.prev, p)
	}
	return o, nil
}

// Lambda returns the current λ.
func (o *Optimizer) Lambda() float64 { return o.lambda.MustValue().Value().(float64) }

// Step is one Hessian-free step on batch b (Galvan §2.2.2), from the loss f(θ) = loss0 and
// its gradient grad on b; loss returns f on b at the variables' current values. With the
// damped curvature A = G + λ I + λ μ S (Curvature; Martens & Sutskever 2011, with λ on the structural term as they write it):
//
//	δ  ≈ argmin ½ δᵀ A δ + gᵀ δ            (CG from ζ δ_prev, at most CGIters iterations)
//	ρ  = (f(θ + δ) − f(θ)) / (gᵀδ + ½ δᵀ G δ)   (eq. 2.25, the undamped quadratic)
//	λ ← ⅔ λ if ρ > ¾,  3⁄2 λ if ρ < ¼      (eq. 2.26)
//
// θ ← θ + δ when f(θ + δ) < f(θ); otherwise θ is left as it was (no line search: Martens 2010
// §4.6 backtracks over the CG iterates instead). δ is kept for the next warm start either way.
func (o *Optimizer) Step(b *tasks.Batch, loss0 float64, grad []float64, loss func() (float64, error)) (Stats, error) {
	vars := o.Curvature.Vars
	lambda := o.Lambda()
	st := Stats{Lambda: lambda, Loss: loss0}
	if err := o.Curvature.SetBatch(b); err != nil {
		return st, err
	}
	mu := lambda * o.Settings.StructuralDamping
	damped := func(v []float64) ([]float64, error) {
		av, err := o.Curvature.Times(v, mu)
		if err == nil {
			floats.AddScaled(av, lambda, v)
		}
		return av, err
	}
	x0 := Values(o.prev)
	floats.Scale(o.Settings.WarmStart, x0)
	minusG := append([]float64(nil), grad...)
	floats.Scale(-1, minusG)
	cg, err := CG(damped, minusG, x0, o.Settings.CGIters)
	if err != nil {
		return st, err
	}
	delta := cg.X
	st.Iters = cg.Iters
	gd, err := o.Curvature.Times(delta, 0)
	if err != nil {
		return st, err
	}
	predicted := floats.Dot(grad, delta) + 0.5*floats.Dot(delta, gd)
	theta := Values(vars)
	moved := append([]float64(nil), theta...)
	floats.Add(moved, delta)
	SetValues(vars, moved)
	f1, err := loss()
	if err != nil {
		SetValues(vars, theta)
		return st, err
	}
	st.Rho = math.Inf(-1) // no predicted reduction: λ grows
	if predicted < 0 {
		st.Rho = (f1 - loss0) / predicted
	}
	st.Accepted = f1 < loss0 // false for NaN
	if st.Accepted {
		st.Loss = f1
	} else {
		SetValues(vars, theta)
	}
	switch {
	case st.Rho > rhoHigh:
		lambda *= drop
	case !(st.Rho >= rhoLow): // NaN too
		lambda *= boost
	}
	o.lambda.MustSetValue(tensors.FromValue(lambda))
	SetValues(o.prev, delta)
	return st, nil
}
