// Package ltrnn is the linear-transition RNN of Henaff, Szlam and LeCun [1] §2.1: the
// nonlinearity sits between the input and the hidden state, so the transition itself is
// linear,
//
//	h_t = V h_{t−1} + σ(U x_t + b),   y_t = W h_t            ([1] eq. 2)
//
// with σ the identity for categorical (one-hot) inputs ("no nonlinearity", [1] §2.1), or
// ReLU or tanh. Its two initialisations of V name the models of [1] §4.1:
//
//   - LT-ORNN: V drawn from a Gaussian with mean 0 and variance 1/n, then projected to the
//     nearest orthogonal matrix by setting all its singular values to 1 (Orthogonalize);
//   - LT-IRNN: V = I.
//
// With l2 pooling ([1] §2.3, eq. 7; "Equation 6" in the B rendering) the decoder also
// sees the phase-free radii of the 2-dimensional blocks of h (pool size and stride 2):
//
//	y_t = W h_t + W_P pool(h_t),   pool(h)_j = ‖(h_{2j}, h_{2j+1})‖
//
// and training adds Henaff's soft orthogonality penalty ‖VᵀV x − x‖² at random unit
// vectors x (OrthogonalityPenalty, [1] §4.3).
//
// Activation clipping ([1] §4.1): whenever ‖h_t‖ > l the state is rescaled to norm l, per
// example, inside every step (Cell.ClipNorm, default l = 1000).
//
// Matrices are stored in the paper's orientation, so the variables read like the
// equations: "U" [N, In], "b" [N], "V" [N, N], "W" [Out, N], with pooling "WP" [Out, N/2],
// with Cell.OutputBias "by" [Out]. The initial state h_0 = 0 is not learned (the state of
// [1] §3.1.1's construction starts at 0). The number of trainable parameters is
//
//	P = N·In + N + N² + Out·N  [+ Out·N/2 with pooling]  [+ Out with an output bias]
//
// so the paper's configurations ([1] §4.1) have P = 8000 on copy (In 10, N 80, Out 9) and
// P = 16896 on adding (In 2, N 128, Out 1); Cell.NumParams computes it.
//
// References:
//
//	[1] Henaff, Szlam, LeCun, "Recurrent Orthogonal Networks and Long-Memory Tasks",
//	    ICML 2016, arXiv:1602.06662 (§2 models, §4 training settings; [Henaff2016] in
//	    docs/REFERENCES.md).
package ltrnn
