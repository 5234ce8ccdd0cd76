package celltest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// FD configures CheckGradient. The zero value means the defaults given per field.
type FD struct {
	Step float64 // central-difference step h; default 1e-6
	Tol  float64 // largest accepted relative error; default 1e-4
	// MaxPerVariable is how many elements of each variable are checked, chosen at random
	// (seeded by Seed); 0 checks every element.
	MaxPerVariable int
	Seed           uint64
}

// CheckGradient compares the gradient of a scalar loss with respect to every trainable
// variable of store, as computed by GoMLX's reverse-mode autodiff, with central differences
//
//	∂L/∂θ_i ≈ (L(θ + h e_i) − L(θ − h e_i)) / 2h,
//
// and returns an error naming the first variable and element whose relative error
// |g − g_fd| / max(|g|, |g_fd|, 1e-5) exceeds fd.Tol. The variables must be Float64
// (float32 differences are too noisy for h = 1e-6). loss builds the scalar loss; it is
// called once per graph, so it must be deterministic.
func CheckGradient(backend compute.Backend, store *model.Store, loss func(scope *model.Scope, g *Graph) *Node, fd FD) error {
	if fd.Step == 0 {
		fd.Step = 1e-6
	}
	if fd.Tol == 0 {
		fd.Tol = 1e-4
	}
	var vars []*model.Variable
	gradExec, err := model.NewExec(backend, store, func(scope *model.Scope, g *Graph) []*Node {
		rnn.LiveVariables(store, g)
		l := loss(scope, g)
		vars = vars[:0]
		var nodes []*Node
		for v := range store.RootScope().IterVariables() {
			if v.Trainable && v.InUseByGraph(g) {
				vars = append(vars, v)
				nodes = append(nodes, v.NodeValue(g))
			}
		}
		return append([]*Node{l}, Gradient(l, nodes...)...)
	})
	if err != nil {
		return err
	}
	lossExec, err := model.NewExec(backend, store, func(scope *model.Scope, g *Graph) *Node {
		rnn.LiveVariables(store, g)
		return loss(scope, g)
	})
	if err != nil {
		return err
	}
	out, err := gradExec.Call()
	if err != nil {
		return err
	}
	if len(vars) == 0 {
		return fmt.Errorf("celltest: CheckGradient: the loss uses no trainable variable")
	}
	eval := func() (float64, error) {
		l, err := lossExec.Call()
		if err != nil {
			return 0, err
		}
		return tensors.ToScalar[float64](l[0]), nil
	}
	rng := rand.New(rand.NewPCG(fd.Seed, 0x9e3779b97f4a7c15))
	for vi, v := range vars {
		if v.DType() != dtypes.Float64 {
			return fmt.Errorf("celltest: CheckGradient: variable %s is %s, want Float64", v.Path(), v.DType())
		}
		grad := tensors.MustCopyFlatData[float64](out[1+vi])
		orig := v.MustValue()
		theta := tensors.MustCopyFlatData[float64](orig)
		dims := orig.Shape().Dimensions
		idx := make([]int, len(theta))
		for i := range idx {
			idx[i] = i
		}
		if fd.MaxPerVariable > 0 && fd.MaxPerVariable < len(idx) {
			rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
			idx = idx[:fd.MaxPerVariable]
		}
		for _, i := range idx {
			var l [2]float64
			for k, sign := range []float64{+1, -1} {
				p := append([]float64(nil), theta...)
				p[i] += sign * fd.Step
				if err := v.SetValue(tensors.FromFlatDataAndDimensions(p, dims...)); err != nil {
					return err
				}
				if l[k], err = eval(); err != nil {
					return err
				}
			}
			want := (l[0] - l[1]) / (2 * fd.Step)
			rel := math.Abs(grad[i]-want) / max(math.Abs(grad[i]), math.Abs(want), 1e-5)
			if !(rel <= fd.Tol) {
				_ = v.SetValue(tensors.FromFlatDataAndDimensions(theta, dims...))
				return fmt.Errorf("celltest: gradient of %s[%d] (shape %v): autodiff %.10g, finite differences %.10g, relative error %.3g > %.3g",
					v.Path(), i, dims, grad[i], want, rel, fd.Tol)
			}
		}
		if err := v.SetValue(tensors.FromFlatDataAndDimensions(theta, dims...)); err != nil {
			return err
		}
	}
	return nil
}
