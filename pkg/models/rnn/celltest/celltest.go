// Package celltest is the test suite every recurrent cell of this project passes, as
// testing/fstest.TestFS is for file systems: a model's test file calls Test with a Config
// naming a small Float64 cell, and keeps only the tests of its own equations.
//
// Test runs these checks, each as a subtest:
//
//   - Init: the same seed gives the same variables (paths, creation order, shapes, dtypes,
//     trainable flags, values bit for bit) and another seed other values; every variable
//     lives under the scope Init was given; trainable variables have the cell's dtype.
//   - BadConfigs: Init rejects each Config.BadConfigs cell with an error naming the bad
//     value, before creating any variable; Build without Init, and Build of each
//     Config.Mismatched cell after Init of Config.New's, panic naming the variable.
//   - ParamCount: the trainable variables Init creates hold NumParams() values (for cells
//     that have the method), and each Config.ParamCounts configuration its documented count.
//   - Shapes: Sizes(), and the shapes and dtypes of Initial, Unroll and Readout; Project of
//     one step's inputs, [batch, In] (as UnrollStates calls it), equals that step of Project
//     of all steps, [batch, T, In].
//   - Gradient: GoMLX's gradient of a loss on the outputs against central differences, for
//     every element of every trainable variable (CheckGradient); every trainable variable
//     reaches the outputs with a nonzero gradient.
//   - NodesPerStep: the unrolled graph grows by the same number of nodes at every step,
//     within Config.Budget (NodesPerStep).
//   - Chunking: running a sequence in chunks, one graph per chunk with the last state of a
//     chunk feeding the next (as chunked training and analysis.Run do), gives the outputs
//     and states of the whole sequence in one graph (skipped for an rnn.WholeSequence cell,
//     which seq.CheckChunk keeps from being cut).
//   - Step: with Config.Step, a few steps of the graph against the cell's equations
//     written in plain Go (skipped without it).
//   - Constrained: for an rnn.Constrained cell, W stays unitary or orthogonal (max |WᴴW − I|
//     ≤ GroupTolerance) over 1000 Updates with random gradients, values stored in float32;
//     Update changes no variable that the optimiser owns and refuses a missing gradient
//     or a value of the wrong size (skipped for other cells).
//
// The variables are set to random values (Config.Randomize) before the Gradient,
// Chunking and Step checks, so that no term (biases, h_0) is trivially zero.
package celltest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Config describes the cell under test.
type Config struct {
	// New returns a new small cell in Float64 (a few units: the gradient check visits every
	// parameter). It is called once per check; the cells must be configured alike.
	New func() rnn.Cell
	// Sizes are the widths New's cell must report.
	Sizes rnn.Sizes
	// ParamCounts are configurations (any dtype) with their documented numbers of trainable
	// parameters, e.g. the paper's sizes.
	ParamCounts []ParamCount
	// Budget is the most graph nodes one more time step may add (see NodesPerStep).
	Budget GraphCost
	// BadConfigs are cells whose Init must fail.
	BadConfigs []BadConfig
	// Mismatched are cells whose Build must panic after Init of New's cell (another
	// configuration): Want is in the panic's message.
	Mismatched []BadConfig
	// Randomize, when not nil, sets the variables of New's cell under scope before the
	// Gradient, Chunking and Step checks; nil draws every trainable variable from U[−1, 1]
	// (rnn.RandomizeVariables). Use it to keep pre-activations away from kinks.
	Randomize func(scope *model.Scope, rng *rand.Rand)
	// Step, when not nil, is one step of the cell written in plain Go from its equations:
	// from the variables (by name, row-major, converted to float64), the state h_{t−1} and
	// the input x_t of one example it returns h_t ([State]) and y_t ([Out]).
	Step func(cell rnn.Cell, vars map[string][]float64, h, x []float64) (next, y []float64)
	// Initial, when not nil, returns h_0 by hand from the variables, the start of the
	// Step check; nil means h_0 = 0.
	Initial func(cell rnn.Cell, vars map[string][]float64) []float64
	// FD configures the gradient check (zero value: CheckGradient's defaults).
	FD FD
}

// ParamCount is a configuration and its number of trainable parameters.
type ParamCount struct {
	Name string
	Cell rnn.Cell
	Want int
}

// BadConfig is an invalid cell and a part of the error (or panic) it must cause, naming
// the bad value, e.g. "N = -1".
type BadConfig struct {
	Name string
	Cell rnn.Cell
	Want string
}

// scopeName is where the suite's cells keep their variables: not the root, as in training
// (train.ModelScope), so that a cell reading or creating variables elsewhere fails.
const scopeName = "/cell"

// Tolerance is the largest relative difference accepted between two computations of the
// same values in Float64 (chunked and whole, graph and plain Go): |a − b| ≤ Tolerance·max(1, |b|).
const Tolerance = 1e-12

// errSkip reports a check that does not apply to the Config.
var errSkip = errors.New("celltest: skipped")

type check struct {
	name string
	run  func(cfg Config, logf func(string, ...any)) error
}

var checks = []check{
	{"Init", checkInit},
	{"BadConfigs", checkBadConfigs},
	{"ParamCount", checkParamCount},
	{"Shapes", checkShapes},
	{"Gradient", checkGradient},
	{"NodesPerStep", checkNodesPerStep},
	{"Chunking", checkChunking},
	{"Step", checkStep},
	{"Constrained", checkConstrained},
}

// Test runs every check of the package doc on the cell of cfg, each as a subtest of t.
func Test(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.New == nil {
		t.Fatal("celltest: Config.New is nil")
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			switch err := c.run(cfg, t.Logf); {
			case errors.Is(err, errSkip):
				t.Skip(err)
			case err != nil:
				t.Error(err)
			}
		})
	}
}

// initCell returns a new store holding cell's variables, created under scopeName by Init
// from the rng seeded by seed.
func initCell(cell rnn.Cell, seed uint64) (*model.Store, *model.Scope, error) {
	store := model.NewStore()
	scope := store.Scope(scopeName)
	if err := cell.Init(scope, rand.New(rand.NewPCG(seed, 1))); err != nil {
		return nil, nil, fmt.Errorf("%T.Init: %w", cell, err)
	}
	return store, scope, nil
}

// newCell returns New's cell, checked to be Float64, initialised from seed and randomised.
func newCell(cfg Config, seed uint64) (rnn.Cell, *model.Store, *model.Scope, error) {
	cell := cfg.New()
	if dt := cell.DType(); dt != dtypes.Float64 {
		return nil, nil, nil, fmt.Errorf("celltest: Config.New gives a %s cell, want Float64", dt)
	}
	store, scope, err := initCell(cell, seed)
	if err != nil {
		return nil, nil, nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	if cfg.Randomize != nil {
		cfg.Randomize(scope, rng)
	} else {
		rnn.RandomizeVariables(scope, rng, -1, 1)
	}
	return cell, store, scope, nil
}

// values returns the values of v converted to float64.
func values(v *model.Variable) []float64 {
	t := v.MustValue()
	switch t.DType() {
	case dtypes.Float64:
		return tensors.MustCopyFlatData[float64](t)
	case dtypes.Float32:
		return convert(tensors.MustCopyFlatData[float32](t))
	case dtypes.Int32:
		return convert(tensors.MustCopyFlatData[int32](t))
	}
	panic(fmt.Sprintf("celltest: variable %s has dtype %s", v.Path(), t.DType()))
}

func convert[T float32 | int32](v []T) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// uniform returns a Float64 tensor of the given dimensions with entries from U[−1, 1].
func uniform(seed uint64, dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return tensors.FromFlatDataAndDimensions(rnn.Uniform(rand.New(rand.NewPCG(seed, 3)), n, -1, 1), dims...)
}

// near reports whether got is within Tolerance of want.
func near(got, want float64) bool {
	return math.Abs(got-want) <= Tolerance*max(1, math.Abs(want))
}

func checkInit(cfg Config, _ func(string, ...any)) error {
	var vars [3][]*model.Variable
	for i, seed := range []uint64{1, 1, 2} {
		cell := cfg.New()
		store, _, err := initCell(cell, seed)
		if err != nil {
			return err
		}
		for v := range store.RootScope().IterVariables() {
			if !strings.HasPrefix(v.Path(), scopeName+"/") {
				return fmt.Errorf("Init under %s created %s, outside its scope", scopeName, v.Path())
			}
			if v.Trainable && v.DType() != cell.DType() {
				return fmt.Errorf("variable %s is %s, want the cell's DType %s", v.Path(), v.DType(), cell.DType())
			}
			vars[i] = append(vars[i], v)
		}
	}
	a, b, c := vars[0], vars[1], vars[2]
	if len(a) == 0 {
		return fmt.Errorf("Init created no variable")
	}
	describe := func(v *model.Variable) string {
		return fmt.Sprintf("%s %s trainable=%v", v.Path(), v.Shape(), v.Trainable)
	}
	if len(a) != len(b) {
		return fmt.Errorf("Init with the same seed created %d and %d variables", len(a), len(b))
	}
	differ := false
	for i := range a {
		if describe(a[i]) != describe(b[i]) {
			return fmt.Errorf("Init with the same seed: variable %d is %s, then %s", i, describe(a[i]), describe(b[i]))
		}
		va, vb := values(a[i]), values(b[i])
		for k := range va {
			if math.Float64bits(va[k]) != math.Float64bits(vb[k]) {
				return fmt.Errorf("Init with the same seed: %s[%d] = %g, then %g", a[i].Path(), k, va[k], vb[k])
			}
		}
		if i < len(c) && !slices.Equal(va, values(c[i])) {
			differ = true
		}
	}
	if !differ && len(a) == len(c) {
		return fmt.Errorf("Init with seeds 1 and 2 created the same values: the rng is not used")
	}
	return nil
}

// buildPanic returns the message of the panic of cell.Build(scope, g), "" if none. Build
// runs outside any Exec (an Exec whose graph function panics may not release the graph).
func buildPanic(be compute.Backend, cell rnn.Cell, scope *model.Scope) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
			if msg == "" {
				msg = "(empty panic)"
			}
		}
	}()
	cell.Build(scope, NewGraph(be, "celltest"))
	return ""
}

func checkBadConfigs(cfg Config, _ func(string, ...any)) error {
	var errs []error
	for _, bc := range cfg.BadConfigs {
		store := model.NewStore()
		err := bc.Cell.Init(store.Scope(scopeName), rand.New(rand.NewPCG(1, 1)))
		switch {
		case err == nil:
			errs = append(errs, fmt.Errorf("%s: Init(%+v) returned no error, want one containing %q", bc.Name, bc.Cell, bc.Want))
		case !strings.Contains(err.Error(), bc.Want):
			errs = append(errs, fmt.Errorf("%s: Init error %q, want one containing %q", bc.Name, err, bc.Want))
		}
		if n := store.RootScope().NumVariables(); err != nil && n > 0 {
			errs = append(errs, fmt.Errorf("%s: Init failed after creating %d variables, want none", bc.Name, n))
		}
	}
	be := backend.MustNew()
	if msg := buildPanic(be, cfg.New(), model.NewStore().Scope(scopeName)); !strings.Contains(msg, "does not exist") {
		errs = append(errs, fmt.Errorf("Build without Init: panic %q, want one naming a variable that does not exist", msg))
	}
	for _, bc := range cfg.Mismatched {
		_, scope, err := initCell(cfg.New(), 1)
		if err != nil {
			return err
		}
		if msg := buildPanic(be, bc.Cell, scope); !strings.Contains(msg, bc.Want) {
			errs = append(errs, fmt.Errorf("%s: Build after Init of Config.New's cell: panic %q, want one containing %q", bc.Name, msg, bc.Want))
		}
	}
	return errors.Join(errs...)
}

// numParams returns the number of trainable parameters cell's Init creates.
func numParams(cell rnn.Cell) (int, error) {
	store, _, err := initCell(cell, 1)
	if err != nil {
		return 0, err
	}
	n := 0
	for v := range store.RootScope().IterVariables() {
		if v.Trainable {
			n += v.Shape().Size()
		}
	}
	return n, nil
}

type numParamser interface{ NumParams() int }

func checkParamCount(cfg Config, logf func(string, ...any)) error {
	cases := append([]ParamCount{{Name: "Config.New", Cell: cfg.New(), Want: -1}}, cfg.ParamCounts...)
	var errs []error
	compared := false
	for _, pc := range cases {
		got, err := numParams(pc.Cell)
		if err != nil {
			return fmt.Errorf("%s: %w", pc.Name, err)
		}
		logf("%s: %d trainable parameters", pc.Name, got)
		if np, ok := pc.Cell.(numParamser); ok {
			compared = true
			if n := np.NumParams(); n != got {
				errs = append(errs, fmt.Errorf("%s: Init created %d trainable parameters, NumParams() = %d", pc.Name, got, n))
			}
		}
		if pc.Want >= 0 {
			compared = true
			if got != pc.Want {
				errs = append(errs, fmt.Errorf("%s: Init created %d trainable parameters, want %d", pc.Name, got, pc.Want))
			}
		}
	}
	if !compared {
		errs = append(errs, fmt.Errorf("%T has no NumParams method and Config.ParamCounts is empty: nothing to compare", cases[0].Cell))
	}
	return errors.Join(errs...)
}

func checkShapes(cfg Config, _ func(string, ...any)) error {
	cell, store, scope, err := newCell(cfg, 1)
	if err != nil {
		return err
	}
	sz := cell.Sizes()
	if sz != cfg.Sizes {
		return fmt.Errorf("Sizes() = %+v, want %+v", sz, cfg.Sizes)
	}
	const batch, T = 2, 3
	res, err := model.ExecOnceN(backend.MustNew(), store, func(_ *model.Scope, g *Graph) []*Node {
		rnn.LiveVariables(store, g)
		step := cell.Build(scope, g)
		h0 := step.Initial(batch)
		x := Const(g, uniform(1, batch, T, sz.In))
		states := rnn.Unroll(step, x, nil)
		out := []*Node{h0, states, step.Readout(states), step.Readout(h0), step.Project(x)}
		for t := range T {
			out = append(out, step.Project(Squeeze(SliceAxis(x, 1, AxisElem(t)), 1)))
		}
		return out
	})
	if err != nil {
		return err
	}
	var errs []error
	all := res[4]
	P := all.Shape().Dim(-1)
	whole := tensors.MustCopyFlatData[float64](all)
	for t := range T {
		one := res[5+t]
		if got := one.Shape(); !slices.Equal(got.Dimensions, []int{batch, P}) {
			errs = append(errs, fmt.Errorf("Project of step %d's inputs [%d, %d] has shape %s, want [%d, %d] (Project of all steps: %s)",
				t, batch, sz.In, got, batch, P, all.Shape()))
			continue
		}
		for b, v := range tensors.MustCopyFlatData[float64](one) {
			if w := whole[(b/P*T+t)*P+b%P]; !near(v, w) {
				errs = append(errs, fmt.Errorf("Project of step %d's inputs: element %d = %.15g, that step of Project of all steps %.15g", t, b, v, w))
				break
			}
		}
	}
	for i, want := range [][]int{{batch, sz.State}, {batch, T, sz.State}, {batch, T, sz.Out}, {batch, sz.Out}} {
		name := []string{"Initial(2)", "Unroll (T = 3)", "Readout of the states", "Readout of h_0"}[i]
		if got := res[i].Shape(); !slices.Equal(got.Dimensions, want) || got.DType != dtypes.Float64 {
			errs = append(errs, fmt.Errorf("%s has shape %s, want (Float64)%v", name, got, want))
		}
	}
	return errors.Join(errs...)
}

func checkGradient(cfg Config, _ func(string, ...any)) error {
	cell, store, scope, err := newCell(cfg, 3)
	if err != nil {
		return err
	}
	const batch, T = 2, 4
	sz := cell.Sizes()
	x, wy := uniform(4, batch, T, sz.In), uniform(5, batch, T, sz.Out)
	loss := func(_ *model.Scope, g *Graph) *Node {
		out, _ := rnn.Sequence(cell, scope, Const(g, x))
		return ReduceAllSum(Mul(out, Const(g, wy)))
	}
	be := backend.MustNew()
	if err := CheckGradient(be, store, loss, cfg.FD); err != nil {
		return err
	}
	// Every trainable variable must reach the outputs: CheckGradient skips unused ones.
	var vars []*model.Variable
	var used []bool
	grads, err := model.ExecOnceN(be, store, func(s *model.Scope, g *Graph) []*Node {
		rnn.LiveVariables(store, g)
		l := loss(s, g)
		vars, used = vars[:0], used[:0]
		var nodes []*Node
		for v := range store.RootScope().IterVariables() {
			if v.Trainable {
				vars = append(vars, v)
				used = append(used, v.InUseByGraph(g))
				nodes = append(nodes, v.NodeValue(g))
			}
		}
		return append([]*Node{l}, Gradient(l, nodes...)...)
	})
	if err != nil {
		return err
	}
	var errs []error
	for i, v := range vars {
		if !used[i] {
			errs = append(errs, fmt.Errorf("trainable variable %s is not used by the outputs", v.Path()))
			continue
		}
		if g := tensors.MustCopyFlatData[float64](grads[1+i]); !slices.ContainsFunc(g, func(x float64) bool { return x != 0 }) {
			errs = append(errs, fmt.Errorf("trainable variable %s has a zero gradient: it does not reach the outputs", v.Path()))
		}
	}
	return errors.Join(errs...)
}

func checkNodesPerStep(cfg Config, logf func(string, ...any)) error {
	if cfg.Budget.Forward <= 0 || cfg.Budget.Training <= 0 {
		return fmt.Errorf("Config.Budget = %+v: set both nodes per step", cfg.Budget)
	}
	cost, err := NodesPerStep(backend.MustNew(), cfg.New())
	if err != nil {
		return err
	}
	logf("%d nodes per step forward, %d with the gradient (budget %d and %d)", cost.Forward, cost.Training, cfg.Budget.Forward, cfg.Budget.Training)
	if cost.Forward > cfg.Budget.Forward || cost.Training > cfg.Budget.Training {
		return fmt.Errorf("%+v nodes per step, budget %+v", cost, cfg.Budget)
	}
	return nil
}

// steps returns steps [start, end) of x [batch, T, width] as a [batch, end−start, width] tensor.
func steps(x []float64, batch, T, width, start, end int) *tensors.Tensor {
	var out []float64
	for b := range batch {
		out = append(out, x[(b*T+start)*width:(b*T+end)*width]...)
	}
	return tensors.FromFlatDataAndDimensions(out, batch, end-start, width)
}

func checkChunking(cfg Config, _ func(string, ...any)) error {
	cell, store, scope, err := newCell(cfg, 6)
	if err != nil {
		return err
	}
	if _, ok := cell.(rnn.WholeSequence); ok {
		return fmt.Errorf("%w: %T reads its sequences backwards too (rnn.WholeSequence), and is never run in chunks", errSkip, cell)
	}
	const batch, T = 2, 5
	sz := cell.Sizes()
	xt := uniform(7, batch, T, sz.In)
	x := tensors.MustCopyFlatData[float64](xt)
	be := backend.MustNew()
	whole, err := model.ExecOnceN(be, store, func(_ *model.Scope, g *Graph) []*Node {
		rnn.LiveVariables(store, g)
		out, states := rnn.Sequence(cell, scope, Const(g, xt))
		step := cell.Build(scope, g)
		return []*Node{out, states, step.Initial(batch)}
	})
	if err != nil {
		return err
	}
	want := [2][]float64{tensors.MustCopyFlatData[float64](whole[0]), tensors.MustCopyFlatData[float64](whole[1])}
	exec, err := model.NewExec(be, store, func(_ *model.Scope, g *Graph, in []*Node) []*Node {
		rnn.LiveVariables(store, g)
		step := cell.Build(scope, g)
		states := rnn.Unroll(step, in[1], in[0])
		return []*Node{step.Readout(states), states}
	})
	if err != nil {
		return err
	}
	for _, chunk := range []int{1, 2, 3} {
		h := whole[2]
		for start := 0; start < T; start += chunk {
			end := min(start+chunk, T)
			res, err := exec.Call(h, steps(x, batch, T, sz.In, start, end))
			if err != nil {
				return fmt.Errorf("chunk %d, steps [%d, %d): %w", chunk, start, end, err)
			}
			for k, width := range []int{sz.Out, sz.State} {
				got := tensors.MustCopyFlatData[float64](res[k])
				exp := tensors.MustCopyFlatData[float64](steps(want[k], batch, T, width, start, end))
				for i := range exp {
					if !near(got[i], exp[i]) {
						b, t, j := i/((end-start)*width), start+(i/width)%(end-start), i%width
						return fmt.Errorf("chunks of %d steps: %s[b=%d, t=%d, %d] = %.17g, whole sequence %.17g",
							chunk, []string{"output", "state"}[k], b, t, j, got[i], exp[i])
					}
				}
			}
			// The next chunk starts from this chunk's last state, as in train.Runner.
			states := tensors.MustCopyFlatData[float64](res[1])
			var last []float64
			for b := range batch {
				i := (b*(end-start) + end - start - 1) * sz.State
				last = append(last, states[i:i+sz.State]...)
			}
			h = tensors.FromFlatDataAndDimensions(last, batch, sz.State)
		}
	}
	return nil
}

func checkStep(cfg Config, _ func(string, ...any)) error {
	if cfg.Step == nil {
		return fmt.Errorf("%w: no Config.Step", errSkip)
	}
	cell, store, scope, err := newCell(cfg, 8)
	if err != nil {
		return err
	}
	vars := map[string][]float64{}
	for v := range scope.IterVariables() {
		vars[v.Name()] = values(v)
	}
	const batch, T = 2, 3
	sz := cell.Sizes()
	xt := uniform(9, batch, T, sz.In)
	x := tensors.MustCopyFlatData[float64](xt)
	res, err := model.ExecOnceN(backend.MustNew(), store, func(_ *model.Scope, g *Graph) []*Node {
		rnn.LiveVariables(store, g)
		out, states := rnn.Sequence(cell, scope, Const(g, xt))
		return []*Node{out, states}
	})
	if err != nil {
		return err
	}
	out, states := tensors.MustCopyFlatData[float64](res[0]), tensors.MustCopyFlatData[float64](res[1])
	var errs []error
	for b := range batch {
		h := make([]float64, sz.State)
		if cfg.Initial != nil {
			h = cfg.Initial(cell, vars)
		}
		for t := range T {
			next, y := cfg.Step(cell, vars, h, x[(b*T+t)*sz.In:(b*T+t+1)*sz.In])
			if len(next) != sz.State || len(y) != sz.Out {
				return fmt.Errorf("Config.Step returned %d state and %d output values, want %d and %d", len(next), len(y), sz.State, sz.Out)
			}
			for j, want := range next {
				if got := states[(b*T+t)*sz.State+j]; !near(got, want) {
					errs = append(errs, fmt.Errorf("state[b=%d, t=%d, %d] = %.17g, by hand %.17g", b, t, j, got, want))
				}
			}
			for k, want := range y {
				if got := out[(b*T+t)*sz.Out+k]; !near(got, want) {
					errs = append(errs, fmt.Errorf("output[b=%d, t=%d, %d] = %.17g, by hand %.17g", b, t, k, got, want))
				}
			}
			if len(errs) >= 8 {
				return errors.Join(append(errs, errors.New("(more differences not shown)"))...)
			}
			h = next
		}
	}
	return errors.Join(errs...)
}
