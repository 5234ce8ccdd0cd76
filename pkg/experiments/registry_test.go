package experiments

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	gmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
)

// TestConstrainedOnCircle checks the models table's constrained flag against the cells: a
// kind marked constrained has a recurrent matrix with every eigenvalue on the unit circle
// (so that leaving its gradients unclipped is the paper's setting, not an accident), and
// the Arjovsky presets clip exactly the kinds not so marked.
func TestConstrainedOnCircle(t *testing.T) {
	be := backend.MustNew()
	for _, m := range models {
		cell, err := Model{Kind: m.kind, Hidden: 8}.cell(3, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		scope := gmodel.NewStore().Scope("/m")
		if err := cell.Init(scope, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
		w, r, err := analysis.RecurrentMatrix(be, scope, cell)
		onCircle := err == nil && r > 0
		if onCircle {
			ev, err := analysis.Eigenvalues(w, r)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ev {
				onCircle = onCircle && math.Abs(cmplx.Abs(l)-1) < 1e-4
			}
		}
		// The LT-ORNN starts orthogonal (and the IRNN at the identity) but is trained freely.
		startsOnCircle := slices.Contains([]string{"lt-ornn", "lt-irnn", "irnn"}, m.kind)
		if m.constrained && !onCircle {
			t.Errorf("%s is marked constrained, but its W's eigenvalues are not all on the unit circle", m.kind)
		}
		if !m.constrained && onCircle && !startsOnCircle {
			t.Errorf("%s has W on the unit circle but is not marked constrained: its gradients would be clipped", m.kind)
		}
		if clipped := arjovskyOptimizer(m.kind).ClipValue != 0; clipped == m.constrained {
			t.Errorf("%s: clipped %t under Arjovsky's settings, constrained %t", m.kind, clipped, m.constrained)
		}
	}
}
