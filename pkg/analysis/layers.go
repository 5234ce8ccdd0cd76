package analysis

import (
	"fmt"
	"math"
	"math/cmplx"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/lru"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
)

// LayerEigenvalues returns the eigenvalues of the recurrence of each layer of cell (variables
// under scope): one slice per layer of a stack (pkg/models/stack: the deep LRU's blocks,
// Barber's stacked RNNs), a single slice for any other cell. A layer whose recurrence is a
// complex diagonal Λ gives its N diagonal entries λ_j, the eigenvalues themselves (without the
// conjugates a real form would add): the LRU (lru.Cell), S4D (s4d.Cell), and a block of the
// deep LRU (lru.Block, whose state carries the block's input e beside x; only x recurs, by
// Λ). Any other layer gives the eigenvalues of its RecurrentMatrix (Eigenvalues; a complex W
// in real form, so each eigenvalue with its conjugate). The error names the layer of a stack
// that has no recurrent matrix (an LSTM's, for one).
func LayerEigenvalues(backend compute.Backend, scope *model.Scope, cell rnn.Cell) ([][]complex128, error) {
	s, ok := cell.(*stack.Cell)
	if !ok {
		ev, err := cellEigenvalues(backend, scope, cell)
		if err != nil {
			return nil, err
		}
		return [][]complex128{ev}, nil
	}
	out := make([][]complex128, len(s.Layers))
	for l, layer := range s.Layers {
		// The layer's scope as stack.Cell gives it ("layer0", "layer1", …: its LRScales names).
		ev, err := cellEigenvalues(backend, scope.At("layer%d", l), layer)
		if err != nil {
			return nil, fmt.Errorf("analysis: LayerEigenvalues: layer %d: %w", l, err)
		}
		out[l] = ev
	}
	return out, nil
}

// cellEigenvalues returns the eigenvalues of one layer's recurrence (LayerEigenvalues).
func cellEigenvalues(backend compute.Backend, scope *model.Scope, cell rnn.Cell) ([]complex128, error) {
	if b, ok := cell.(*lru.Block); ok {
		// The block's Λ is that of an LRU of H inputs and outputs under the same scope: its
		// DenseW reads ν^log and θ^log alone.
		cell = &lru.Cell{In: b.H, N: b.N, Out: b.H}
	}
	if d, ok := cell.(rnn.DenseW); ok {
		re, im, err := d.DenseW(backend, scope)
		if err != nil {
			return nil, err
		}
		if ev, ok := complexDiagonal(re, im); ok {
			return ev, nil
		}
	}
	w, r, err := RecurrentMatrix(backend, scope, cell)
	if err != nil {
		return nil, err
	}
	return Eigenvalues(w, r)
}

// complexDiagonal returns the diagonal of the complex matrix re + i·im when im is not nil and
// every entry off the diagonal is 0.
func complexDiagonal(re, im [][]float64) ([]complex128, bool) {
	if im == nil || len(im) != len(re) {
		return nil, false
	}
	d := make([]complex128, len(re))
	for k := range re {
		if len(re[k]) != len(re) || len(im[k]) != len(re) {
			return nil, false
		}
		for j := range re[k] {
			if j != k && (re[k][j] != 0 || im[k][j] != 0) {
				return nil, false
			}
		}
		d[k] = complex(re[k][k], im[k][k])
	}
	return d, true
}

// Retention returns |λ_j|^t for t = 0, 1, …, steps, one curve per eigenvalue: how much of an
// input a unit of a linear diagonal recurrence (x_t = λ x_{t−1} + …) still holds t steps later,
// the factor by which the gradient reaching that input is scaled on its way back. Powers below
// the smallest float64 are 0.
func Retention(values []complex128, steps int) [][]float64 {
	out := make([][]float64, len(values))
	for j, v := range values {
		r := cmplx.Abs(v)
		out[j] = make([]float64, steps+1)
		for t := range out[j] {
			out[j][t] = math.Pow(r, float64(t))
		}
	}
	return out
}
