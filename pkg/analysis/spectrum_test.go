package analysis_test

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/plots"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// rotation returns the 2×2 rotation by θ, row-major.
func rotation(theta float64) []float64 {
	c, s := math.Cos(theta), math.Sin(theta)
	return []float64{c, -s, s, c}
}

func TestEigenvaluesAndSingularValues(t *testing.T) {
	r := rotation(0.7)
	blockDiag := []float64{ // diag(2·R(0.7), −0.5)
		2 * r[0], 2 * r[1], 0,
		2 * r[2], 2 * r[3], 0,
		0, 0, -0.5,
	}
	for _, tc := range []struct {
		name string
		a    []float64
		n    int
		eig  []complex128 // sorted by angle
		sv   []float64
	}{
		{"identity", rnn.IdentityMatrix(3), 3, []complex128{1, 1, 1}, []float64{1, 1, 1}},
		{"rotation", r, 2, []complex128{cmplx.Rect(1, -0.7), cmplx.Rect(1, 0.7)}, []float64{1, 1}},
		{"block diagonal", blockDiag, 3, []complex128{cmplx.Rect(2, -0.7), cmplx.Rect(2, 0.7), -0.5}, []float64{2, 2, 0.5}},
		{"triangular", []float64{3, 4, 0, 0}, 2, []complex128{0, 3}, []float64{5, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eig, err := analysis.Eigenvalues(tc.a, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.eig {
				if cmplx.Abs(eig[i]-want) > 1e-12 {
					t.Errorf("eigenvalue %d = %v, want %v (all: %v)", i, eig[i], want, eig)
				}
			}
			sv, err := analysis.SingularValues(tc.a, tc.n, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.sv {
				if math.Abs(sv[i]-want) > 1e-12 {
					t.Errorf("singular value %d = %g, want %g", i, sv[i], want)
				}
			}
		})
	}
	if _, err := analysis.Eigenvalues([]float64{1, 2, 3}, 2); err == nil || !strings.Contains(err.Error(), "3 values for a 2×2") {
		t.Errorf("Eigenvalues of 3 values as 2×2: error %v, want one naming the sizes", err)
	}
}

// TestRealify checks the real form of a complex matrix: a diagonal unitary diag(e^{iθ_k})
// gives an orthogonal matrix whose eigenvalues are e^{±iθ_k}.
func TestRealify(t *testing.T) {
	thetas := []float64{0.3, -1.2, 2.5}
	n := len(thetas)
	re, im := make([][]float64, n), make([][]float64, n)
	for k, th := range thetas {
		re[k], im[k] = make([]float64, n), make([]float64, n)
		re[k][k], im[k][k] = math.Cos(th), math.Sin(th)
	}
	a, err := analysis.Realify(re, im)
	if err != nil {
		t.Fatal(err)
	}
	sv, _ := analysis.SingularValues(a, 2*n, 2*n)
	for i, s := range sv {
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("singular value %d = %g, want 1 (unitary → orthogonal)", i, s)
		}
	}
	eig, _ := analysis.Eigenvalues(a, 2*n)
	for _, th := range thetas {
		for _, want := range []complex128{cmplx.Rect(1, th), cmplx.Rect(1, -th)} {
			found := false
			for _, e := range eig {
				found = found || cmplx.Abs(e-want) < 1e-12
			}
			if !found {
				t.Errorf("eigenvalue %v missing from %v", want, eig)
			}
		}
	}
}

func TestNewBoundsAndCurve(t *testing.T) {
	for _, tc := range []struct {
		name                string
		w                   []float64
		r                   int
		sp                  float64
		wmax, mu, tau, fact float64
	}{
		{"diagonal", []float64{3, 0, 0, -1}, 2, 1, 3, 3, 6, 3},
		{"2·rotation, sigmoid", []float64{2 * math.Cos(1), -2 * math.Sin(1), 2 * math.Sin(1), 2 * math.Cos(1)}, 2, 0.25, 2 * math.Sin(1), 2, 2 * 0.25 * 2 * math.Sin(1), 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := analysis.NewBounds(tc.w, tc.r, tc.sp)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"‖W‖max", b.WMax, tc.wmax}, {"μmax", b.MuMax, tc.mu}, {"τ", b.Tau, tc.tau}, {"σ'max·μmax", b.SV, tc.fact}} {
				if math.Abs(c.got-c.want) > 1e-12 {
					t.Errorf("%s = %.15g, want %.15g", c.what, c.got, c.want)
				}
			}
		})
	}
	got := analysis.Curve(0.5, []float64{0, 0, 0, 8})
	for i, want := range []float64{1, 2, 4, 8} {
		if got[i] != want {
			t.Errorf("Curve(0.5, last 8)[%d] = %g, want %g", i, got[i], want)
		}
	}
	got = analysis.Curve(2, []float64{1, 1, 1})
	for i, want := range []float64{7, 3, 1} {
		if got[i] != want {
			t.Errorf("Curve(2, ones)[%d] = %g, want %g", i, got[i], want)
		}
	}
	if _, err := analysis.NewBounds([]float64{1}, 1, math.NaN()); err == nil {
		t.Error("NewBounds with σ'max = NaN: no error")
	}
}

// TestRunChunks checks that Run gives the same outputs and state norms in one graph and
// in chunks, for an LSTM whose learned initial state is not zero (the chunked path must
// start from the cell's h_0), and that the norms match the kept states.
func TestRunChunks(t *testing.T) {
	cell := &lstm.Cell{In: 4, N: 3, Out: 3, Type: dtypes.Float64}
	scope, b := setup(t, cell, tasks.Copy{T: 5, Symbols: 2, Recall: 2}, 2, 3)
	rng := rand.New(rand.NewPCG(1, 2))
	setMatrix(scope, "h0", rnn.Uniform(rng, 3, -1, 1))
	setMatrix(scope, "c0", rnn.Uniform(rng, 3, -1, 1))
	be := backend.MustNew()
	whole, err := analysis.Run(be, scope, cell, b, analysis.RunOptions{States: true})
	if err != nil {
		t.Fatal(err)
	}
	chunked, err := analysis.Run(be, scope, cell, b, analysis.RunOptions{Chunk: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range whole.Outputs {
		if math.Abs(whole.Outputs[i]-chunked.Outputs[i]) > 1e-12 {
			t.Fatalf("output %d: whole %.15g, chunks of 4 %.15g", i, whole.Outputs[i], chunked.Outputs[i])
		}
	}
	for bi := range b.Size {
		for s := range b.Len {
			h := whole.StateAt(bi, s)
			n := math.Sqrt(h[0]*h[0] + h[1]*h[1] + h[2]*h[2] + h[3]*h[3] + h[4]*h[4] + h[5]*h[5])
			if got := chunked.StateNorms[bi*b.Len+s]; math.Abs(got-n) > 1e-12 {
				t.Fatalf("‖h‖ of example %d step %d = %.15g, want %.15g from the states", bi, s, got, n)
			}
		}
	}
	if chunked.States != nil {
		t.Error("States kept without RunOptions.States")
	}
}

// TestPoolingActivations checks the pooled radii and the marker steps on an adding example.
func TestPoolingActivations(t *testing.T) {
	cell := &ltrnn.Cell{In: 2, N: 6, Out: 1, Pooling: true, Type: dtypes.Float64}
	scope, b := setup(t, cell, tasks.Adding{T: 30}, 3, 8)
	a, err := analysis.PoolingActivations(backend.MustNew(), scope, cell, b, 1)
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for s := range b.Len {
		if b.At(1, s, 1) == 1 {
			want = append(want, s)
		}
	}
	if len(a.Markers) != 2 || a.Markers[0] != want[0] || a.Markers[1] != want[1] {
		t.Errorf("Markers = %v, want %v", a.Markers, want)
	}
	if len(a.States) != 30 || len(a.Pooled[0]) != 3 {
		t.Fatalf("got %d steps and %d pooled units, want 30 and 3", len(a.States), len(a.Pooled[0]))
	}
	h, p := a.States[17], a.Pooled[17]
	if want := math.Sqrt(h[2]*h[2] + h[3]*h[3]); math.Abs(p[1]-want) > 1e-14 {
		t.Errorf("pooled unit 1 at step 17 = %g, want %g", p[1], want)
	}
	if p[0] == 0 && p[1] == 0 && p[2] == 0 {
		t.Error("all pooled activations zero at step 17")
	}
}

// wellFormed fails the test unless svg parses as XML.
func wellFormed(t *testing.T, svg string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
}

func TestFigures(t *testing.T) {
	eig, _ := analysis.Eigenvalues(rotation(0.5), 2)
	ones := []float64{1, 0.5, 0.25, math.Inf(1)}
	act := &analysis.Activations{States: [][]float64{{0, 1, 2, 3}, {1, 1, 1, 1}, {2, 1, 0, 0}},
		Pooled: [][]float64{{0, 1}, {1, 1}, {2, 1}}, Markers: []int{1}}
	grad := analysis.GradNormsChart("g", []analysis.Named{{"measured", ones}}, []analysis.Named{{"bound", ones}})
	spectra := analysis.SpectraChart("s", analysis.Spectrum{Name: "R", Values: eig})
	before := analysis.SpectraChart("s", analysis.Spectrum{Name: "init", Values: eig}, analysis.Spectrum{Name: "trained", Values: eig})
	activations := analysis.ActivationsChart("p", act, 1)
	heat := analysis.ActivationsHeatmap("p", act, true)
	states := analysis.ActivationsHeatmap("h", act, false)
	for _, tc := range []struct {
		name string
		fig  plots.Figure
		ok   bool // the figure's structure
		text []string
	}{
		{"grad norms", grad, len(grad.Series) == 2 && !grad.Series[0].Dashed && grad.Series[1].Dashed && grad.LogScale() &&
			math.IsNaN(grad.Series[0].Y[3]), []string{"stroke-dasharray", "measured", "bound"}},
		{"spectra", spectra, spectra.Equal && spectra.UnitCircle && len(spectra.Series) == 1 && spectra.Series[0].Points &&
			!spectra.Series[0].Hollow && len(spectra.Series[0].X) == 2, []string{"Re λ"}},
		// The last spectrum in dots, drawn over the earlier ones' rings.
		{"two spectra", before, len(before.Series) == 2 && before.Series[0].Hollow && !before.Series[1].Hollow, []string{">trained<"}},
		{"angles", analysis.AnglesChart("a", analysis.Spectrum{Name: "R", Values: eig}), true, []string{"arg λ / 2π"}},
		{"singular values", analysis.SingularValuesChart("sv", analysis.Named{Name: "W", Values: []float64{2, 1}}), true, []string{">W<"}},
		{"state norms", analysis.StateNormsChart("n", true, analysis.Named{Name: "h", Values: []float64{1, 2, 3}}), true, []string{"‖h_t‖"}},
		{"activations", activations, len(activations.Series) == 2 && activations.Series[1].Dashed, []string{"p0"}},
		{"activations heat map", heat, len(heat.Values) == 2 && len(heat.Values[0]) == 3 && heat.ColLabels[1] == "m", []string{">m<"}},
		{"state heat map", states, len(states.Values) == 4 && len(states.Values[0]) == 3 && states.Values[3][0] == 3 &&
			states.YLabel == "hidden unit" && states.Diverging && !heat.Diverging, []string{">m<"}},
		{"empty activations", analysis.ActivationsHeatmap("none", &analysis.Activations{}, true), true, []string{">none<"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Errorf("unexpected figure: %+v", tc.fig)
			}
			svg := tc.fig.SVG()
			wellFormed(t, svg)
			for _, s := range tc.text {
				if !strings.Contains(svg, s) {
					t.Errorf("SVG misses %q", s)
				}
			}
			b, err := tc.fig.PNG()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Errorf("PNG: %v", err)
			}
		})
	}
}

func TestPowerNorms(t *testing.T) {
	// A rotation keeps the norm; 0.5·I halves it each step.
	rot := rotation(0.3)
	for n, v := range analysis.PowerNorms(rot, 2, 20, 1) {
		if math.Abs(v-1) > 1e-12 {
			t.Fatalf("rotation: ‖Wⁿh‖ = %g at n = %d, want 1", v, n)
		}
	}
	half := []float64{0.5, 0, 0, 0.5}
	for n, v := range analysis.PowerNorms(half, 2, 10, 1) {
		if want := math.Pow(0.5, float64(n)); math.Abs(v-want) > 1e-15 {
			t.Fatalf("0.5·I: ‖Wⁿh‖ = %g at n = %d, want %g", v, n, want)
		}
	}
}

// TestModulusRange: the spectrum of a rotation by 1 radian scaled by 0.5 (0.5·e^{±i}), one
// spread from 0.25 to 2; an empty spectrum gives +Inf and 0.
func TestModulusRange(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []complex128
		lo, hi float64
	}{
		{"on a circle", []complex128{cmplx.Rect(0.5, 1), cmplx.Rect(0.5, -1)}, 0.5, 0.5},
		{"apart", []complex128{2, -0.25i, 1}, 0.25, 2},
		{"none", nil, math.Inf(1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi := analysis.ModulusRange(tc.values)
			near := func(got, want float64) bool { return got == want || math.Abs(got-want) <= 1e-12 }
			if !near(lo, tc.lo) || !near(hi, tc.hi) {
				t.Errorf("ModulusRange = %g, %g; want %g, %g", lo, hi, tc.lo, tc.hi)
			}
		})
	}
}

// TestRelativeChange: ‖b − a‖_F / ‖a‖_F on matrices whose answer is known.
func TestRelativeChange(t *testing.T) {
	a := []float64{3, 0, 0, 4} // ‖a‖_F = 5
	for _, tc := range []struct {
		name string
		b    []float64
		want float64
	}{
		{"unchanged", []float64{3, 0, 0, 4}, 0},
		{"doubled", []float64{6, 0, 0, 8}, 1},
		{"one entry", []float64{3, 0, 0, 7}, 0.6},
		{"negated", []float64{-3, 0, 0, -4}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := analysis.RelativeChange(a, tc.b); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("RelativeChange = %g, want %g", got, tc.want)
			}
		})
	}
	defer func() {
		if recover() == nil {
			t.Error("RelativeChange of 4 and 3 values did not panic")
		}
	}()
	analysis.RelativeChange(a, a[:3])
}
