package rnn_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// TestSpectralRadius checks SpectralRadius on matrices whose radius is known: a rotation
// scaled by 2 (complex eigenvalues 2e^{±iθ}), a nilpotent matrix (0), a diagonal one.
func TestSpectralRadius(t *testing.T) {
	c, s := 2*math.Cos(0.3), 2*math.Sin(0.3)
	for _, tc := range []struct {
		name string
		a    []float64
		n    int
		want float64
	}{
		{"scaled rotation", []float64{c, -s, s, c}, 2, 2},
		{"nilpotent", []float64{0, 1, 0, 0}, 2, 0},
		{"diagonal", []float64{0.5, 0, 0, 0, -3, 0, 0, 0, 1}, 3, 3},
	} {
		got, err := rnn.SpectralRadius(tc.a, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: SpectralRadius = %.15g, want %g", tc.name, got, tc.want)
		}
	}
	if _, err := rnn.SpectralRadius([]float64{1, 2, 3}, 2); err == nil {
		t.Error("SpectralRadius of 3 values as 2×2: no error")
	}
}

// TestSparseRadius: the ESN-style draw has k weights a column and spectral radius rho, and the
// same seed draws the same matrix.
func TestSparseRadius(t *testing.T) {
	w, err := rnn.SparseRadius(rand.New(rand.NewPCG(1, 2)), 40, 15, 1.1)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := rnn.SpectralRadius(w, 40); err != nil || math.Abs(r-1.1) > 1e-9 {
		t.Errorf("spectral radius %v (%v), want 1.1", r, err)
	}
	for col := range 40 {
		nz := 0
		for row := range 40 {
			if w[row*40+col] != 0 {
				nz++
			}
		}
		if nz != 15 {
			t.Fatalf("column %d has %d nonzero weights, want 15", col, nz)
		}
	}
	again, _ := rnn.SparseRadius(rand.New(rand.NewPCG(1, 2)), 40, 15, 1.1)
	if !slices.Equal(w, again) {
		t.Error("the same seed drew another matrix")
	}
}
