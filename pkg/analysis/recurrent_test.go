package analysis_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/esn"
	"github.com/urnn-notebooks/longmemory/pkg/models/exprnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/fcurnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/scornn"
	"github.com/urnn-notebooks/longmemory/pkg/models/scrn"
	"github.com/urnn-notebooks/longmemory/pkg/models/urnn"
)

// TestRecurrentMatrix reads W of every kind of cell and checks its spectrum against what the
// model promises: on the unit circle for the unitary and orthogonal ones, the reservoir's
// radius for the ESN, α S times beside R's eigenvalues for the SCRN, the variable itself for
// the tanh RNN; the LSTM has none.
func TestRecurrentMatrix(t *testing.T) {
	be := backend.MustNew()
	init := func(t *testing.T, cell rnn.Cell) *model.Scope {
		t.Helper()
		scope := model.NewStore().Scope("/m")
		if err := cell.Init(scope, rand.New(rand.NewPCG(5, 1))); err != nil {
			t.Fatal(err)
		}
		return scope
	}
	eig := func(t *testing.T, cell rnn.Cell, wantR int) ([]complex128, *model.Scope) {
		t.Helper()
		scope := init(t, cell)
		w, r, err := analysis.RecurrentMatrix(be, scope, cell)
		if err != nil {
			t.Fatal(err)
		}
		if r != wantR || len(w) != r*r {
			t.Fatalf("%T: %d×%d matrix with %d values, want %d×%d", cell, r, r, len(w), wantR, wantR)
		}
		ev, err := analysis.Eigenvalues(w, r)
		if err != nil {
			t.Fatal(err)
		}
		return ev, scope
	}
	onCircle := func(t *testing.T, name string, ev []complex128, tol float64) {
		t.Helper()
		for _, l := range ev {
			if d := math.Abs(cmplx.Abs(l) - 1); d > tol {
				t.Fatalf("%s: eigenvalue %v has |λ| − 1 = %g, want within %g", name, l, d, tol)
			}
		}
	}
	t.Run("unitary and orthogonal", func(t *testing.T) {
		for _, tc := range []struct {
			cell rnn.Cell
			r    int
		}{
			{urnn.New(3, 8, 2), 16}, {fcurnn.New(3, 8, 2), 16}, {exprnn.New(3, 8, 2), 8}, {scornn.New(3, 8, 2), 8},
		} {
			ev, _ := eig(t, tc.cell, tc.r)
			onCircle(t, fmt.Sprintf("%T", tc.cell), ev, 1e-5)
		}
	})
	t.Run("ESN radius", func(t *testing.T) {
		ev, _ := eig(t, &esn.Cell{In: 3, N: 20, Out: 2, Rho: 0.7}, 20)
		if r := analysis.SpectralRadius(ev); math.Abs(r-0.7) > 1e-5 {
			t.Errorf("ESN spectral radius %g, want 0.7", r)
		}
	})
	t.Run("SCRN blocks", func(t *testing.T) {
		cell := scrn.New(3, 6, 4, 2)
		ev, scope := eig(t, cell, 10)
		alphas := 0
		for _, l := range ev {
			if cmplx.Abs(l-complex(scrn.DefaultAlpha, 0)) < 1e-6 {
				alphas++
			}
		}
		r, _, err := analysis.VariableMatrix(scope, "R")
		if err != nil {
			t.Fatal(err)
		}
		evR, _ := analysis.Eigenvalues(r, 6)
		for _, l := range evR {
			if !slices.ContainsFunc(ev, func(m complex128) bool { return cmplx.Abs(m-l) < 1e-5 }) {
				t.Errorf("SCRN: R's eigenvalue %v missing from the block matrix's", l)
			}
		}
		if alphas < 4 {
			t.Errorf("SCRN: α = %g appears %d times among %v, want 4 (the context units)", scrn.DefaultAlpha, alphas, ev)
		}
	})
	t.Run("tanh RNN", func(t *testing.T) {
		cell := rnn.NewTanh(3, 5, 2)
		scope := init(t, cell)
		w, r, err := analysis.RecurrentMatrix(be, scope, cell)
		want, _, _ := analysis.VariableMatrix(scope, "W")
		if err != nil || r != 5 || !slices.Equal(w, want) {
			t.Errorf("tanh RNN: %d×%d, err %v; want the variable W", r, r, err)
		}
	})
	t.Run("LSTM", func(t *testing.T) {
		cell := lstm.New(3, 5, 2)
		if _, _, err := analysis.RecurrentMatrix(be, init(t, cell), cell); err == nil || !strings.Contains(err.Error(), "lstm") {
			t.Errorf("LSTM: err = %v, want one naming the cell", err)
		}
	})
}
