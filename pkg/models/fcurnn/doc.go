// Package fcurnn is the full-capacity unitary RNN of Wisdom, Powers, Hershey, Le Roux and
// Atlas [1]: the uRNN of Arjovsky et al. [2] (package urnn) with its recurrent matrix W any
// N×N unitary matrix, moved along the unitary group by a multiplicative Cayley step outside
// the differentiable graph instead of being a product of parameterised factors:
//
//	h_t = σ(W h_{t−1} + V x_t)                 ([2] eqs. 1–2, §3.2)
//	o_t = U [Re h_t; Im h_t] + b_o             ([2] §3.3, eq. 10)
//	W ∈ U(N) = {W ∈ ℂ^{N×N} : W^H W = I}        ([1] §4)
//
// with a complex hidden state h ∈ ℂ^N stored as the real pair [Re h | Im h] ([batch, 2N]),
// the complex input matrix V (N × In) stored as the real In × 2N matrix [Re Vᵀ | Im Vᵀ],
// U real 2N × Out, and σ the uRNN's modReLU, per unit, σ(z) = ReLU(|z| + b) z/(|z| + ε)
// ([2] §3.2, eq. 9; ε = 1e-5 as in the uRNN authors' code), all exactly as package urnn.
//
// # The Cayley step ([1] §4)
//
// After each optimiser step the trainer calls Cell.Update (rnn.Constrained) with the
// gradient of the loss with respect to Re W and Im W, and stores what it returns:
//
//	G  = ∂L/∂Re W + i ∂L/∂Im W
//	A  = G W^H − W G^H                          (skew-Hermitian: A^H = −A)
//	W ← (I + (λ/2) A)^{-1} (I − (λ/2) A) W
//
// This is the curve of steepest descent on the Stiefel manifold of Tagare [3] (Lemma 4 and
// §4 there), which [1] §4 adopts. The Cayley transform of a skew-Hermitian matrix is
// unitary, so W stays unitary up to rounding, and to first order the loss changes by
// −(λ/2)‖A‖²_F ≤ 0 (TestDescent). λ is Cell.LRW, or the learning rate the trainer passes to
// Update when LRW is zero (the authors' copy-task code uses the optimiser's learning rate,
// 1e-3, with the raw gradient; [1] stresses that this step needs neither gradient clipping
// nor learning-rate adaptation). The linear system is solved with an LU factorisation
// (gonum) of the real 2N×2N embedding [[P, −Q], [Q, P]] of I + (λ/2)A = P + iQ, using
// (I + αA)^{-1}(I − αA) = 2(I + αA)^{-1} − I.
//
// Sign convention: the paper's equation is often quoted as A = G^H W − W^H G with the same
// left multiplication; with G as above that is, at W = I, exactly the ascent direction
// (it is minus the generator W^H G − G^H W of the right-multiplied form W(I + αA)^{-1}(I − αA)).
// The authors' code (stwisdom/urnn, optimizations.py and custom_optimizers.py, "see Lemma 4
// of [Tagare 2011]") builds A = G W^H − W G^H, as here; TestDescent checks that a small step
// lowers a smooth loss. The authors' code takes G from the top blocks of the gradient of
// their 2N×2N real composite matrix only, about half of the true G used here.
//
// # Variables and initialisation
//
// "Wre", "Wim" [N, N] hold Re W and Im W in the orientation of the equations, (W h)_k =
// Σ_j W[k][j] h_j (row-major). They are trainable (the graph reads them and the trainer
// takes their gradient) but constrained: the optimiser leaves them to Update. Build turns
// them once per graph into the real 2N×2N matrix M = [[Re Wᵀ, Im Wᵀ], [−Im Wᵀ, Re Wᵀ]],
// so that [Re h | Im h]·M = [Re Wh | Im Wh] and each step is one matmul.
//
// W starts as the authors' code starts it (models.py, initialize_unitary, impl "full",
// init "rand", the default of their copy runs): the restricted-capacity uRNN's
// W = D3 R2 F⁻¹ D2 Π R1 F D1 at [2]'s random initialisation (θ U[−π, π], reflection vectors
// U[−1, 1]: R does not depend on their scale, so this is the same distribution as the
// authors' Glorot-uniform draw; Π a uniform permutation), multiplied out once into a dense
// matrix. [1] does not state an initialisation for W in the text we could check. The
// other variables are initialised as package urnn ([2] §3.4): V, U Glorot-uniform; b,
// b_o zero; h_0 U[−√(3/2N), √(3/2N)]. (The authors' code draws b from U[−0.01, 0.01].)
//
// # Parameters
//
// Trainable values (Cell.NumParams):
//
//	2N·In (V) + 2N·Out (U) + 2N² (Re W, Im W) + N (b) + 2N (h_0) + Out (b_o)
//	= 2N·In + 2N·Out + 2N² + 3N + Out
//
// 38025 on the copy task at the uRNN paper's sizes (In 10, N 128, Out 9), 528897 on adding
// (In 2, N 512, Out 1). W lives on U(N), a manifold of real dimension N², so the model has
// N² fewer degrees of freedom than stored values (Cell.FreeParams: 21641 and 266753).
//
// References:
//
//	[1] Wisdom, Powers, Hershey, Le Roux, Atlas, "Full-Capacity Unitary Recurrent Neural
//	    Networks", NIPS 2016, arXiv:1611.00035 ([Wisdom2016] in docs/REFERENCES.md), and
//	    the authors' Theano/Keras code, github.com/stwisdom/urnn ([Wisdom2016code]).
//	[2] Arjovsky, Shah, Bengio, "Unitary Evolution Recurrent Neural Networks", ICML 2016
//	    ([Arjovsky2016]).
//	[3] Tagare, "Notes on Optimization on Stiefel Manifolds", technical report, Yale
//	    University, 2011 ([Tagare2011]).
package fcurnn
