// Package constructions holds hand-set recurrent networks that solve the long-memory
// tasks exactly or with high probability, following Henaff, Szlam and LeCun [1] §3.1.1
// (copy) and §3.2.1 (adding):
//
//   - Copy: an LT-RNN with no nonlinearity whose transition V = blockdiag(Q_1..Q_d, 1) is a
//     "clock" of period T + S made of 2×2 rotations by 2π l_j/(T + S) (l_j random), which
//     hides each stored symbol until it resurfaces T + S steps later (Copy, EvaluateCopy,
//     EvaluateCopyGraph, CopySuccessRate and SuccessGrid for [1] Figure 1).
//   - Adding: one ReLU unit with V = 1 that adds x_t when the marker is on (AddingLTRNN),
//     and the same mechanism as an LSTM whose input gate is driven by the marker channel
//     (AddingLSTM).
//   - The clock view: the eigenvalue angles of the copy solution's V against a random
//     orthogonal matrix and I (ClockSpectra; drawn with analysis.SpectraChart and
//     analysis.AnglesChart).
//
// The weights are laid out for this project's tasks (pkg/tasks): copy inputs are one-hot
// over 0 blank, 1..K data, K+1 marker, and the outputs are the K+1 classes blank, 1..K;
// [1] orders the symbols a_1..a_K data, a_{K+1} blank, a_{K+2} marker and has a marker
// output row, which the construction zeroes, so it is left out here.
//
// References:
//
//	[1] Henaff, Szlam, LeCun, "Recurrent Orthogonal Networks and Long-Memory Tasks",
//	    ICML 2016, arXiv:1602.06662, §3.1.1, §3.1.2, §3.2.1 ([Henaff2016] in
//	    docs/REFERENCES.md).
package constructions
