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
	"github.com/urnn-notebooks/longmemory/pkg/models/bidir"
	"github.com/urnn-notebooks/longmemory/pkg/models/dropout"
	"github.com/urnn-notebooks/longmemory/pkg/models/seq2seq"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
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

// TestDropout: Model.Dropout wraps any kind in dropout on its inputs and readout and, in a
// stack, on every layer's state on its way up (the inputs of the first layer only);
// Model.RecurrentDropout on every layer's carried state. Rates outside [0, 1) are refused.
func TestDropout(t *testing.T) {
	cell, err := Model{Kind: "tanh", Hidden: 4, Dropout: 0.5}.cell(3, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := cell.(*dropout.Cell); !ok || d.Input != 0.5 || d.Output != 0.5 || d.Recurrent != 0 {
		t.Errorf("tanh 4 with Dropout 0.5: %+v, want a dropout.Cell with Input and Output 0.5", cell)
	}
	m := Model{Kind: "lstm", Hidden: 6, Layers: 3, Dropout: 0.3, RecurrentDropout: 0.1}
	cell, err = m.cell(3, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := cell.(*stack.Cell)
	if !ok || len(st.Layers) != 3 {
		t.Fatalf("3 LSTM layers with dropout: %T, want a stack of 3", cell)
	}
	for l, layer := range st.Layers {
		d, ok := layer.(*dropout.Cell)
		if !ok {
			t.Fatalf("layer %d is %T, want a dropout.Cell", l, layer)
		}
		if want := map[bool]float64{true: 0.3, false: 0}[l == 0]; d.Input != want || d.Output != 0.3 || d.Recurrent != 0.1 {
			t.Errorf("layer %d: Input %g, Output %g, Recurrent %g; want %g, 0.3, 0.1", l, d.Input, d.Output, d.Recurrent, want)
		}
	}
	if s := cell.Sizes(); s.State != 3*(2*6+1) {
		t.Errorf("state %d, want 3 × (12 + 1): each layer's and its step", s.State)
	}
	if got := m.String(); got != "lstm 6 × 3 layers dropout 0.3 recurrent dropout 0.1" {
		t.Errorf("String = %q", got)
	}
	for _, bad := range []Model{{Kind: "tanh", Hidden: 4, Dropout: 1}, {Kind: "tanh", Hidden: 4, RecurrentDropout: -0.5}} {
		if _, err := bad.cell(3, 2, false); err == nil || !strings.Contains(err.Error(), "want a rate in [0, 1)") {
			t.Errorf("%+v: %v, want a refusal of the rate", bad, err)
		}
	}
}

// TestBidirectional: Model.Bidirectional reads the sequence both ways with two models as the
// other fields describe them (stacks, dropout), and "bothsides" is the task that needs it.
func TestBidirectional(t *testing.T) {
	m := Model{Kind: "gru", Hidden: 5, Layers: 2, Dropout: 0.2, Bidirectional: true}
	cell, err := m.cell(3, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := cell.(*bidir.Cell)
	if !ok {
		t.Fatalf("%T, want a bidir.Cell", cell)
	}
	for i, c := range []any{b.Forward, b.Backward} {
		if s, ok := c.(*stack.Cell); !ok || len(s.Layers) != 2 {
			t.Fatalf("direction %d: %T, want a stack of 2", i, c)
		} else if _, ok := s.Layers[0].(*dropout.Cell); !ok {
			t.Errorf("direction %d, layer 0: %T, want a dropout.Cell", i, s.Layers[0])
		}
	}
	if got := m.String(); got != "gru 5 × 2 layers dropout 0.2 bidirectional" {
		t.Errorf("String = %q", got)
	}
	p, err := Lookup("barber/bothsides-T20/lstm-32-bidirectional")
	if err != nil {
		t.Fatal(err)
	}
	if _, task, err := p.Build(); err != nil || task.String() != "BothSides(T=20, D=5, K=4)" {
		t.Errorf("Build: %v, %v", task, err)
	}
}

// TestSeq2Seq: Model.Seq2Seq makes an encoder–decoder of two models of the kind (stacks with
// Layers), the encoder's outputs as wide as the decoder's state; "translate" is its task, and
// Reverse and Mirror are for it alone.
func TestSeq2Seq(t *testing.T) {
	m := Model{Kind: "gru", Hidden: 5, Layers: 2, Seq2Seq: true}
	cell, err := m.cell(6, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := cell.(*seq2seq.Cell)
	if !ok {
		t.Fatalf("%T, want a seq2seq.Cell", cell)
	}
	if e, d := s.Encoder.Sizes(), s.Decoder.Sizes(); e.Out != d.State || d.State != 10 || d.Out != 3 || e.In != 6 {
		t.Errorf("encoder %+v, decoder %+v: want the encoder's 10 outputs the decoder's 2 × 5 state", e, d)
	}
	if got := m.String(); got != "gru 5 × 2 layers encoder–decoder" {
		t.Errorf("String = %q", got)
	}
	if _, err := (Model{Kind: "gru", Hidden: 5, Seq2Seq: true, Dropout: 0.1}).cell(6, 3, false); err == nil {
		t.Error("Seq2Seq with Dropout: no error")
	}
	p, err := Lookup("barber/translate-T8/lstm-32-seq2seq-reversed")
	if err != nil {
		t.Fatal(err)
	}
	if _, task, err := p.Build(); err != nil || task.String() != "Translate(N=8, K=10, reversed input)" {
		t.Errorf("Build: %v, %v", task, err)
	}
	if _, err := (Task{Kind: "copy", T: 10, Reverse: true}).Build(); err == nil || !strings.Contains(err.Error(), "Task.Mirror and Task.Reverse are for \"translate\"") {
		t.Errorf("copy with Reverse: %v", err)
	}
}
