package train

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/hessianfree"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// TestHessianFreeLowersLoss trains a tanh RNN on the multiplication problem at T = 10 by
// Hessian-free steps with structural damping: the held-out loss falls below half the
// memoryless baseline.
func TestHessianFreeLowersLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("30 Hessian-free steps")
	}
	task := tasks.Multiplication{T: 10}
	tr, err := New(backend.MustNew(), rnn.NewTanh(2, 8, 1), task, Config{Steps: 30, Batch: 100, Seed: 1, EvalEvery: 5,
		HessianFree: hessianfree.Settings{CGIters: 30, StructuralDamping: 0.3}})
	if err != nil {
		t.Fatal(err)
	}
	before, _, err := tr.Evaluate()
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	after := tr.Log[len(tr.Log)-1].EvalLoss
	t.Logf("multiplication T=10, tanh RNN 8, 30 HF steps: held-out MSE %.4f → %.4f (baseline %.4f), λ = %.3g",
		before, after, task.Baseline(), tr.hf.Lambda())
	if !(after < 0.5*task.Baseline()) {
		t.Errorf("held-out MSE after 30 steps = %.4f, want < half the baseline %.4f", after, task.Baseline())
	}
}

// TestHessianFreeResume checks that a run interrupted and resumed from its checkpoint (λ and
// the previous step, CG's warm start, in variables) logs what an uninterrupted one does.
func TestHessianFreeResume(t *testing.T) {
	task := tasks.XOR{T: 6}
	hf := hessianfree.Settings{CGIters: 8, StructuralDamping: 0.5}
	cfg, dir := Config{Steps: 6, Batch: 10, Seed: 3, EvalEvery: 2, HessianFree: hf}, t.TempDir()
	cell := func() rnn.Cell { return rnn.NewTanh(2, 5, 2) }
	whole, err := New(backend.MustNew(), cell(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := whole.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	first, err := newIn(dir, cell(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := first.Run(ctx, func(r Record) {
		if r.Step == 3 {
			cancel()
		}
	}); err != context.Canceled {
		t.Fatalf("interrupted Run returned %v, want context.Canceled", err)
	}
	second, err := newIn(dir, cell(), task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := second.Resume(); err != nil || !ok || second.Step != 3 {
		t.Fatalf("Resume = %v, %v at step %d; want a checkpoint at step 3", ok, err, second.Step)
	}
	if second.hf.Lambda() == 1 || second.hf.Lambda() != first.hf.Lambda() {
		t.Errorf("resumed λ = %g, interrupted run's %g (start 1)", second.hf.Lambda(), first.hf.Lambda())
	}
	if err := second.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for i := range whole.Log {
		a, b := whole.Log[i], second.Log[i]
		if a.Loss != b.Loss || a.GradNorm != b.GradNorm || !(a.EvalLoss == b.EvalLoss || math.IsNaN(a.EvalLoss) && math.IsNaN(b.EvalLoss)) {
			t.Errorf("step %d: resumed %+v, uninterrupted %+v", a.Step, b, a)
		}
	}
	if whole.hf.Lambda() != second.hf.Lambda() {
		t.Errorf("final λ: resumed %g, uninterrupted %g", second.hf.Lambda(), whole.hf.Lambda())
	}
}

// TestHessianFreeRefuses checks the settings Hessian-free does not go with.
func TestHessianFreeRefuses(t *testing.T) {
	hf := hessianfree.Settings{CGIters: 5}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"chunk", Config{Steps: 1, Chunk: 3, HessianFree: hf}, "Chunk = 3"},
		{"scale", Config{Steps: 1, ScaleHiddenGrad: true, HessianFree: hf}, "ScaleHiddenGrad"},
		{"adamw", Config{Steps: 1, AdamW: AdamW{LR: 1e-3}, HessianFree: hf}, "AdamW"},
		{"iters", Config{Steps: 1, HessianFree: hessianfree.Settings{CGIters: -1}}, "CGIters = -1"},
		{"warm", Config{Steps: 1, HessianFree: hessianfree.Settings{CGIters: 5, WarmStart: 1.5}}, "WarmStart = 1.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(backend.MustNew(), rnn.NewTanh(2, 3, 1), tasks.Adding{T: 6}, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}
