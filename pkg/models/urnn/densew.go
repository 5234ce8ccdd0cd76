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

// DenseW returns the recurrent matrix W = D3 R2 F⁻¹ D2 Π R1 F D1 ([1] §3, eq. 6) of the
// cell whose variables Init created under scope, as a dense complex N×N matrix:
// W[k][j] = re[k][j] + i·im[k][j], so that (W h)_k = Σ_j W[k][j] h_j. It runs the
// unitary part of the cell's step (with the same Impl as Build would pick on backend)
// on the N basis vectors e_j, in the cell's dtype.
func (c *Cell) DenseW(backend compute.Backend, scope *model.Scope) (re, im [][]float64, err error) {
	if c.Impl == Native && !NativeSupported(backend, c.DType()) {
		return nil, nil, fmt.Errorf("urnn: DenseW: Impl Native needs a backend with complex numbers and FFT, %s has none", backend.Name())
	}
	var s *step
	re, im, err = MatrixOf(backend, scope.Store(), c.N, c.DType(), func(g *Graph) {
		s = c.Build(scope, g).(*step)
	}, func(hRe, hIm *Node) (*Node, *Node) {
		return split(s.w.applyW(Concatenate([]*Node{hRe, hIm}, 1)))
	})
	if err != nil {
		return nil, nil, fmt.Errorf("urnn: DenseW: %w", err)
	}
	return re, im, nil
}

// MatrixOf returns the n×n complex matrix M of a linear map z ↦ M z given on real pairs,
// such as one factor (D, R, F, Finv, Perm) or the whole W, by applying it to the n basis
// vectors e_j in one graph: M[k][j] = re[k][j] + i·im[k][j]. prepare (may be nil) is
// called first in the graph, e.g. to build a cell whose variables apply reads from store
// (nil: a new empty store).
func MatrixOf(backend compute.Backend, store *model.Store, n int, dtype dtypes.DType,
	prepare func(g *Graph), apply func(re, im *Node) (outRe, outIm *Node)) (re, im [][]float64, err error) {
	if store == nil {
		store = model.NewStore()
	}
	out, err := model.ExecOnce(backend, store, func(_ *model.Scope, g *Graph) *Node {
		if prepare != nil {
			prepare(g)
		}
		basis := make([]float64, n*n) // row j is e_j
		for j := range n {
			basis[j*n+j] = 1
		}
		eye := Reshape(ConstAsDType(g, dtype, basis), n, n)
		r, i := apply(eye, ZerosLike(eye))
		return Concatenate([]*Node{r, i}, 1)
	})
	if err != nil {
		return nil, nil, err
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
		for j := range n { // row j of out is M e_j = column j of M
			re[k][j], im[k][j] = rows[j*2*n+k], rows[j*2*n+n+k]
		}
	}
	return re, im, nil
}

var _ rnn.Cell = (*Cell)(nil)
