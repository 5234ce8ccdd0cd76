// Package scornn is the scaled Cayley orthogonal RNN (scoRNN) of Helfrich, Willmott and
// Ye [1]: a real RNN whose recurrent matrix is orthogonal by construction,
//
//	h_t = σ(W h_{t−1} + V x_t)                  ([1] §3; the paper calls the input matrix U)
//	o_t = U h_t + b_o                           (the paper's V h_t + c)
//	W   = (I + A)^{-1} (I − A) D                ([1] §3, the scaled Cayley transform)
//
// with A a real skew-symmetric N×N matrix (Aᵀ = −A) and D a fixed diagonal matrix of ±1
// entries, and σ the real modReLU with a bias per unit ([1] §3, as in [2] §3.2 for real z;
// the authors' code: relu(|z| + b)·sign(z)):
//
//	σ(z) = sign(z) · ReLU(|z| + b).
//
// The Cayley transform of a skew-symmetric matrix is orthogonal and never has −1 as an
// eigenvalue; the scaling D puts ρ eigenvalues −1 within reach, so that every orthogonal
// matrix with ρ eigenvalues −1 is of the form above ([1] §3).
//
// # The update of A ([1] §3)
//
// W is what the graph reads and differentiates; A is what is learned. After each optimiser
// step the trainer calls Cell.Update (rnn.Constrained) with ∇_W = ∂L/∂W and stores what it
// returns. By [1]'s theorem on the gradient of L(W(A)) (checked against central differences
// in TestGradAFiniteDifferences),
//
//	K   = (I + A)^{-T} ∇_W (D + Wᵀ)             (the paper's V, renamed: V is the input matrix)
//	∇_A = Kᵀ − K                                (skew-symmetric)
//
// and, as the authors' code does (scoRNN_copying.py, scoRNN_adding.py: TensorFlow's
// RMSPropOptimizer on A, learning rate 1e-4, while the other weights use 1e-3), A takes
// one RMSProp step with TensorFlow's defaults — decay 0.9, ε = 1e-10 inside the square
// root, mean square started at 1, no momentum:
//
//	m   ← 0.9 m + 0.1 ∇_A²                      (element-wise; "A_rms")
//	A   ← A − η ∇_A / √(m + 1e-10)
//	W   ← (I + A)^{-1} (I − A) D
//
// η is Cell.LRA, or the learning rate the trainer passes to Update when LRA is zero: set
// LRA = AuthorsLRA (1e-4) for the authors' copy and adding settings. The RMSProp step is
// element-wise on a skew-symmetric ∇_A with a symmetric m, so A stays exactly skew-symmetric.
// The linear systems are solved with gonum's LU factorisation of I + A (never singular:
// the eigenvalues of A are imaginary), with (I + A)^{-1}(I − A) = 2(I + A)^{-1} − I.
//
// # Variables and initialisation
//
// "W" [N, N] (trainable, constrained: the optimiser leaves it to Update), stored in the
// orientation of the equations, (W h)_i = Σ_j W[i][j] h_j (Build transposes it once per
// graph); "V" [In, N]; "b" [N]; "U" [N, Out]; "bo" [Out]; and three variables that are
// not trained and that the graph does not read (rnn.Var Static): "A" [N, N], "D" [N] (the
// diagonal of D) and "A_rms" [N, N] (RMSProp's mean square of ∇_A).
//
// As the authors' code (scoRNN.py): A is block diagonal with 2×2 blocks [[0, a_k], [−a_k, 0]],
// a_k = −tan(θ_k/2), θ_k ~ U[0, π/2], k < ⌊N/2⌋ (a last zero row and column when N is
// odd), so that (I + A)^{-1}(I − A) is a block rotation with eigenvalues e^{±iθ_k}
// (Henaff et al.'s orthogonal initialisation by 2×2 rotations, with angles drawn in
// [0, π/2]); D = diag(1, …, 1, −1, …, −1) with the last ρ = NegOnes entries −1, ρ = N/2 by
// default as in the authors' copy (N 190, ρ 95) and adding (N 170, ρ 85) scripts; V from
// U[−0.01, 0.01]; U Glorot-uniform; b and b_o zero; h_0 = 0 (not learned, as in the code).
// With b = 0, σ is the identity at the start.
//
// # Parameters
//
// Trainable values (Cell.NumParams):
//
//	In·N (V) + N² (W) + N (b) + N·Out (U) + Out (b_o)
//
// 18953 on the copy task at the uRNN paper's sizes (In 10, N 128, Out 9), 264193 on adding
// (In 2, N 512, Out 1). The model's degrees of freedom count A's N(N−1)/2 free entries
// instead of W's N² (Cell.FreeParams: 10697 and 132865; 21764 for the authors' copy
// network, N 190, and 15046 for their adding network, N 170).
//
// References:
//
//	[1] Helfrich, Willmott, Ye, "Orthogonal Recurrent Neural Networks with Scaled Cayley
//	    Transform", ICML 2018, arXiv:1707.09520 ([Helfrich2018] in docs/REFERENCES.md), and
//	    the authors' TensorFlow code, github.com/SpartinStuff/scoRNN ([Helfrich2018code]).
//	[2] Arjovsky, Shah, Bengio, "Unitary Evolution Recurrent Neural Networks", ICML 2016
//	    ([Arjovsky2016]): modReLU.
//	[3] Henaff, Szlam, LeCun, "Recurrent Orthogonal Networks and Long-Memory Tasks", ICML
//	    2016 ([Henaff2016]).
package scornn
