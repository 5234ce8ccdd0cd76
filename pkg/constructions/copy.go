package constructions

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"

	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// MaxBlocks bounds d, the number of 2×2 clock blocks of Copy (the state has 2d + 1 floats
// and V (2d+1)² of them).
const MaxBlocks = 1 << 12

// saltCopy separates the construction's random stream from others derived from a seed.
const saltCopy = 0x636f7079 // "copy"

// CopySolution is the explicit copy-task LT-RNN of Henaff et al. §3.1.1 for K data
// symbols, S symbols to remember, delay T and d clock blocks (Henaff et al. 2016 §3.1.1, see
// docs/REFERENCES.md), with its random draws:
//
//	L[j]  = l_j ~ U{1, …, T + S}, the speed of block j: Q_j = rotation by 2π l_j/(T + S)
//	Ut[k] = ũ_k, the column of Ũ (2d × K) for data symbol k+1, uniform on the unit sphere
//
// and the weights (Weights, paper orientation, N = 2d + 1, task layout of the package doc):
//
//	V = blockdiag(Q_1, …, Q_d, 1)                                    [N, N]
//	U: column of data symbol k: (ũ_k, −1/S); blank: (0, −1); marker: (0, T + S + 1)   [N, K+2]
//	W = Uᵀ with the blank row scaled by S + 1, the last column of the data rows zeroed
//	    and the marker row (zeroed in [1]) left out                   [K+1, N]
//	h_t = V h_{t−1} + U x_t,  y_t = W h_t,  h_0 = 0 (no nonlinearity, no bias)
//
// How it works: the last coordinate sums −1/S per data symbol and −1 per blank, so it is
// −T just before the marker, S + 1 after it and S − j at recall step j; the blank logit is
// −(S+1) times it, large while waiting and negative while recalling. Symbol x_s is stored
// as Q^{t−s} ũ_{x_s}; since Q^{T+S} = I it resurfaces as ũ_{x_s} exactly at step s + T + S,
// the step where it must be output, while the other stored symbols are rotated to
// pseudo-random directions with small overlaps (about N(0, 1/2d) each).
type CopySolution struct {
	K, S, T, D int
	L          []int
	Ut         [][]float64
	Weights    ltrnn.Weights
}

// Copy draws the copy construction for K data symbols, S to remember, delay T (the task's
// tasks.Copy{T, Symbols: K, Recall: S}) and d blocks from seed. It returns an error naming
// the first size out of range (K, S, T, d ≥ 1; d ≤ MaxBlocks; K ≤ tasks.MaxSymbols;
// T + S ≤ tasks.MaxSteps).
func Copy(K, S, T, d int, seed uint64) (*CopySolution, error) {
	switch {
	case K < 1 || K > tasks.MaxSymbols:
		return nil, fmt.Errorf("constructions: Copy K = %d, want 1..%d data symbols", K, tasks.MaxSymbols)
	case S < 1 || S > tasks.MaxSteps:
		return nil, fmt.Errorf("constructions: Copy S = %d, want 1..%d symbols to remember", S, tasks.MaxSteps)
	case T < 1 || T+S > tasks.MaxSteps:
		return nil, fmt.Errorf("constructions: Copy T = %d, want 1..%d (T + S <= %d)", T, tasks.MaxSteps-S, tasks.MaxSteps)
	case d < 1 || d > MaxBlocks:
		return nil, fmt.Errorf("constructions: Copy d = %d, want 1..%d clock blocks", d, MaxBlocks)
	}
	rng := rand.New(rand.NewPCG(seed, saltCopy))
	c := &CopySolution{K: K, S: S, T: T, D: d, L: make([]int, d), Ut: make([][]float64, K)}
	for j := range c.L {
		c.L[j] = 1 + rng.IntN(T+S)
	}
	for k := range c.Ut {
		c.Ut[k] = unitGaussian(rng, 2*d)
	}
	c.Weights = c.weights()
	return c, nil
}

// unitGaussian returns a vector uniform on the unit sphere of R^n (a normalised Gaussian).
func unitGaussian(rng *rand.Rand, n int) []float64 {
	for {
		v := make([]float64, n)
		s := 0.0
		for i := range v {
			v[i] = rng.NormFloat64()
			s += v[i] * v[i]
		}
		if s > 0 {
			s = math.Sqrt(s)
			for i := range v {
				v[i] /= s
			}
			return v
		}
	}
}

// N returns the state size 2d + 1.
func (c *CopySolution) N() int { return 2*c.D + 1 }

// Task returns the copy task the construction solves.
func (c *CopySolution) Task() tasks.Copy { return tasks.Copy{T: c.T, Symbols: c.K, Recall: c.S} }

// weights builds U, V, W of the type doc from L and Ut.
func (c *CopySolution) weights() ltrnn.Weights {
	n, in, out, last := c.N(), c.K+2, c.K+1, 2*c.D
	v := make([]float64, n*n)
	period := float64(c.T + c.S)
	for j, l := range c.L {
		th := 2 * math.Pi * float64(l) / period
		cos, sin := math.Cos(th), math.Sin(th)
		r := 2 * j
		v[r*n+r], v[r*n+r+1] = cos, -sin
		v[(r+1)*n+r], v[(r+1)*n+r+1] = sin, cos
	}
	v[last*n+last] = 1
	u := make([]float64, n*in) // [N, K+2], column k is the embedding of input symbol k
	u[last*in+tasks.Blank] = -1
	u[last*in+c.K+1] = float64(c.T + c.S + 1)
	w := make([]float64, out*n) // [K+1, N]
	w[tasks.Blank*n+last] = -float64(c.S + 1)
	for k, col := range c.Ut {
		for i, x := range col {
			u[i*in+k+1] = x
			w[(k+1)*n+i] = x
		}
		u[last*in+k+1] = -1 / float64(c.S)
	}
	return ltrnn.Weights{U: u, V: v, W: w}
}

// Cell returns the construction as a Float64 LT-RNN with no nonlinearity, no clipping
// and the preset weights (ltrnn.FromWeights); Init(scope, nil) stores them.
func (c *CopySolution) Cell() (*ltrnn.Cell, error) {
	cell, err := ltrnn.FromWeights(ltrnn.Linear, c.Weights)
	if err != nil {
		return nil, err
	}
	cell.Type = dtypes.Float64
	return cell, nil
}
