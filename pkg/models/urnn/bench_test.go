package urnn

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

const benchBatch, benchT = 20, 10

// trainGraph returns a graph function computing the loss ‖o‖² over T steps of random
// inputs and its gradient with respect to every trainable variable of the cell.
func trainGraph(c *Cell, T int, grad bool) func(scope *model.Scope, g *Graph) []*Node {
	return func(scope *model.Scope, g *Graph) []*Node {
		rng := rand.New(rand.NewPCG(5, 5))
		x := Reshape(ConstAsDType(g, c.DType(), rnn.Uniform(rng, benchBatch*T*c.In, -1, 1)), benchBatch, T, c.In)
		out, _ := rnn.Sequence(c, scope, x)
		loss := ReduceAllSum(Mul(out, out))
		if !grad {
			return []*Node{loss}
		}
		var vars []*Node
		for v := range scope.IterVariables() {
			if v.Trainable {
				vars = append(vars, v.NodeValue(g))
			}
		}
		return append([]*Node{loss}, Gradient(loss, vars...)...)
	}
}

// BenchmarkDFT measures forward+backward time per recurrent step (batch 20, Go backend)
// of each way to apply W: the DFT as one dense 2n×2n matmul (DenseDFT, with the D's and
// Π folded into the two matrices), radix-2 butterflies (Radix2), the four-step FFT
// (FourStep), and the whole W as one dense matmul (DenseW). The per-step time is the
// difference between T = 20 and T = 10 divided by 10, so the per-graph work (building
// the matrices and their gradients) is reported apart, as µs/graph.
func BenchmarkDFT(b *testing.B) {
	for _, n := range []int{128, 512} {
		for _, impl := range []Impl{implDenseDFT, implRadix2, FourStep, DenseW} {
			b.Run(fmt.Sprintf("n=%d/%s", n, implName(impl)), func(b *testing.B) {
				c, store := newTestCell(b, 2, n, 1, dtypes.Float32, impl, 1)
				var elapsed [2]time.Duration
				for i, T := range []int{benchT, 2 * benchT} {
					exec := model.MustNewExec(backend.MustNew(), store, trainGraph(c, T, true))
					exec.MustCall() // compile
					start := time.Now()
					for range b.N {
						exec.MustCall()
					}
					elapsed[i] = time.Since(start)
				}
				perStep := float64((elapsed[1] - elapsed[0]).Microseconds()) / float64(b.N*benchT)
				b.ReportMetric(perStep, "µs/step")
				b.ReportMetric(float64(elapsed[0].Microseconds())/float64(b.N)-benchT*perStep, "µs/graph")
			})
		}
	}
}

func implName(i Impl) string {
	switch i {
	case implDenseDFT:
		return "DenseDFT"
	case implRadix2:
		return "Radix2"
	}
	return i.String()
}

// stepNodes returns the graph nodes added by one more time step: forward only, and
// forward with the gradient of the loss.
func stepNodes(t testing.TB, c *Cell, store *model.Store) (forward, withGradient int) {
	count := func(T int, grad bool) int {
		var nodes int
		_, err := model.ExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
			outs := trainGraph(c, T, grad)(scope, g)
			nodes = len(g.Nodes())
			return outs
		})
		if err != nil {
			t.Fatal(err)
		}
		return nodes
	}
	return count(2, false) - count(1, false), count(2, true) - count(1, true)
}

// TestStepNodes reports the graph nodes per time step of each implementation and fails if
// FourStep or DenseW grow past their current counts.
func TestStepNodes(t *testing.T) {
	for _, tc := range []struct {
		n       int
		impl    Impl
		maxFwd  int // forward nodes per step
		maxBoth int // forward and backward
	}{
		{8, FourStep, 69, 199}, {128, FourStep, 69, 199}, {128, DenseW, 18, 77},
		{128, implDenseDFT, 0, 0}, {128, implRadix2, 0, 0},
	} {
		c, store := newTestCell(t, 2, tc.n, 1, dtypes.Float32, tc.impl, 1)
		f, fb := stepNodes(t, c, store)
		t.Logf("n=%d %s: %d nodes per step forward, %d forward+backward", tc.n, implName(tc.impl), f, fb)
		if tc.maxFwd > 0 && (f > tc.maxFwd || fb > tc.maxBoth) {
			t.Errorf("n=%d %s: %d forward and %d forward+backward nodes per step, want ≤ %d and ≤ %d",
				tc.n, implName(tc.impl), f, fb, tc.maxFwd, tc.maxBoth)
		}
	}
}
