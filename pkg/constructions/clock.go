package constructions

import (
	"math/rand/v2"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/plots"
)

// saltClock separates the random orthogonal matrix of ClockSpectra from other draws.
const saltClock = 0x636c6f63 // "cloc"

// ClockSpectra returns the eigenvalues (gonum mat.Eigen, analysis.Eigenvalues) of three
// N×N transition matrices, N = 2d + 1 of the construction (Henaff et al. §3.1.1 and §3.3):
//
//	"copy V"             the clock: e^{±2πi l_j/(T+S)} for each block j, and 1, all of
//	                     them (T+S)-th roots of unity spread around the unit circle
//	"random orthogonal"  the LT-ORNN initialisation (a Gaussian matrix projected to the
//	                     nearest orthogonal matrix, ltrnn.Orthogonalize), drawn from seed:
//	                     eigenvalues on the unit circle, spread nearly uniformly, so it is
//	                     "close to" a clock
//	"identity"           the LT-IRNN initialisation and the adding solution's V: every
//	                     eigenvalue at 1 (a δ mass), all l_j = 0
//
// Draw them with analysis.SpectraChart (complex plane with the unit circle) and
// analysis.AnglesChart (sorted angles: a clock is the diagonal, I a flat line).
func (c *CopySolution) ClockSpectra(seed uint64) ([]analysis.Spectrum, error) {
	n := c.N()
	rng := rand.New(rand.NewPCG(seed, saltClock))
	g := make([]float64, n*n)
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	out := make([]analysis.Spectrum, 0, 3)
	for _, m := range []struct {
		name string
		a    []float64
	}{
		{"copy V", c.Weights.V},
		{"random orthogonal", ltrnn.Orthogonalize(g, n)},
		{"identity", rnn.IdentityMatrix(n)},
	} {
		v, err := analysis.Eigenvalues(m.a, n)
		if err != nil {
			return nil, err
		}
		out = append(out, analysis.Spectrum{Name: m.name, Values: v})
	}
	return out, nil
}

// ClockCharts draws ClockSpectra(seed) twice: in the complex plane with the unit circle
// (analysis.SpectraChart) and as sorted angles (analysis.AnglesChart), the copy V last in both
// (in the plane its eigenvalues are dots drawn over the others' rings).
func (c *CopySolution) ClockCharts(seed uint64) (plane, angles plots.Chart, err error) {
	s, err := c.ClockSpectra(seed)
	if err != nil {
		return plane, angles, err
	}
	s = append(s[1:], s[0])
	return analysis.SpectraChart("Eigenvalues of the transition matrix", s...),
		analysis.AnglesChart("Eigenvalue angles (the clock view)", s...), nil
}
