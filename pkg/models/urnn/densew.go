package urnn

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// DenseW returns the recurrent matrix W = D3 R2 F⁻¹ D2 Π R1 F D1 ([1] §2, eq. 7) of the
// cell whose variables Init created under scope, as a dense complex N×N matrix:
// W[k][j] = re[k][j] + i·im[k][j], so that (W h)_k = Σ_j W[k][j] h_j. It runs the
// unitary part of the cell's step (with the same Impl as Build would pick on backend)
// on the N basis vectors e_j, in the cell's dtype.
func (c *Cell) DenseW(backend compute.Backend, scope *model.Scope) (re, im [][]float64, err error) {
	n := c.N
	if _, err := c.resolveImpl(backend); err != nil {
		return nil, nil, err
	}
	out, err := model.ExecOnce(backend, scope.Store(), func(_ *model.Scope, g *Graph) *Node {
		s := c.Build(scope, g).(*step)
		basis := make([]float64, n*2*n) // [I | 0]: row j is e_j with zero imaginary part
		for j := range n {
			basis[j*2*n+j] = 1
		}
		return s.w.apply(Reshape(ConstAsDType(g, c.DType(), basis), n, 2*n))
	})
	if err != nil {
		return nil, nil, fmt.Errorf("urnn: DenseW: %w", err)
	}
	var rows []float64
	if out.DType() == dtypes.Float64 {
		rows = tensors.MustCopyFlatData[float64](out)
	} else {
		for _, v := range tensors.MustCopyFlatData[float32](out) {
			rows = append(rows, float64(v))
		}
	}
	re, im = make([][]float64, n), make([][]float64, n)
	for k := range n {
		re[k], im[k] = make([]float64, n), make([]float64, n)
		for j := range n { // row j of out is W e_j = column j of W
			re[k][j], im[k][j] = rows[j*2*n+k], rows[j*2*n+n+k]
		}
	}
	return re, im, nil
}

var _ rnn.Cell = (*Cell)(nil)
