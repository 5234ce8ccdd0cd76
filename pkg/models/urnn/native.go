package urnn

import (
	"math"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
)

// NativeSupported reports whether backend can run the Native implementation for
// variables of dtype: complex dtypes (Complex64 for Float32, Complex128 for Float64)
// and the FFT, Complex, Real and Imag operations. The Go backend has none of them.
func NativeSupported(backend compute.Backend, dtype dtypes.DType) bool {
	caps := backend.Capabilities()
	cdt := dtypes.Complex64
	if dtype == dtypes.Float64 {
		cdt = dtypes.Complex128
	}
	for _, op := range []compute.OpType{compute.OpTypeFFT, compute.OpTypeComplex, compute.OpTypeReal, compute.OpTypeImag} {
		if !caps.Operations[op] {
			return false
		}
	}
	return caps.DTypes[cdt]
}

// nativeDFT is the unitary DFT with graph.FFT on complex tensors: re, im [batch, n].
//
// Only the FFT itself runs on complex numbers: GoMLX's gradient of a complex Mul is
// v·a rather than v·ā, inconsistent with its (correct, conjugate) FFT gradient n·IFFT(v),
// so every multiplication stays in real arithmetic. The 1/√n scaling (√n for the
// inverse, whose backend op already divides by n) is applied to the real parts.
func nativeDFT(re, im *Node, inverse bool) (outRe, outIm *Node) {
	n := float64(re.Shape().Dim(-1))
	z := Complex(re, im)
	scale := 1 / math.Sqrt(n)
	if inverse {
		z = InverseFFT(z)
		scale = math.Sqrt(n)
	} else {
		z = FFT(z)
	}
	return MulScalar(Real(z), scale), MulScalar(Imag(z), scale)
}

// native applies W to h [batch, 2n] factor by factor with the native FFT.
func (u *unitary) native(h *Node) *Node {
	row := func(x *Node) *Node { return InsertAxes(x, 0) }
	re, im := split(h)
	re, im = cmul(re, im, row(u.d[0].cos), row(u.d[0].sin))
	re, im = nativeDFT(re, im, false)
	re, im = reflectPair(re, im, u.v[0][0], u.v[0][1])
	re, im = permPair(re, im, u.perm)
	re, im = cmul(re, im, row(u.d[1].cos), row(u.d[1].sin))
	re, im = nativeDFT(re, im, true)
	re, im = reflectPair(re, im, u.v[1][0], u.v[1][1])
	re, im = cmul(re, im, row(u.d[2].cos), row(u.d[2].sin))
	return Concatenate([]*Node{re, im}, 1)
}
