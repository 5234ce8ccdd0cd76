// Package hessianfree is Martens & Sutskever 2011's Hessian-free optimisation of recurrent
// networks, as Galvan §2.2.2 describes it: each step minimises the damped quadratic model
//
//	M̃(δ) = ℒ(θ) + gᵀδ + ½ δᵀ G δ + λ (½ ‖δ‖² + μ S(δ))      (Galvan eqs. 2.19, 2.24, 2.27)
//
// by truncated conjugate gradient (CG) on one minibatch, started from 0.95 times the previous
// step, and adapts λ by the Levenberg–Marquardt rule on the reduction ratio (eqs. 2.25–2.26).
// G = J_Fᵀ H_L J_F is the Gauss–Newton matrix of the loss ℒ = L(F(θ)) (F the outputs of every
// step, H_L = ∂²L/∂F²; eq. 2.23) and S Martens & Sutskever's structural damping, the
// Gauss–Newton matrix of the squared change of the hidden states (Curvature). Optimizer keeps
// λ and the previous step in variables, so that a checkpoint holds them (package train:
// Config.HessianFree).
//
// # Gauss–Newton products by reverse over reverse
//
// GoMLX differentiates in reverse mode only (graph.Gradient, a scalar's gradient), but its
// gradients are graphs of ordinary ops, which Gradient differentiates again. Curvature gets
// G v from one whole-sequence graph in three differentiations, with no finite differences:
//
//	J_θᵀ u = ∇_θ ⟨F, u⟩                 (u a cotangent fed as zeros: the result is linear in u)
//	J v    = ∇_u ⟨J_θᵀ u, v⟩             (reverse over reverse: the R-operator, forward mode)
//	H_L J v = ∇_F ⟨∇_F L, J v⟩           (reverse over reverse on the loss alone)
//	G v    = ∇_θ ⟨F, H_L J v⟩            (J v and H_L J v held constant)
//
// and S v the same way from the states h (with u_h, ⟨h, J_h v⟩). TestCurvatureExplicit checks
// (G + μ S) e_j, every column, against the matrix J_Fᵀ H_L J_F + μ J_hᵀ J_h / norm formed from
// finite-difference Jacobians and H_L in closed form, in float64 to 10⁻⁶ relative, for the tanh
// RNN (squared error, and softmax cross-entropy at one step and at every step), the LSTM, the
// GRU and the uRNN (real-arithmetic FFT, modReLU): the VJPs of every op these graphs use
// (matrix products, tanh, logistic, slices and concatenations, reductions, broadcasts,
// log-softmax, one-hot) are themselves differentiable. (A difference of gradients,
// (∇ℒ(θ + εv) − ∇ℒ(θ))/ε, would be the Hessian H v, which is indefinite, not G v; it is not
// used.)
//
// The products unroll the whole sequence in one graph (train refuses a Chunk shorter than
// it): carrying J v forward across chunks, as seq.Walker carries the adjoint backward, is not
// done.
//
// References:
//
//	[1] Martens, Sutskever, "Learning Recurrent Neural Networks with Hessian-Free
//	    Optimization", ICML 2011 (structural damping).
//	[2] Martens, "Deep learning via Hessian-free optimization", ICML 2010 (CG's truncation
//	    §4.4 and warm start §4.5).
//	[3] Galvan, "On Recurrent Neural Networks", thesis, 2015, §2.2.2.
//
// Full entries: docs/REFERENCES.md ([Martens2011], [Martens2010], [Galvan2015]).
package hessianfree
