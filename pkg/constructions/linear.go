package constructions

import (
	"fmt"

	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
)

// linear is an LT-RNN with no nonlinearity in plain Go float64,
//
//	h_t = V h_{t−1} + U x_t + b,   y_t = W h_t,   h_0 = 0,
//
// the model of the copy construction. V is kept sparse (the non-zeros of each row), so a
// step of the block-diagonal clock costs O(N) instead of O(N²); U x_t skips zero inputs.
// It is the fast path of EvaluateCopy and CopySuccessRate, and is checked against the
// GoMLX graph of the same weights (ltrnn.Cell through analysis.Run) in the tests.
type linear struct {
	n, in, out int
	rows       [][]int     // rows[i]: the columns j with V_ij ≠ 0
	vals       [][]float64 // vals[i]: those V_ij
	u, b, w    []float64   // U [N, In], b [N], W [Out, N]
	h, next    []float64
}

// newLinear returns the plain-Go LT-RNN of w (sizes as ltrnn.FromWeights infers them;
// pooling and an output bias are not supported).
func newLinear(w ltrnn.Weights) (*linear, error) {
	cell, err := ltrnn.FromWeights(ltrnn.Linear, w)
	if err != nil {
		return nil, err
	}
	if cell.Pooling || cell.OutputBias {
		return nil, fmt.Errorf("constructions: plain-Go LT-RNN: pooling and output bias are not supported")
	}
	n := cell.N
	l := &linear{n: n, in: cell.In, out: cell.Out, u: w.U, b: w.B, w: w.W,
		rows: make([][]int, n), vals: make([][]float64, n), h: make([]float64, n), next: make([]float64, n)}
	for i := range n {
		for j, v := range w.V[i*n : (i+1)*n] {
			if v != 0 {
				l.rows[i] = append(l.rows[i], j)
				l.vals[i] = append(l.vals[i], v)
			}
		}
	}
	return l, nil
}

// reset sets h to h_0 = 0.
func (l *linear) reset() { clear(l.h) }

// step advances h by one step with input x (length In).
func (l *linear) step(x []float32) {
	for i := range l.n {
		s := 0.0
		for k, j := range l.rows[i] {
			s += l.vals[i][k] * l.h[j]
		}
		if l.b != nil {
			s += l.b[i]
		}
		l.next[i] = s
	}
	for k, xk := range x {
		if xk == 0 {
			continue
		}
		for i := range l.n {
			l.next[i] += l.u[i*l.in+k] * float64(xk)
		}
	}
	l.h, l.next = l.next, l.h
}

// output writes y = W h into y (length Out) and returns it.
func (l *linear) output(y []float64) []float64 {
	for o := range l.out {
		s := 0.0
		for i, wi := range l.w[o*l.n : (o+1)*l.n] {
			s += wi * l.h[i]
		}
		y[o] = s
	}
	return y
}

// outputRow returns row o of W h (one logit).
func (l *linear) outputRow(o int) float64 {
	s := 0.0
	for i, wi := range l.w[o*l.n : (o+1)*l.n] {
		s += wi * l.h[i]
	}
	return s
}
