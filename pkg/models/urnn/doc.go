// Package urnn is the unitary evolution RNN (uRNN) of Arjovsky, Shah and Bengio [1]:
//
//	h_t = σ(W h_{t−1} + V x_t)                 ([1] eqs. 1–2, §3.2)
//	W   = D3 R2 F⁻¹ D2 Π R1 F D1               ([1] §2, eq. 7)
//	o_t = U [Re h_t; Im h_t] + b_o             ([1] §3.3, eq. 10)
//
// with a complex hidden state h ∈ ℂ^N and the factors ([1] §2)
//
//	D_k = diag(e^{iθ_k,1}, …, e^{iθ_k,N})       diagonal, θ_k ∈ ℝ^N (k = 1, 2, 3)
//	R_k = I − 2 v_k v_k*/‖v_k‖²                 complex reflection, v_k ∈ ℂ^N (k = 1, 2)
//	Π                                            a fixed random permutation, (Π z)_j = z_{perm[j]}
//	F, F⁻¹                                       the unitary DFT, (F z)_k = N^{−1/2} Σ_j e^{−2πi jk/N} z_j
//
// and the modReLU nonlinearity, per unit ([1] §3.2, eq. 9; ε as in the authors' code):
//
//	σ(z) = ReLU(|z| + b) · z/(|z| + ε),   b ∈ ℝ^N,  ε = 1e-5.
//
// Complex numbers are real pairs ([1] §3.1, eq. 8): the state is [batch, 2N] = [Re h | Im h],
// V (complex N × In) is stored as the real In × 2N matrix [Re Vᵀ | Im Vᵀ], and U is real
// 2N × Out. h_0 is learned. Initialisation ([1] §3.4): V, U Glorot-uniform; b, b_o zero;
// reflection vectors U[−1, 1]; θ U[−π, π]; h_0 U[−√(3/2N), √(3/2N)] (E‖h_0‖² = 1); Π uniform,
// drawn from the same seeded generator and stored as a non-trainable int32 variable.
//
// # Parameters
//
// Trainable parameters (Cell.NumParams):
//
//	2N·In (V) + 2N·Out (U) + 3N (θ) + 4N (reflections) + N (b) + 2N (h_0) + Out (b_o)
//	= 2N·In + 2N·Out + 10N + Out
//
// The copy task of [1] §4.1 (In 10, N 128, Out 9) has 6153; the adding task of §4.2
// (In 2, N 512, Out 1) has 8193. Π adds N non-trainable int32 entries.
//
// # Implementation
//
// The Go backend has no complex dtype and no FFT, so W is applied in real arithmetic.
// Cell.Impl chooses how (all give the same W, see TestImplsMatchReference):
//
//   - FourStep (the default above N = 128 on backends without complex numbers): the DFTs are
//     four-step FFTs, n = n1·n2 with n1 the largest divisor of n not above √n (any n works; a
//     prime n gives n1 = 1, a dense DFT), each two batched real matmuls with the twiddles
//     folded in; the factors are regrouped as
//
//     W h = R_{D3 v2} D3 · F⁻¹ · D2 · Π F · D1 R_{u1} h,   u1 = D1* F⁻¹ v1
//
//     (R1 F D1 = F D1 R_{u1} and D3 R2 = R_{D3 v2} D3, as F and the D_k are unitary), so that
//     both reflections act on the state as rank-2 real updates, the last one in the same
//     matmul as V x_t. The diagonals are elementwise products; Π is one Gather of whole rows
//     of the spectrum laid out with the data batch last. The two linear blocks without
//     parameters, Π F and F⁻¹, are not differentiated by GoMLX: their gradients are their
//     adjoints F⁻¹ Π⁻¹ and F (withAdjoint), in layouts the backend multiplies and moves
//     without generic transposes (see dft.go). O(N^{1.5}) per step.
//
//   - DenseW (the default up to N = 128, DenseWMaxN, on backends without complex
//     numbers): W as one real 2N×2N matrix, built once per graph by applying the FourStep
//     factors to the identity, applied with one matmul per step: O(N²).
//
//   - Native: graph.FFT on complex tensors, used by Auto only when the backend supports
//     complex dtypes and FFT (XLA; see NativeSupported). Only the FFT runs on complex
//     numbers: GoMLX v0.28.2's gradient of a complex Mul is v·a rather than v·ā, which would
//     be wrong, so every product stays real.
//
// BenchmarkDFT measures the forward+backward time per step of each (and of the dense-DFT
// and radix-2 variants in variants_test.go); TestStepNodes bounds the graph nodes per step.
//
// The factors are also exported one by one (D, R, F, Finv, Perm, ModReLU, and SplitReLU, the
// alternative to modReLU that [1] §3.2 rejects), on (Re, Im) pairs, for notebooks;
// Cell.DenseW returns W as a complex matrix for analysis.
//
// References:
//
//	[1] Arjovsky, Shah, Bengio, "Unitary Evolution Recurrent Neural Networks", ICML 2016,
//	    arXiv:1511.06464 (section and equation numbers of a preprint draft in ICLR 2016
//	    format; see [Arjovsky2016] in docs/REFERENCES.md).
package urnn
