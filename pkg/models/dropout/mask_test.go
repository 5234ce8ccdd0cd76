package dropout

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// masks returns the masks of rate p at steps ts, rows × cols each, with the noise key set to
// key, and the site's and the scope's separation: [site][t][element].
func masks(t *testing.T, scopeName string, key uint64, p float64, rows, cols int, sites []uint64, ts []float64) [][][]float64 {
	t.Helper()
	cell := &Cell{Inner: rnn.NewTanh(1, 1, 1), Input: p}
	store := model.NewStore()
	scope := store.Scope(scopeName)
	if err := cell.Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := rnn.SetNoise(scope, key); err != nil {
		t.Fatal(err)
	}
	res, err := model.ExecOnceN(backend.MustNew(), store, func(_ *model.Scope, g *Graph) []*Node {
		rnn.LiveVariables(store, g)
		s := cell.Build(scope, g).(*step)
		var out []*Node
		for _, site := range sites {
			for _, now := range ts {
				out = append(out, s.mask(Scalar(g, dtypes.Float32, now), site, p, []int{rows, cols}))
			}
		}
		return out
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([][][]float64, len(sites))
	for i := range sites {
		for j := range ts {
			f := tensors.MustCopyFlatData[float32](res[i*len(ts)+j])
			m := make([]float64, len(f))
			for k, v := range f {
				m[k] = float64(v)
			}
			out[i] = append(out[i], m)
		}
	}
	return out
}

// TestMaskStatistics: in training the kept fraction is 1 − p within 5 standard deviations
// (binomial), every kept unit is scaled by 1/(1 − p) and every other is 0; with the key 0
// (evaluation) every factor is 1.
func TestMaskStatistics(t *testing.T) {
	const rows, cols = 100, 400
	for _, p := range []float64{0.1, 0.5, 0.8} {
		t.Run(fmt.Sprint("p=", p), func(t *testing.T) {
			m := masks(t, "/m", 12345, p, rows, cols, []uint64{siteInput}, []float64{0, 1, 2, 3})
			n := float64(rows * cols)
			for step, mask := range m[0] {
				kept := 0.0
				for _, v := range mask {
					switch {
					case v == 0:
					case math.Abs(v-1/(1-p)) < 1e-6*(1/(1-p)):
						kept++
					default:
						t.Fatalf("t = %d: factor %v, want 0 or 1/(1 − p) = %v", step, v, 1/(1-p))
					}
				}
				sd := math.Sqrt(n * p * (1 - p))
				if got, want := kept, n*(1-p); math.Abs(got-want) > 5*sd {
					t.Errorf("t = %d: %v of %v units kept, want %v ± %.0f (1 − p)", step, got, n, want, 5*sd)
				}
			}
			for _, v := range masks(t, "/m", 0, p, rows, cols, []uint64{siteInput}, []float64{0})[0][0] {
				if v != 1 {
					t.Fatalf("noise off: factor %v, want 1", v)
				}
			}
		})
	}
}

// TestMaskIndependence: a mask is a function of the key, the step, the site and the scope:
// the same arguments give the same mask, and changing any one of them a mask that agrees with
// it about as often as two independent ones do (p² + (1 − p)²).
func TestMaskIndependence(t *testing.T) {
	const p, rows, cols = 0.5, 50, 200
	ts := []float64{0, 1, 7}
	sites := []uint64{siteInput, siteRecurrent, siteOutput}
	a := masks(t, "/m", 777, p, rows, cols, sites, ts)
	again := masks(t, "/m", 777, p, rows, cols, sites, ts)
	otherKey := masks(t, "/m", 778, p, rows, cols, sites, ts)
	otherScope := masks(t, "/m/layer1", 777, p, rows, cols, sites, ts)
	agree := func(x, y []float64) float64 {
		n := 0.0
		for i := range x {
			if x[i] == y[i] {
				n++
			}
		}
		return n / float64(len(x))
	}
	n := float64(rows * cols)
	want, tol := p*p+(1-p)*(1-p), 5*math.Sqrt(0.25/n)
	check := func(what string, x, y []float64) {
		if got := agree(x, y); math.Abs(got-want) > tol {
			t.Errorf("%s: masks agree on %.3f of units, independent ones %.3f ± %.3f", what, got, want, tol)
		}
	}
	for i := range sites {
		for j := range ts {
			if agree(a[i][j], again[i][j]) != 1 {
				t.Errorf("site %d, t = %v: the same key gave two masks", sites[i], ts[j])
			}
			check(fmt.Sprintf("site %d, t = %v, keys 777 and 778", sites[i], ts[j]), a[i][j], otherKey[i][j])
			check(fmt.Sprintf("site %d, t = %v, scopes /m and /m/layer1", sites[i], ts[j]), a[i][j], otherScope[i][j])
			if j > 0 {
				check(fmt.Sprintf("site %d, t = %v and %v", sites[i], ts[j-1], ts[j]), a[i][j-1], a[i][j])
			}
			if i > 0 {
				check(fmt.Sprintf("sites %d and %d, t = %v", sites[i-1], sites[i], ts[j]), a[i-1][j], a[i][j])
			}
		}
	}
}
