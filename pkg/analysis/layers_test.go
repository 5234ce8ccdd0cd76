package analysis_test

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/lru"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/s4d"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
	"github.com/urnn-notebooks/longmemory/pkg/models/urnn"
)

func initCell(t *testing.T, cell rnn.Cell) *model.Scope {
	t.Helper()
	scope := model.NewStore().Scope("/m")
	if err := cell.Init(scope, rand.New(rand.NewPCG(7, 1))); err != nil {
		t.Fatal(err)
	}
	return scope
}

// TestLayerEigenvaluesDeepLRU stacks two LRU blocks with rings that do not overlap: each
// layer's N eigenvalues must lie on its own ring, so a layer read from the other's scope fails.
func TestLayerEigenvaluesDeepLRU(t *testing.T) {
	rings := [][2]float64{{0.5, 0.6}, {0.95, 0.96}}
	const H, N = 6, 5
	cell := stack.New(
		&lru.Block{In: 3, H: H, N: N, Out: H, RMin: rings[0][0], RMax: rings[0][1]},
		&lru.Block{In: H, H: H, N: N, Out: 2, RMin: rings[1][0], RMax: rings[1][1], NoGamma: true},
	)
	scope := initCell(t, cell)
	layers, err := analysis.LayerEigenvalues(backend.MustNew(), scope, cell)
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 {
		t.Fatalf("%d layers of eigenvalues, want 2", len(layers))
	}
	for l, ev := range layers {
		if len(ev) != N {
			t.Fatalf("layer %d: %d eigenvalues, want N = %d (no conjugates)", l, len(ev), N)
		}
		for _, v := range ev {
			if r := cmplx.Abs(v); r < rings[l][0]-1e-6 || r > rings[l][1]+1e-6 {
				t.Errorf("layer %d: |λ| = %g, want within its ring %v", l, r, rings[l])
			}
		}
	}
}

// TestLayerEigenvaluesCells checks a single cell against the eigenvalues of its real form:
// for S4D and the LRU (complex diagonal) each diagonal entry and its conjugate are among them,
// for the uRNN (dense) they are the same list.
func TestLayerEigenvaluesCells(t *testing.T) {
	be := backend.MustNew()
	for _, cell := range []rnn.Cell{s4d.New(2, 6, 3), lru.New(2, 6, 3), urnn.New(2, 8, 3)} {
		scope := initCell(t, cell)
		layers, err := analysis.LayerEigenvalues(be, scope, cell)
		if err != nil {
			t.Fatal(err)
		}
		if len(layers) != 1 {
			t.Fatalf("%T: %d layers, want 1", cell, len(layers))
		}
		w, r, err := analysis.RecurrentMatrix(be, scope, cell)
		if err != nil {
			t.Fatal(err)
		}
		real, err := analysis.Eigenvalues(w, r)
		if err != nil {
			t.Fatal(err)
		}
		got := layers[0]
		if _, dense := cell.(*urnn.Cell); dense && len(got) != len(real) {
			t.Fatalf("%T: %d eigenvalues, want the real form's %d", cell, len(got), len(real))
		}
		if _, dense := cell.(*urnn.Cell); !dense && 2*len(got) != len(real) {
			t.Fatalf("%T: %d eigenvalues, want half the real form's %d", cell, len(got), len(real))
		}
		for _, v := range got {
			for _, want := range []complex128{v, cmplx.Conj(v)} {
				best := math.Inf(1)
				for _, e := range real {
					best = math.Min(best, cmplx.Abs(e-want))
				}
				if best > 1e-5 {
					t.Errorf("%T: %v is not an eigenvalue of the real form (nearest at %g)", cell, want, best)
				}
			}
		}
	}
}

// TestLayerEigenvaluesLSTM: a layer without a recurrent matrix is named in the error.
func TestLayerEigenvaluesLSTM(t *testing.T) {
	cell := stack.New(lru.New(2, 4, 4), lstm.New(4, 4, 3))
	_, err := analysis.LayerEigenvalues(backend.MustNew(), initCell(t, cell), cell)
	if err == nil || !strings.Contains(err.Error(), "layer 1") {
		t.Fatalf("err = %v, want one naming layer 1", err)
	}
}

// TestRetention checks |λ|^t against hand values, and 0 below the float range.
func TestRetention(t *testing.T) {
	got := analysis.Retention([]complex128{complex(0, 0.5), cmplx.Rect(0.999, 2), 0.9}, 10000)
	for _, c := range []struct {
		j, t int
		want float64
	}{{0, 0, 1}, {0, 1, 0.5}, {0, 3, 0.125}, {1, 1000, 0.36769542477096373}, {2, 10000, 0}} {
		if d := math.Abs(got[c.j][c.t] - c.want); d > 1e-12*math.Max(1, c.want) {
			t.Errorf("Retention[%d][%d] = %g, want %g", c.j, c.t, got[c.j][c.t], c.want)
		}
	}
	if len(got[1]) != 10001 {
		t.Errorf("%d points, want steps + 1 = 10001", len(got[1]))
	}
}
