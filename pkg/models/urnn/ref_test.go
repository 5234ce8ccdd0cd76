package urnn

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Plain-Go (complex128) references for the tests: the factors of [1] §2 (eq. 7) and §3 written as loops.

func refDFT(z []complex128, inverse bool) []complex128 {
	n := len(z)
	sign := -1.0
	if inverse {
		sign = 1
	}
	out := make([]complex128, n)
	for k := range n {
		for j := range n {
			out[k] += cmplx.Exp(complex(0, sign*2*math.Pi*float64(j*k)/float64(n))) * z[j]
		}
		out[k] /= complex(math.Sqrt(float64(n)), 0)
	}
	return out
}

func refD(z []complex128, theta []float64) []complex128 {
	out := make([]complex128, len(z))
	for j := range z {
		out[j] = cmplx.Exp(complex(0, theta[j])) * z[j]
	}
	return out
}

func refR(z, v []complex128) []complex128 {
	var dot complex128 // v* z
	var norm2 float64
	for j := range z {
		dot += cmplx.Conj(v[j]) * z[j]
		norm2 += real(v[j])*real(v[j]) + imag(v[j])*imag(v[j])
	}
	out := make([]complex128, len(z))
	for j := range z {
		out[j] = z[j] - 2*v[j]*dot/complex(norm2, 0)
	}
	return out
}

func refPerm(z []complex128, perm []int) []complex128 {
	out := make([]complex128, len(z))
	for j, p := range perm {
		out[j] = z[p]
	}
	return out
}

func refModReLU(z []complex128, b []float64, eps float64) []complex128 {
	out := make([]complex128, len(z))
	for j := range z {
		m := cmplx.Abs(z[j])
		out[j] = z[j] * complex(max(m+b[j], 0)/(m+eps), 0)
	}
	return out
}

// refSplitReLU is ReLU(Re z + b) + i·ReLU(Im z + b) (Cell.SplitReLU).
func refSplitReLU(z []complex128, b []float64) []complex128 {
	out := make([]complex128, len(z))
	for j := range z {
		out[j] = complex(max(real(z[j])+b[j], 0), max(imag(z[j])+b[j], 0))
	}
	return out
}

// params are a cell's variables read back into Go.
type params struct {
	n, in, out int
	theta      [3][]float64
	v          [2][]complex128
	perm       []int
	V, U       []float64 // [in, 2n], [2n, out]
	b, bo, h0  []float64
	split      bool // σ is the split ReLU (Cell.SplitReLU), not modReLU
}

func readFloats(t testing.TB, scope *model.Scope, name string) []float64 {
	t.Helper()
	val := scope.GetVariable(name).MustValue()
	if val.DType() == dtypes.Float64 {
		return tensors.MustCopyFlatData[float64](val)
	}
	var out []float64
	for _, x := range tensors.MustCopyFlatData[float32](val) {
		out = append(out, float64(x))
	}
	return out
}

func readParams(t testing.TB, c *Cell, scope *model.Scope) params {
	vars := map[string][]float64{}
	for _, name := range []string{"theta", "reflection", "V", "U", "b", "bo", "h0"} {
		vars[name] = readFloats(t, scope, name)
	}
	for _, x := range c.Perm(scope) {
		vars["perm"] = append(vars["perm"], float64(x))
	}
	return paramsOf(c, vars)
}

// paramsOf returns the params of c with the variables vars (by name, Π as float64).
func paramsOf(c *Cell, vars map[string][]float64) params {
	n := c.N
	p := params{n: n, in: c.In, out: c.Out, split: c.SplitReLU}
	for _, x := range vars["perm"] {
		p.perm = append(p.perm, int(x))
	}
	th, rf := vars["theta"], vars["reflection"]
	for k := range 3 {
		p.theta[k] = th[k*n : (k+1)*n]
	}
	for k := range 2 {
		p.v[k] = make([]complex128, n)
		for j := range n {
			p.v[k][j] = complex(rf[(2*k)*n+j], rf[(2*k+1)*n+j])
		}
	}
	p.V, p.U, p.b, p.bo, p.h0 = vars["V"], vars["U"], vars["b"], vars["bo"], vars["h0"]
	return p
}

// refWApply is W z = D3 R2 F⁻¹ D2 Π R1 F D1 z ([1] eq. 6).
func (p params) refWApply(z []complex128) []complex128 {
	z = refD(z, p.theta[0])
	z = refDFT(z, false)
	z = refR(z, p.v[0])
	z = refPerm(z, p.perm)
	z = refD(z, p.theta[1])
	z = refDFT(z, true)
	z = refR(z, p.v[1])
	return refD(z, p.theta[2])
}

// refStep returns h_1 = modReLU(W h_0 + V x) and o = U [Re h_1; Im h_1] + b_o.
func (p params) refStep(x []float64, eps float64) (h []complex128, o []float64) {
	return p.refStepFrom(p.h0, x, eps)
}

// refStepFrom returns h_t = modReLU(W h_{t−1} + V x) and o = U [Re h_t; Im h_t] + b_o for
// the state prev = [Re h_{t−1} | Im h_{t−1}].
func (p params) refStepFrom(prev, x []float64, eps float64) (h []complex128, o []float64) {
	n := p.n
	h0 := make([]complex128, n)
	for j := range n {
		h0[j] = complex(prev[j], prev[n+j])
	}
	z := p.refWApply(h0)
	for j := range n {
		var re, im float64
		for i := range p.in {
			re += x[i] * p.V[i*2*n+j]
			im += x[i] * p.V[i*2*n+n+j]
		}
		z[j] += complex(re, im)
	}
	if p.split {
		h = refSplitReLU(z, p.b)
	} else {
		h = refModReLU(z, p.b, eps)
	}
	o = make([]float64, p.out)
	for k := range p.out {
		o[k] = p.bo[k]
		for j := range n {
			o[k] += real(h[j])*p.U[j*p.out+k] + imag(h[j])*p.U[(n+j)*p.out+k]
		}
	}
	return h, o
}

// newTestCell initialises a cell with seed and returns it with its store.
func newTestCell(t testing.TB, in, n, out int, dtype dtypes.DType, impl Impl, seed uint64) (*Cell, *model.Store) {
	t.Helper()
	c := &Cell{In: in, N: n, Out: out, Type: dtype}
	store := model.NewStore()
	if err := c.Init(store.RootScope(), rand.New(rand.NewPCG(seed, 7))); err != nil {
		t.Fatal(err)
	}
	c.Impl = impl
	return c, store
}
