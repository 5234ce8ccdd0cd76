package ltrnn

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// PenaltyPoints is m, the number of random unit vectors of the soft orthogonality
// penalty in [1] §4.3 ("In our experiments we set m = 50, which was the same at [sic] the minibatch size").
const PenaltyPoints = 50

// Orthogonalize returns the orthogonal matrix nearest to the n×n matrix a (row-major) in
// the Frobenius norm: with the SVD a = U_svd Σ V_svdᵀ it is U_svd V_svdᵀ, i.e. a with
// all its singular values set to 1 ([1] §4.1, the LT-ORNN initialisation). It panics if
// len(a) ≠ n·n or the SVD does not converge.
func Orthogonalize(a []float64, n int) []float64 {
	if n < 1 || len(a) != n*n {
		panic(fmt.Sprintf("ltrnn: Orthogonalize: %d values for an n×n matrix with n = %d", len(a), n))
	}
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(n, n, append([]float64(nil), a...)), mat.SVDFull) {
		panic("ltrnn: Orthogonalize: SVD did not converge")
	}
	var u, v, q mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	q.Mul(&u, v.T())
	out := make([]float64, n*n)
	for i := range n {
		for j := range n {
			out[i*n+j] = q.At(i, j)
		}
	}
	return out
}

// OrthogonalityPenalty is the soft orthogonality loss of [1] §4.3, "‖VᵀV − I‖ evaluated at
// m random points on the unit sphere", as a mean of squares:
//
//	L(V) = (1/m) Σ_i ‖VᵀV x_i − x_i‖²
//
// for v [n, n] and x [m, n] holding the points x_i as rows (RandomUnitVectors). L = 0 for
// an orthogonal V, and for x_i uniform on the sphere E[L] = ‖VᵀV − I‖²_F / n. [1] takes
// one SGD step on it per training iteration of the pooling runs, at cost O(m n²).
func OrthogonalityPenalty(v, x *graph.Node) *graph.Node {
	return graph.DivScalar(graph.ReduceAllSum(orthogonalityResidualSquares(v, x)), float64(x.Shape().Dim(0)))
}

// OrthogonalityNorm is the same loss with the norm unsquared, the other reading of [1] §4.3's
// "‖VᵀV − I‖":
//
//	L₁(V) = (1/m) Σ_i ‖VᵀV x_i − x_i‖
//
// Its gradient keeps its size as V nears the orthogonal group, where the squared form's
// shrinks with the residual: a stiffer pull at equal step size, so that at a fixed step V
// stays within about a step of the orthogonal group instead of settling on it. The norm is
// taken as √(‖·‖² + ε²), ε = 1e-12, so that the gradient at a residual of exactly zero is
// zero and not NaN; float32 residuals are far larger, where ε changes nothing.
func OrthogonalityNorm(v, x *graph.Node) *graph.Node {
	const eps = 1e-12
	r := graph.Sqrt(graph.AddScalar(graph.ReduceSum(orthogonalityResidualSquares(v, x), 1), eps*eps))
	return graph.DivScalar(graph.ReduceAllSum(r), float64(x.Shape().Dim(0)))
}

// orthogonalityResidualSquares returns (VᵀV x_i − x_i)², [m, n], for the points x [m, n].
func orthogonalityResidualSquares(v, x *graph.Node) *graph.Node {
	vx := graph.DotGeneral(x, []int{1}, nil, v, []int{1}, nil)    // rows V x_i
	vtvx := graph.DotGeneral(vx, []int{1}, nil, v, []int{0}, nil) // rows Vᵀ V x_i
	return graph.Square(graph.Sub(vtvx, x))
}

// RandomUnitVectors returns m points drawn uniformly on the unit sphere of Rⁿ, [m, n]
// (normalised Gaussian rows), from the random state of scope's store, so each execution
// of the graph draws new points.
func RandomUnitVectors(scope *model.Scope, g *graph.Graph, dtype dtypes.DType, m, n int) *graph.Node {
	return graph.L2Normalize(scope.RandomNormal(g, shapes.Make(dtype, m, n)), -1)
}

// OrthogonalityLoss returns OrthogonalityPenalty of the cell's V at m fresh random unit
// vectors (m = PenaltyPoints in [1] §4.3). Init must have been called.
func (c *Cell) OrthogonalityLoss(scope *model.Scope, g *graph.Graph, m int) *graph.Node {
	v := rnn.Variable(scope, g, "V")
	return OrthogonalityPenalty(v, RandomUnitVectors(scope, g, v.DType(), m, c.N))
}
