package rnn

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/support/exceptions"
)

// NewVariable creates the variable name under scope holding values (row-major, shaped dims)
// converted to dtype (Float32, Float64 or Int32). Cells do not call it directly: they
// declare their variables as a []Var, which CreateVariables stores.
func NewVariable(scope *model.Scope, name string, dtype dtypes.DType, values []float64, dims ...int) error {
	_, err := newVariable(scope, name, dtype, values, dims)
	return err
}

func newVariable(scope *model.Scope, name string, dtype dtypes.DType, values []float64, dims []int) (*model.Variable, error) {
	size := 1
	for _, d := range dims {
		size *= d
	}
	if size != len(values) {
		return nil, fmt.Errorf("rnn: variable %q: %d values for shape %v (%d elements)", name, len(values), dims, size)
	}
	var t *tensors.Tensor
	switch dtype {
	case dtypes.Float64:
		t = tensors.FromFlatDataAndDimensions(append([]float64(nil), values...), dims...)
	case dtypes.Float32:
		f := make([]float32, len(values))
		for i, v := range values {
			f[i] = float32(v)
		}
		t = tensors.FromFlatDataAndDimensions(f, dims...)
	case dtypes.Int32:
		n := make([]int32, len(values))
		for i, v := range values {
			n[i] = int32(v)
			if float64(n[i]) != v {
				return nil, fmt.Errorf("rnn: variable %q: value %g at %d is not an int32", name, v, i)
			}
		}
		t = tensors.FromFlatDataAndDimensions(n, dims...)
	default:
		return nil, fmt.Errorf("rnn: variable %q: dtype %s, want Float32, Float64 or Int32", name, dtype)
	}
	return scope.CreateVariable(name, t)
}

// Uniform returns n values drawn from U[lo, hi]. A nil rng returns nil, for variable
// lists that only need shapes (see Var).
func Uniform(rng *rand.Rand, n int, lo, hi float64) []float64 {
	if rng == nil {
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	return v
}

// Gaussian returns n values drawn from N(0, std²). A nil rng returns nil, as Uniform.
func Gaussian(rng *rand.Rand, n int, std float64) []float64 {
	if rng == nil {
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = std * rng.NormFloat64()
	}
	return v
}

// GlorotUniform returns a fanIn×fanOut matrix (row-major) drawn from
// U[−√(6/(fanIn+fanOut)), +√(6/(fanIn+fanOut))] (Glorot & Bengio 2010), the
// initialisation of the input and output matrices in the uRNN paper §4. A nil rng returns
// nil, as Uniform.
func GlorotUniform(rng *rand.Rand, fanIn, fanOut int) []float64 {
	b := math.Sqrt(6 / float64(fanIn+fanOut))
	return Uniform(rng, fanIn*fanOut, -b, b)
}

// IdentityMatrix returns the n×n identity matrix, row-major.
func IdentityMatrix(n int) []float64 {
	v := make([]float64, n*n)
	for i := range n {
		v[i*n+i] = 1
	}
	return v
}

// CheckSizes returns an error naming the first size that is not positive.
func CheckSizes(pkg string, named ...any) error {
	for i := 0; i+1 < len(named); i += 2 {
		name, _ := named[i].(string)
		v, _ := named[i+1].(int)
		if v < 1 {
			return fmt.Errorf("%s: %s = %d, want >= 1", pkg, name, v)
		}
	}
	return nil
}

// OrDefault returns v, or def when v is 0: a configuration field whose zero value means its
// default.
func OrDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// OrFloat32 is a cell's dtype: t, or Float32 for the zero value (every cell's Type field).
func OrFloat32(t dtypes.DType) dtypes.DType {
	if t == dtypes.InvalidDType {
		return dtypes.Float32
	}
	return t
}

// CheckDType returns an error naming dtype when it is neither Float32 nor Float64, the
// dtypes of every cell's variables and states.
func CheckDType(pkg string, dtype dtypes.DType) error {
	if dtype != dtypes.Float32 && dtype != dtypes.Float64 {
		return fmt.Errorf("%s: Type = %s, want Float32 or Float64", pkg, dtype)
	}
	return nil
}

// Var is one variable of a cell. Every cell declares its variables one way: a method
// listing them as []Var in creation order, with values drawn from an rng (nil values when
// the rng is nil and only the names and shapes matter). Init stores the list with
// CreateVariables; Build reads it back with ReadVariables, which checks the shapes.
type Var struct {
	Name   string
	Dims   []int
	Values []float64 // row-major; nil when only the shape matters
	// DType, when set, is the variable's dtype instead of the cell's (the uRNN's
	// permutation is Int32).
	DType dtypes.DType
	// Static marks a variable that is not trained and that Build reads as a Go value rather
	// than as a graph node (the uRNN's permutation): CreateVariables makes it
	// non-trainable, ReadVariables checks its shape but returns no node for it.
	Static bool
	// Frozen marks a variable that is not trained but that Build reads as a graph node like
	// any other (the echo state network's reservoir and input weights): CreateVariables
	// makes it non-trainable, so that no optimiser, gradient check or parameter count sees
	// it; ReadVariables returns its node. A Var is at most one of Static and Frozen.
	Frozen bool
}

// CreateVariables stores every variable of vars under scope, in order, in dtype (or the
// Var's own DType), Static and Frozen ones as non-trainable. It returns an error, before
// creating any variable, for a Var that is both Static and Frozen.
func CreateVariables(scope *model.Scope, dtype dtypes.DType, vars []Var) error {
	for _, v := range vars {
		if v.Static && v.Frozen {
			return fmt.Errorf("rnn: variable %q is both Static (read as a Go value) and Frozen (read as a node): want at most one", v.Name)
		}
	}
	for _, v := range vars {
		dt := dtype
		if v.DType != dtypes.InvalidDType {
			dt = v.DType
		} else if err := CheckDType("rnn", dt); err != nil {
			return fmt.Errorf("%w (variable %q)", err, v.Name)
		}
		if v.Values == nil {
			return fmt.Errorf("rnn: variable %q has no values: Init needs a seeded *rand.Rand", v.Name)
		}
		x, err := newVariable(scope, v.Name, dt, v.Values, v.Dims)
		if err != nil {
			return err
		}
		if v.Static || v.Frozen {
			x.SetTrainable(false)
		}
	}
	return nil
}

// ReadVariables returns the nodes of vars under scope in g, by name (Frozen vars included,
// none for Static vars).
// It panics (through exceptions.Panicf, so that GoMLX reports it) when a variable is missing
// or its shape is not its Var's, naming the variable and the cell configuration cfg: Init
// ran with another configuration.
func ReadVariables(scope *model.Scope, g *Graph, vars []Var, cfg any) map[string]*Node {
	nodes := make(map[string]*Node, len(vars))
	for _, v := range vars {
		x := scope.GetVariable(v.Name)
		if x == nil {
			// exceptions.Panicf, not panic: GoMLX turns it into an error of the Exec.
			exceptions.Panicf("rnn: variable %s/%s does not exist: call the cell's Init before Build", scope.Scope(), v.Name)
		}
		if !slices.Equal(x.Shape().Dimensions, v.Dims) {
			exceptions.Panicf("%T: variable %s/%s has shape %s, want dimensions %v for %+v: Init with this configuration",
				cfg, scope.Scope(), v.Name, x.Shape(), v.Dims, cfg)
		}
		if !v.Static {
			nodes[v.Name] = x.NodeValue(g)
		}
	}
	return nodes
}

// GlorotUniformStack returns k Glorot-uniform fanIn×fanOut matrices one after the other
// ([k, fanIn, fanOut] row-major), one per gate of a gated cell (each gate's matrix drawn
// with its own fan-in and fan-out, as the uRNN authors' code does). A nil rng returns nil,
// for variable lists that only need shapes.
func GlorotUniformStack(rng *rand.Rand, k, fanIn, fanOut int) []float64 {
	if rng == nil {
		return nil
	}
	var v []float64
	for range k {
		v = append(v, GlorotUniform(rng, fanIn, fanOut)...)
	}
	return v
}

// RandomizeVariables overwrites every trainable variable under scope (sorted by name) with
// Float64 values drawn from U[lo, hi] and returns them by name: tests of Float64 cells use
// it so that no term of a hand-computed step (biases, h_0) is trivially zero.
func RandomizeVariables(scope *model.Scope, rng *rand.Rand, lo, hi float64) map[string][]float64 {
	var vars []*model.Variable
	for v := range scope.IterVariables() {
		if v.Trainable {
			vars = append(vars, v)
		}
	}
	slices.SortFunc(vars, func(a, b *model.Variable) int { return strings.Compare(a.Name(), b.Name()) })
	values := map[string][]float64{}
	for _, v := range vars {
		vals := Uniform(rng, v.Shape().Size(), lo, hi)
		v.MustSetValue(tensors.FromFlatDataAndDimensions(vals, v.Shape().Dimensions...))
		values[v.Name()] = vals
	}
	return values
}

// VariableValues returns the value of the variable name under scope as float64, row-major
// (Float32, Float64 or Int32 variables), or an error naming it when it does not exist.
func VariableValues(scope *model.Scope, name string) ([]float64, error) {
	v := scope.GetVariable(name)
	if v == nil {
		return nil, fmt.Errorf("rnn: no variable %s/%s: call the cell's Init first", scope.Scope(), name)
	}
	t, err := v.Value()
	if err != nil {
		return nil, err
	}
	switch t.DType() {
	case dtypes.Float64:
		return tensors.MustCopyFlatData[float64](t), nil
	case dtypes.Float32:
		return widen(tensors.MustCopyFlatData[float32](t)), nil
	case dtypes.Int32:
		return widen(tensors.MustCopyFlatData[int32](t)), nil
	}
	return nil, fmt.Errorf("rnn: variable %s/%s has dtype %s, want Float32, Float64 or Int32", scope.Scope(), name, t.DType())
}

func widen[T float32 | int32](v []T) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// Rows splits a row-major matrix of n columns into its rows.
func Rows(flat []float64, n int) [][]float64 {
	out := make([][]float64, 0, len(flat)/max(n, 1))
	for i := 0; i+n <= len(flat); i += n {
		out = append(out, flat[i:i+n])
	}
	return out
}

// SpectralRadius returns ρ(A) = max |λ_i|, the largest modulus of the eigenvalues of the
// n×n row-major matrix a (gonum mat.Eigen). It returns an error if len(a) ≠ n² or the
// eigendecomposition does not converge.
func SpectralRadius(a []float64, n int) (float64, error) {
	if n < 1 || len(a) != n*n {
		return 0, fmt.Errorf("rnn: SpectralRadius: %d values for a %d×%d matrix, want %d", len(a), n, n, n*n)
	}
	var e mat.Eigen
	if !e.Factorize(mat.NewDense(n, n, append([]float64(nil), a...)), mat.EigenNone) {
		return 0, fmt.Errorf("rnn: SpectralRadius: the eigendecomposition of the %d×%d matrix did not converge", n, n)
	}
	rho := 0.0
	for _, l := range e.Values(nil) {
		rho = max(rho, cmplx.Abs(l))
	}
	return rho, nil
}

// SparseRadius returns an n×n row-major matrix drawn as the echo-state-network-style
// initialisation Sutskever et al. 2013 train RNNs from (Galvan §2.2.4: "the spectral radius
// of the weight matrix plays an important role […] the value of 1.1 is often effective"; the
// ESN recipe of §2.2.3: big, sparse, random, then scaled): k nonzero
// Gaussian weights in each column (each unit's incoming weights; all n when k ≥ n) at random
// rows, the whole scaled so that its spectral radius is rho. A draw whose radius is 0
// (nilpotent) is drawn again, up to 20 times; the error says when none could be scaled.
func SparseRadius(rng *rand.Rand, n, k int, rho float64) ([]float64, error) {
	if rng == nil {
		return nil, nil
	}
	k = min(max(k, 1), n)
	for range 20 {
		w := make([]float64, n*n)
		for col := range n {
			for _, row := range rng.Perm(n)[:k] {
				w[row*n+col] = rng.NormFloat64()
			}
		}
		r, err := SpectralRadius(w, n)
		if err != nil {
			return nil, err
		}
		if r > 1e-12 {
			for i := range w {
				w[i] *= rho / r
			}
			return w, nil
		}
	}
	return nil, fmt.Errorf("rnn: SparseRadius: 20 draws of a %d×%d matrix with %d weights a column all had spectral radius 0", n, n, k)
}
