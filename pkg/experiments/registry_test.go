package experiments

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestLayers: Model.Layers builds a stack of the kind whose layers connect (the first reads
// the task's inputs, the last gives its outputs), trains under its preset's settings, and is
// refused below 0 and for a kind whose matrices move by a rule of their own.
func TestLayers(t *testing.T) {
	cell, err := Model{Kind: "lstm", Hidden: 6, Layers: 3}.cell(3, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if s := cell.Sizes(); s.In != 3 || s.Out != 2 || s.State != 3*2*6 {
		t.Errorf("a stack of 3 LSTM 6: sizes %+v, want In 3, State 36, Out 2", s)
	}
	if got := (Model{Kind: "lstm", Hidden: 6, Layers: 3}).String(); got != "lstm 6 × 3 layers" {
		t.Errorf("String = %q", got)
	}
	if _, err := (Model{Kind: "tanh", Hidden: 4, Layers: -1}).cell(3, 2, false); err == nil || !strings.Contains(err.Error(), "Model.Layers = -1") {
		t.Errorf("Layers -1: %v", err)
	}
	c, err := Model{Kind: "scornn", Hidden: 4, Layers: 2}.cell(3, 2, false)
	if err == nil {
		err = c.Init(gmodel.NewStore().Scope("/m"), rand.New(rand.NewPCG(1, 1)))
	}
	if err == nil || !strings.Contains(err.Error(), "rnn.Constrained") {
		t.Errorf("a stack of scoRNNs: %v, want a refusal naming rnn.Constrained", err)
	}
}

// TestRadius: Model.Radius gives the tanh RNN an echo-state-network-style W of that spectral
// radius, and is refused for other kinds.
func TestRadius(t *testing.T) {
	cell, err := Model{Kind: "tanh", Hidden: 30, Radius: 1.1}.cell(3, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	scope := gmodel.NewStore().Scope("/m")
	if err := cell.Init(scope, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	w, r, err := analysis.RecurrentMatrix(backend.MustNew(), scope, cell)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := analysis.Eigenvalues(w, r)
	if err != nil {
		t.Fatal(err)
	}
	if rho := analysis.SpectralRadius(ev); math.Abs(rho-1.1) > 1e-4 {
		t.Errorf("spectral radius %g, want 1.1", rho)
	}
	if _, err := (Model{Kind: "lstm", Hidden: 4, Radius: 1.1}).cell(3, 2, false); err == nil || !strings.Contains(err.Error(), "Model.Radius is for tanh") {
		t.Errorf("an LSTM with Radius: %v", err)
	}
}
