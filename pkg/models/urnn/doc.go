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
//   - FourStep (the default above N = 128 on backends without complex numbers): the DFTs are four-step
//     FFTs, n = n1·n2 with n1 the largest divisor of n not above √n (any n works; a prime
//     n gives n1 = 1, a dense DFT). Each DFT is two batched real matmuls; D1 and the
//     twiddles are folded into F's first matmul, D2 into F⁻¹'s first and D3 into its
//     second; R1 acts on the spectrum as a rank-2 real update; Π is one Gather; R2 is
//     applied last as R_{D3 v2} (since D3 R2 = R_{D3 v2} D3). cos θ, sin θ, the normalised
//     reflections and the folded matrices are computed once per graph in Build. Every
//     matmul has the states on the left with the batch right after its batch axis and its
//     matrix laid out (batch, free, contracted), so neither it nor its gradient transposes
//     an operand; the layout changes between the stages are reshapes around transposes of
//     two blocks of axes, which the Go backend copies in runs rather than element by
//     element (before this, generic transposes were 45% of a uRNN 512 training step; a
//     step of adding T = 750 went from 2.41 to 1.62 s). O(N^{1.5}) per step.
//   - DenseW (the default up to N = 128, DenseWMaxN, on backends without complex
//     numbers): W as one real 2N×2N matrix, built once per graph by applying the FourStep
//     factors to the identity, applied with one matmul per step: O(N²).
//   - Native: graph.FFT on complex tensors, used by Auto only when the backend supports
//     complex dtypes and FFT (XLA; see NativeSupported). Only the FFT runs on complex
//     numbers: GoMLX v0.28.2's gradient of a complex Mul is v·a rather than v·ā, which would
//     be wrong, so every product stays real.
//
// Forward+backward time per step on the Go backend (BenchmarkDFT: batch 20, float32, the
// difference between T = 20 and T = 10), and graph nodes per step (TestStepNodes: T = 2
// minus T = 1, with the unrolling, modReLU and the input add; forward / forward+backward).
// First two columns: GoMLX v0.28.2 without SIMD kernels; last two: v0.28.15 with
// GOEXPERIMENT=simd (3 runs on a quiet machine; ±30%; FourStep's after its layout change,
// 2 runs):
//
//	                               N = 128     N = 512     nodes/step   N = 128 (SIMD)  N = 512 (SIMD)
//	FourStep (four-step FFT)        4.3 ms     12.8 ms     43 / 158     0.5–0.9 ms      2.4–2.7 ms
//	DenseW (one 2N×2N matmul)       5.2 ms     42 ms       17 / 73      0.37 ms         9.0 ms
//	dense DFT (2N×2N matmuls)       8.7 ms     77 ms       24 / 109     0.64 ms         18 ms
//	radix-2 butterflies            10.2 ms     17.1 ms     213 / 710    2.8 ms          10 ms
//
// DenseW also pays once per graph for building W (≈ 4 ms at N = 128): over whole training
// steps of the copy task it is still faster at N = 128 (cmd/bench, batch 20, after
// FourStep's layout change: 45–51 against 56–61 ms at T = 100, 197–202 against 256–266 ms
// at T = 500), which is why Auto picks it there. With the SIMD kernels the
// large matmuls are fast and the per-node cost (~10–30 µs) weighs more; at N = 512 the
// four-step FFT's fewer FLOPs win. The dense-DFT and radix-2 variants live in
// variants_test.go, for the benchmark only.
//
// The factors are also exported one by one (D, R, F, Finv, Perm, ModReLU), on (Re, Im)
// pairs, for notebooks; Cell.DenseW returns W as a complex matrix for analysis.
//
// References:
//
//	[1] Arjovsky, Shah, Bengio, "Unitary Evolution Recurrent Neural Networks", ICML 2016,
//	    arXiv:1511.06464 (section and equation numbers of a preprint draft in ICLR 2016
//	    format; see [Arjovsky2016] in docs/REFERENCES.md).
package urnn
