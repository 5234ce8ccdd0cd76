package scan

import "testing"

// TestBlockLen checks the block length of DiagonalComplex: the whole sequence when it fits in
// one block, else the largest divisor of L in [⌈Block/2⌉, Block], else Block (a padded last
// block).
func TestBlockLen(t *testing.T) {
	for _, tc := range []struct{ block, L, want int }{
		{32, 20, 20},    // one block
		{32, 32, 32},    // one whole block
		{32, 10020, 30}, // copy T = 10 000: 334 blocks of 30
		{32, 1020, 30},  // copy T = 1000
		{32, 64, 32},
		{32, 1009, 32}, // a prime: no divisor, padded
		{8, 60, 6},
		{4, 37, 4},
		{2, 7, 2}, // never below 2
		{3, 100, 2},
	} {
		old := Block
		Block = tc.block
		if got := blockLen(tc.L); got != tc.want {
			t.Errorf("Block %d: blockLen(%d) = %d, want %d", tc.block, tc.L, got, tc.want)
		}
		Block = old
	}
}

// TestFilterBlock checks DiagonalFilter's block length: Block for few inputs and outputs,
// halved while the block-Toeplitz product's work C·In·Out exceeds 4N·(In + Out), never below 4
// unless Block is.
func TestFilterBlock(t *testing.T) {
	for _, tc := range []struct{ block, n, in, out, want int }{
		{32, 64, 10, 9, 32}, // the one-layer LRU on copy
		{32, 64, 64, 64, 8}, // the deep LRU's blocks
		{32, 4, 3, 2, 8},
		{32, 1, 512, 512, 4},
		{8, 64, 10, 9, 8},
		{2, 64, 64, 64, 2},
	} {
		old := Block
		Block = tc.block
		if got := filterBlock(tc.n, tc.in, tc.out); got != tc.want {
			t.Errorf("Block %d: filterBlock(N %d, In %d, Out %d) = %d, want %d", tc.block, tc.n, tc.in, tc.out, got, tc.want)
		}
		Block = old
	}
}
