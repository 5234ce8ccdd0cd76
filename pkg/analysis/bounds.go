package analysis

import (
	"fmt"
	"math"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// Bounds holds the quantities of the two upper bounds on long-term gradients of Galvan
// (2015) §1.6 (docs/REFERENCES.md), computed from a recurrent matrix W (r×r) and the largest
// derivative of the transition nonlinearity. Galvan writes the recurrence on
// pre-activations, a^t = W^rec σ(a^{t−1}) + …, so that (eq. 1.63)
//
//	∂a^t/∂a^k = Π_i diag(σ'(a^i)) · W^rec ;
//
// for the state recurrence h_t = σ(W h_{t−1} + V x_t + b) of this project (rnn.Simple;
// row-vector code h·W is W^rec = Wᵀ, which has the same entries and singular values) the
// one-step Jacobian is ∂h_t/∂h_{t−1} = diag(σ'(z_t)) W^rec, as in Arjovsky et al. §1.
// Symbols:
//
//	R            r, the number of hidden units (W is r×r)                  (eq. 1.64)
//	WMax         ‖W‖max = max_ij |w_ij|                                    (eq. 1.64)
//	SigmaPrime   σ'max = max_i ‖diag(σ'(a^i))‖max, the largest derivative of σ
//	             over the steps considered                                 (eq. 1.64)
//	Tau          τ = r · σ'max · ‖W‖max, Hochreiter's factor               (eq. 1.67–1.68)
//	MuMax        μmax, the largest singular value of W (W = S·D·Vᵀ)        (eq. 1.69)
//	SV           σ'max · μmax, the singular-value factor                    (eq. 1.72)
//
// Galvan bounds the Jacobian over n = t − k steps (his exponent t−k−1 counts from his
// pre-activation index; here n is the number of one-step Jacobians between h_k and h_t):
//
//	‖∂h_t/∂h_k‖max ≤ r^{n−1} (σ'max ‖W‖max)^n = τ^n / r    (eqs. 1.64–1.68, Hochreiter)
//	‖(∂h_t/∂h_k) e_i‖₂ ≤ ‖∂h_t/∂h_k‖₂ ≤ (σ'max μmax)^n     (eqs. 1.70–1.72)
//
// and since ‖J‖₂ ≤ ‖J‖_F ≤ r ‖J‖max, both give a bound on the 2-norm of the Jacobian,
// τ^n and (σ'max μmax)^n; the second is never larger (μmax ≤ r‖W‖max). For the gradient
// with respect to the states (Arjovsky et al. §1, eq. "bound") this gives, with the loss
// at the last step T only,
//
//	‖∂C/∂h_t‖ ≤ ‖∂C/∂h_T‖ · factor^{T−t},
//
// and with a loss at every step (∂C/∂h_t = ∂C_t/∂h_t + (∂h_{t+1}/∂h_t)ᵀ ∂C/∂h_{t+1}) the
// recursion B_T = ‖∂C_T/∂h_T‖, B_t = ‖∂C_t/∂h_t‖ + factor · B_{t+1} (Curve).
type Bounds struct {
	R                int
	WMax, SigmaPrime float64
	Tau, MuMax, SV   float64
}

// NewBounds computes Bounds for the r×r row-major matrix w and σ'max = sigmaPrime (1 for
// tanh and ReLU as upper bounds over all inputs, 0.25 for the sigmoid; for the linear
// transition of an LT-RNN, ∂h_t/∂h_{t−1} = V and σ'max = 1; TanhSigmaPrime gives the
// value actually reached on a trajectory). It returns an error if len(w) ≠ r² or
// sigmaPrime is negative or not finite.
func NewBounds(w []float64, r int, sigmaPrime float64) (Bounds, error) {
	if r < 1 || len(w) != r*r {
		return Bounds{}, fmt.Errorf("analysis: NewBounds: %d values for a %d×%d matrix, want %d", len(w), r, r, r*r)
	}
	if !(sigmaPrime >= 0) || math.IsInf(sigmaPrime, 0) {
		return Bounds{}, fmt.Errorf("analysis: NewBounds: σ'max = %g, want a finite value >= 0", sigmaPrime)
	}
	b := Bounds{R: r, SigmaPrime: sigmaPrime}
	for _, v := range w {
		b.WMax = max(b.WMax, math.Abs(v))
	}
	sv, err := SingularValues(w, r, r)
	if err != nil {
		return Bounds{}, err
	}
	b.MuMax = sv[0]
	b.Tau = float64(r) * sigmaPrime * b.WMax
	b.SV = sigmaPrime * b.MuMax
	return b, nil
}

// Curve returns the bound on ‖∂C/∂h_t‖, t = 0..L, for a one-step factor (b.Tau for
// Hochreiter's bound, b.SV for the singular-value bound), given the direct terms
// direct[t] = ‖∂C_t/∂h_t‖ (GradNorms.Direct, length L+1):
//
//	B_L = direct[L],   B_t = direct[t] + factor · B_{t+1}.
//
// With a loss at the last step only (direct[t] = 0 for t < L) this is
// B_t = ‖∂C/∂h_L‖ · factor^{L−t}, Galvan eqs. 1.68 and 1.72 times ‖∂C/∂h_T‖ as in
// Arjovsky et al. §1. Values that overflow are +Inf.
func Curve(factor float64, direct []float64) []float64 {
	out := make([]float64, len(direct))
	next := 0.0
	for t := len(direct) - 1; t >= 0; t-- {
		next = direct[t] + factor*next
		out[t] = next
	}
	return out
}

// TanhSigmaPrime returns σ'max for a tanh RNN from its states: σ'(z_t) = 1 − tanh²(z_t)
// = 1 − h_t², so the largest derivative reached over the trajectory (all examples, steps
// and units; the states of tr, which need RunOptions.States) is max(1 − h²) over the
// smallest |h|. It bounds every diag(σ'(z_t)) of the trajectory, as Galvan's σ'max.
// It panics if tr has no states.
func TanhSigmaPrime(tr *Trajectory) float64 { return sigmaPrimeMax(tr, rnn.TanhPrime) }

// sigmaPrimeMax returns the largest sigmaPrime(h) over the states of tr; it panics if tr
// has none.
func sigmaPrimeMax(tr *Trajectory, sigmaPrime func(h float64) float64) float64 {
	if tr.States == nil {
		panic("analysis: σ'max: the trajectory has no states (RunOptions.States)")
	}
	m := 0.0
	for _, h := range tr.States {
		m = max(m, sigmaPrime(h))
	}
	return m
}

// BoundsFor returns the Bounds of a cell (variables under scope) whose one-step Jacobian
// is diag(σ') times a weight matrix (rnn.Transition), with the quantities read from its
// actual weights: W^rec is the cell's transition matrix, and σ'max the largest σ' reached
// on its trajectory on b where the cell gives σ' as a function of the state (tanh: see
// TanhSigmaPrime), else 1:
//
//	*rnn.Simple  W^rec = its "W"; σ'max from the trajectory for tanh, 1 for ReLU (σ' ∈
//	             {0, 1}, Galvan §1.6 "The ReLU case")
//	*ltrnn.Cell  W^rec = its "V"; σ'max = 1: the transition h ↦ V h + σ(U x + b) is
//	             linear in h (σ acts on the input), and activation clipping only shrinks
//	             it (its Jacobian has norm l/‖h‖ < 1 where it acts)
//
// Other cells (LSTM, GRU, uRNN) have no such form and return an error naming their type.
func BoundsFor(backend compute.Backend, scope *model.Scope, cell rnn.Cell, b *tasks.Batch) (Bounds, error) {
	tc, ok := cell.(rnn.Transition)
	if !ok {
		return Bounds{}, fmt.Errorf("analysis: BoundsFor: cell %T has no one-step Jacobian diag(σ')·W (it does not implement rnn.Transition)", cell)
	}
	name, sigmaPrimeOf := tc.TransitionMatrix()
	sigmaPrime := 1.0
	if sigmaPrimeOf != nil {
		tr, err := Run(backend, scope, cell, b, RunOptions{States: true})
		if err != nil {
			return Bounds{}, err
		}
		sigmaPrime = sigmaPrimeMax(tr, sigmaPrimeOf)
	}
	w, dims, err := VariableMatrix(scope, name)
	if err != nil {
		return Bounds{}, err
	}
	return NewBounds(w, dims[0], sigmaPrime)
}
