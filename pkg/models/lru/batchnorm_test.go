package lru_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/lru"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// values returns the values of the variable name under scope.
func values(t *testing.T, scope *model.Scope, name string) []float64 {
	t.Helper()
	v := scope.GetVariable(name)
	if v == nil {
		t.Fatalf("no variable %s/%s", scope.Scope(), name)
	}
	return tensors.MustCopyFlatData[float64](v.MustValue())
}

// setValues sets the variable name under scope to x, of its shape.
func setValues(t *testing.T, scope *model.Scope, name string, x []float64) {
	t.Helper()
	v := scope.GetVariable(name)
	if err := v.SetValue(tensors.FromFlatDataAndDimensions(x, v.Shape().Dimensions...)); err != nil {
		t.Fatal(err)
	}
}

// TestBatchNormStatistics checks a BatchNorm block in a pass with its noise key on: it
// normalises by the mean μ and the biased variance σ² of e = u E + b_e over the batch and the
// steps (its outputs are those of the block at evaluation with μ and σ² as bn_mean and bn_var);
// it leaves bn_mean and bn_var as they are with the momentum m at 1, and moves them to
// m μ̄ + (1 − m) μ and m σ̄² + (1 − m) σ² otherwise. At evaluation its filter, its scan and its
// steps agree, by bn_mean and bn_var.
func TestBatchNormStatistics(t *testing.T) {
	const B, T, In, H = 3, 7, 2, 4
	b := &lru.Block{In: In, H: H, N: 3, Out: 2, Type: dtypes.Float64, BatchNorm: true}
	store := model.NewStore()
	scope := store.RootScope()
	if err := b.Init(scope, rand.New(rand.NewPCG(3, 1))); err != nil {
		t.Fatal(err)
	}
	p := rnn.RandomizeVariables(scope, rand.New(rand.NewPCG(3, 2)), -0.5, 0.5)
	u := rnn.Uniform(rand.New(rand.NewPCG(3, 3)), B*T*In, 0, 1)
	// path computes the outputs by the block's filter (0), by its scan's states and Readout (1)
	// or step by step (2), each in a graph of its own.
	path := func(k int) []float64 {
		out, err := model.ExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
			rnn.LiveVariables(store, g)
			st := b.Build(scope, g)
			x := Const(g, tensors.FromFlatDataAndDimensions(u, B, T, In))
			switch k {
			case 1:
				return st.Readout(st.(rnn.Sequencer).States(st.Initial(B), x))
			case 2:
				return st.Readout(rnn.Unroll(st, x, nil))
			}
			y, _ := st.(rnn.Filter).Filter(st.Initial(B), x)
			return y
		})
		if err != nil {
			t.Fatal(err)
		}
		return tensors.MustCopyFlatData[float64](out)
	}
	filter := func() []float64 { return path(0) }
	// μ and σ² of e in Go.
	mean, variance := make([]float64, H), make([]float64, H)
	e := make([]float64, B*T*H)
	for r := range B * T {
		for k := range H {
			x := p["be"][k]
			for i := range In {
				x += u[r*In+i] * p["E"][i*H+k]
			}
			e[r*H+k] = x
			mean[k] += x / (B * T)
		}
	}
	for r := range B * T {
		for k := range H {
			variance[k] += (e[r*H+k] - mean[k]) * (e[r*H+k] - mean[k]) / (B * T)
		}
	}

	if _, err := rnn.SetNoise(scope, 12345); err != nil {
		t.Fatal(err)
	}
	trained := filter()
	if m, v := values(t, scope, "bn_mean"), values(t, scope, "bn_var"); m[0] != 0 || v[0] != 1 {
		t.Errorf("a pass at momentum 1 moved bn_mean[0], bn_var[0] from 0, 1 to %g, %g", m[0], v[0])
	}
	if _, err := rnn.SetMomentum(scope, 0.25); err != nil {
		t.Fatal(err)
	}
	filter()
	for k := range H {
		gm, gv := values(t, scope, "bn_mean")[k], values(t, scope, "bn_var")[k]
		wm, wv := 0.75*mean[k], 0.25+0.75*variance[k]
		if math.Abs(gm-wm) > 1e-14 || math.Abs(gv-wv) > 1e-14 {
			t.Errorf("feature %d after a pass at momentum 0.25: bn_mean, bn_var = %.17g, %.17g; want %.17g, %.17g", k, gm, gv, wm, wv)
		}
	}
	if _, err := rnn.SetMomentum(scope, 1); err != nil {
		t.Fatal(err)
	}
	if scanned := path(1); math.Abs(scanned[0]-trained[0]) > 1e-12 {
		t.Errorf("training pass, output 0: filter %.17g, states %.17g", trained[0], scanned[0])
	}
	// At evaluation the three paths agree, by the running averages: not the batch's statistics.
	if _, err := rnn.SetNoise(scope, 0); err != nil {
		t.Fatal(err)
	}
	running := [][]float64{values(t, scope, "bn_mean"), values(t, scope, "bn_var")}
	outs := [][]float64{path(0), path(1), path(2)}
	for i := range outs[0] {
		if math.Abs(outs[1][i]-outs[0][i]) > 1e-12 || math.Abs(outs[2][i]-outs[0][i]) > 1e-12 {
			t.Fatalf("evaluation, output %d: filter %.17g, states %.17g, steps %.17g", i, outs[0][i], outs[1][i], outs[2][i])
		}
	}
	if math.Abs(outs[0][0]-trained[0]) < 1e-6 {
		t.Errorf("evaluation by the running averages gave the training pass's output %.17g", trained[0])
	}
	for k, name := range []string{"bn_mean", "bn_var"} {
		if got := values(t, scope, name); fmt.Sprint(got) != fmt.Sprint(running[k]) {
			t.Errorf("evaluations moved %s from %v to %v", name, running[k], got)
		}
	}
	// At evaluation with μ and σ² as the running averages: the training pass's outputs.
	setValues(t, scope, "bn_mean", mean)
	setValues(t, scope, "bn_var", variance)
	evaluated := filter()
	for i := range trained {
		if math.Abs(trained[i]-evaluated[i]) > 1e-12 {
			t.Fatalf("output %d: training pass %.17g, evaluation with its statistics %.17g", i, trained[i], evaluated[i])
		}
	}
}

// TestBatchNormGradient checks a stack of two BatchNorm blocks in the training pass: its
// filter and its scan (States, then Readout) give the same outputs and gradients, and the
// gradient, which flows through the batch statistics, matches central finite differences.
func TestBatchNormGradient(t *testing.T) {
	const B, T = 2, 9
	deep := stack.New(
		&lru.Block{In: 3, H: 4, N: 3, Out: 4, Type: dtypes.Float64, BatchNorm: true},
		&lru.Block{In: 4, H: 4, N: 3, Out: 2, Type: dtypes.Float64, BatchNorm: true})
	store := model.NewStore()
	scope := store.RootScope()
	if err := deep.Init(scope, rand.New(rand.NewPCG(5, 1))); err != nil {
		t.Fatal(err)
	}
	rnn.RandomizeVariables(scope, rand.New(rand.NewPCG(5, 2)), -0.5, 0.5)
	if _, err := rnn.SetNoise(scope, 99); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 3))
	x := tensors.FromFlatDataAndDimensions(rnn.Uniform(rng, B*T*3, -1, 1), B, T, 3)
	w := tensors.FromFlatDataAndDimensions(rnn.Uniform(rng, B*T*2, -1, 1), B, T, 2)
	var vars []*model.Variable
	for v := range scope.IterVariables() {
		if v.Trainable {
			vars = append(vars, v)
		}
	}
	// loss is Σ w ⊙ outputs, by the filter (scan false) or by the states.
	loss := func(g *Graph, scan bool) *Node {
		st := deep.Build(scope, g)
		u := Const(g, x)
		var y *Node
		if scan {
			y = st.Readout(st.(rnn.Sequencer).States(st.Initial(B), u))
		} else {
			y, _ = st.(rnn.Filter).Filter(st.Initial(B), u)
		}
		return ReduceAllSum(Mul(y, Const(g, w)))
	}
	res, err := model.ExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
		rnn.LiveVariables(store, g)
		nodes := make([]*Node, len(vars))
		for i, v := range vars {
			nodes[i] = v.NodeValue(g)
		}
		filtered, scanned := loss(g, false), loss(g, true)
		return append(append([]*Node{filtered, scanned}, Gradient(filtered, nodes...)...), Gradient(scanned, nodes...)...)
	})
	if err != nil {
		t.Fatal(err)
	}
	if f, s := res[0].Value().(float64), res[1].Value().(float64); math.Abs(f-s) > 1e-12*max(1, math.Abs(f)) {
		t.Errorf("training loss: filter %.17g, states %.17g", f, s)
	}
	lossExec, err := model.NewExec(backend.MustNew(), store, func(_ *model.Scope, g *Graph) *Node {
		rnn.LiveVariables(store, g)
		return loss(g, false)
	})
	if err != nil {
		t.Fatal(err)
	}
	at := func() float64 { return lossExec.MustCall1().Value().(float64) }
	const h = 1e-6
	for i, v := range vars {
		grad, scanGrad := tensors.MustCopyFlatData[float64](res[2+i]), tensors.MustCopyFlatData[float64](res[2+len(vars)+i])
		x := tensors.MustCopyFlatData[float64](v.MustValue())
		for j := range x {
			if math.Abs(grad[j]-scanGrad[j]) > 1e-10*max(1, math.Abs(grad[j])) {
				t.Errorf("∂/∂%s[%d]: filter %.12g, states %.12g", v.Path(), j, grad[j], scanGrad[j])
			}
			old := x[j]
			x[j] = old + h
			v.MustSetValue(tensors.FromFlatDataAndDimensions(x, v.Shape().Dimensions...))
			up := at()
			x[j] = old - h
			v.MustSetValue(tensors.FromFlatDataAndDimensions(x, v.Shape().Dimensions...))
			down := at()
			x[j] = old
			v.MustSetValue(tensors.FromFlatDataAndDimensions(x, v.Shape().Dimensions...))
			if fd := (up - down) / (2 * h); math.Abs(fd-grad[j]) > 1e-6*max(1, math.Abs(fd)) {
				t.Errorf("∂/∂%s[%d] = %.10g, finite differences %.10g", v.Path(), j, grad[j], fd)
			}
		}
	}
}

// TestBatchNormTraining checks that the trainer refuses a BatchNorm block outside the scan of
// the whole sequence; that an evaluation sets the first block's bn_mean to the mean of those of
// its StatisticsBatches encoded batches under the current weights, and another evaluation
// gives the same loss and statistics; that a run with one resumed from its checkpoint gives
// the same log, held-out losses included; and that a step that diverges leaves the statistics
// as they were.
func TestBatchNormTraining(t *testing.T) {
	task := tasks.Adding{T: 12}
	cell := func() rnn.Cell {
		return stack.New(&lru.Block{In: 2, H: 4, N: 3, Out: 4, BatchNorm: true}, &lru.Block{In: 4, H: 4, N: 3, Out: 1, BatchNorm: true})
	}
	for _, cfg := range []train.Config{{Steps: 4, Batch: 4}, {Steps: 4, Batch: 4, Scan: true, Chunk: 5}} {
		_, err := train.New(backend.MustNew(), cell(), task, cfg)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("got Scan %t, Chunk %d", cfg.Scan, cfg.Chunk)) {
			t.Errorf("train.New with Scan %t, Chunk %d: %v; want an error naming them", cfg.Scan, cfg.Chunk, err)
		}
	}
	cfg := train.Config{Steps: 6, Batch: 4, Seed: 2, Scan: true, EvalEvery: 1, CheckpointEvery: 3, AdamW: train.AdamW{LR: 1e-2}}

	one, err := train.New(backend.MustNew(), cell(), task, train.Config{Steps: 1, Batch: 4, Seed: 2, Scan: true, AdamW: cfg.AdamW})
	if err != nil {
		t.Fatal(err)
	}
	first32 := func(name string) []float32 {
		return tensors.MustCopyFlatData[float32](one.Store.Scope(train.ModelScope).At("layer0").GetVariable(name).MustValue())
	}
	if err := one.Run(context.Background(), nil); err != nil { // one step and its evaluation
		t.Fatal(err)
	}
	E, be, got := first32("E"), first32("be"), first32("bn_mean")
	for k := range 4 {
		var mu float64
		for j := range train.StatisticsBatches {
			batch, err := one.StatisticsBatch(j)
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			for r := range batch.Size * batch.Len {
				sum += float64(batch.X[2*r]*E[k] + batch.X[2*r+1]*E[4+k] + be[k])
			}
			mu += sum / float64(batch.Size*batch.Len) / train.StatisticsBatches
		}
		if math.Abs(float64(got[k])-mu) > 1e-5*max(1e-3, math.Abs(mu)) {
			t.Errorf("first block's bn_mean[%d] after an evaluation = %g, want the mean over the statistics batches %g", k, got[k], mu)
		}
	}
	again, _, err := one.Evaluate()
	if err != nil {
		t.Fatal(err)
	}
	if last := one.Log[len(one.Log)-1].EvalLoss; again != last {
		t.Errorf("a second evaluation gave %.17g, the first %.17g", again, last)
	}
	if after := first32("bn_mean"); fmt.Sprint(after) != fmt.Sprint(got) {
		t.Errorf("a second evaluation moved bn_mean from %v to %v", got, after)
	}

	whole, err := train.New(backend.MustNew(), cell(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := whole.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, err := train.New(backend.MustNew(), cell(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	first.CheckpointDir = dir
	ctx, cancel := context.WithCancel(context.Background())
	if err := first.Run(ctx, func(r train.Record) {
		if r.Step == 2 {
			cancel()
		}
	}); err != context.Canceled {
		t.Fatalf("interrupted Run returned %v, want context.Canceled", err)
	}
	second, err := train.New(backend.MustNew(), cell(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	second.CheckpointDir = dir
	if ok, err := second.Resume(); err != nil || !ok || second.Step != 2 {
		t.Fatalf("Resume = %v, %v at step %d; want the checkpoint of step 2", ok, err, second.Step)
	}
	if err := second.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for i, a := range whole.Log {
		b := second.Log[i]
		if a.Loss != b.Loss || a.GradNorm != b.GradNorm || a.EvalLoss != b.EvalLoss {
			t.Errorf("step %d: resumed %+v, uninterrupted %+v", a.Step, b, a)
		}
	}

	// A NaN in E: the step diverges, and the running averages stay as they were.
	scope := second.Store.Scope(train.ModelScope).At("layer0")
	before := fmt.Sprint(tensors.MustCopyFlatData[float32](scope.GetVariable("bn_mean").MustValue()))
	bad := tensors.MustCopyFlatData[float32](scope.GetVariable("E").MustValue())
	bad[0] = float32(math.NaN())
	scope.GetVariable("E").MustSetValue(tensors.FromFlatDataAndDimensions(bad, 2, 4))
	second.Config.Steps++
	if err := second.Run(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("a step from a NaN weight: %v, want an error naming the NaN", err)
	}
	if after := fmt.Sprint(tensors.MustCopyFlatData[float32](scope.GetVariable("bn_mean").MustValue())); after != before {
		t.Errorf("a diverged step moved bn_mean from %s to %s", before, after)
	}
}
