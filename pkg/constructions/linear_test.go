package constructions

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
)

// TestPlainGoMatchesGraph checks that the plain-Go linear recurrence (the fast path of
// EvaluateCopy and CopySuccessRate) gives the same logits as the LT-RNN graph of the same
// weights (ltrnn.Cell through analysis.Run, whole and in chunks), on several draws of the
// construction, to 1e-9 relative to the largest logit.
func TestPlainGoMatchesGraph(t *testing.T) {
	for _, tc := range []struct {
		name         string
		K, S, T, d   int
		seed         uint64
		batch, chunk int
	}{
		{"paper T=100", 8, 10, 100, 128, 1, 4, 0},
		{"paper T=100 other draw", 8, 10, 100, 128, 2, 4, 0},
		{"small, chunked", 5, 3, 40, 16, 3, 3, 7},
		{"T=1000 chunked", 8, 10, 1000, 128, 4, 2, 250},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Copy(tc.K, tc.S, tc.T, tc.d, tc.seed)
			if err != nil {
				t.Fatal(err)
			}
			b, err := c.Task().Sample(rand.New(rand.NewPCG(tc.seed, 9)), tc.batch)
			if err != nil {
				t.Fatal(err)
			}
			cell, err := c.Cell()
			if err != nil {
				t.Fatal(err)
			}
			scope := model.NewStore().RootScope()
			if err := cell.Init(scope, nil); err != nil {
				t.Fatal(err)
			}
			tr, err := analysis.Run(backend.MustNew(), scope, cell, b, analysis.RunOptions{Chunk: tc.chunk})
			if err != nil {
				t.Fatal(err)
			}
			net, err := newLinear(c.Weights)
			if err != nil {
				t.Fatal(err)
			}
			y := make([]float64, net.out)
			worst := 0.0
			for i := range b.Size {
				net.reset()
				for s := range b.Len {
					net.step(b.X[(i*b.Len+s)*b.NumIn : (i*b.Len+s+1)*b.NumIn])
					net.output(y)
					g := tr.Output(i, s)
					scale := 0.0
					for o := range y {
						scale = max(scale, math.Abs(y[o]))
					}
					for o := range y {
						worst = max(worst, math.Abs(y[o]-g[o])/scale)
					}
				}
			}
			if worst > 1e-9 {
				t.Errorf("largest |plain − graph| / max|y| = %.3g, want <= 1e-9", worst)
			}
		})
	}
}
