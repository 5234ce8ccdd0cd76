package seq_test

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

func TestChunks(t *testing.T) {
	for _, tc := range []struct {
		L, c int
		want [][2]int
	}{
		{5, 0, [][2]int{{0, 5}}},
		{5, 5, [][2]int{{0, 5}}},
		{5, 9, [][2]int{{0, 5}}},
		{5, 2, [][2]int{{0, 2}, {2, 4}, {4, 5}}},
		{6, 3, [][2]int{{0, 3}, {3, 6}}},
		{3, 1, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
	} {
		if got := seq.Chunks(tc.L, tc.c); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Chunks(%d, %d) = %v, want %v", tc.L, tc.c, got, tc.want)
		}
	}
}

// TestChunkTensors checks that the chunks of a batch, put side by side along the time
// axis, are the batch's own tensors (classification), and the regression targets.
func TestChunkTensors(t *testing.T) {
	b, err := tasks.Copy{T: 3, Recall: 2, Symbols: 3}.Sample(rand.New(rand.NewPCG(1, 1)), 2)
	if err != nil {
		t.Fatal(err)
	}
	x, y, m := b.Tensors()
	wantX, wantY, wantM := tensors.MustCopyFlatData[float32](x), tensors.MustCopyFlatData[int32](y), tensors.MustCopyFlatData[float32](m)
	var gotX, gotM []float64
	var gotY []int32
	for i := range b.Size {
		for _, c := range seq.Chunks(b.Len, 3) {
			cx, cy, cm := seq.ChunkTensors(b, c[0], c[1], dtypes.Float64)
			C := c[1] - c[0]
			if dims := cx.Shape().Dimensions; !reflect.DeepEqual(dims, []int{b.Size, C, b.NumIn}) {
				t.Fatalf("x of steps %v: dims %v", c, dims)
			}
			gotX = append(gotX, tensors.MustCopyFlatData[float64](cx)[i*C*b.NumIn:(i+1)*C*b.NumIn]...)
			gotY = append(gotY, tensors.MustCopyFlatData[int32](cy)[i*C:(i+1)*C]...)
			gotM = append(gotM, tensors.MustCopyFlatData[float64](cm)[i*C:(i+1)*C]...)
		}
	}
	for j := range wantX {
		if gotX[j] != float64(wantX[j]) {
			t.Fatalf("x[%d] = %g, want %g", j, gotX[j], wantX[j])
		}
	}
	for j := range wantM {
		if gotY[j] != wantY[j] || gotM[j] != float64(wantM[j]) {
			t.Fatalf("step %d: target %d, mask %g, want %d, %g", j, gotY[j], gotM[j], wantY[j], wantM[j])
		}
	}
	if got, want := seq.Masked(b), float64(len(wantM)); got > want || got < 1 {
		t.Errorf("Masked = %g, want 1..%g", got, want)
	}
	a, err := tasks.Adding{T: 4}.Sample(rand.New(rand.NewPCG(1, 1)), 3)
	if err != nil {
		t.Fatal(err)
	}
	_, ay, _ := seq.ChunkTensors(a, 1, 3, dtypes.Float32)
	if got := tensors.MustCopyFlatData[float32](ay); !reflect.DeepEqual(got, a.Y) {
		t.Errorf("adding targets %v, want %v", got, a.Y)
	}
}

// TestLastStepTensors checks LastStepOnly on the tasks (adding: yes; copy: no, nor a mask
// with one earlier step set) and that LastStepTensors gives the last column of the chunk's
// labels and mask.
func TestLastStepTensors(t *testing.T) {
	a, err := tasks.Adding{T: 5}.Sample(rand.New(rand.NewPCG(1, 1)), 3)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tasks.Copy{T: 3, Recall: 2, Symbols: 3}.Sample(rand.New(rand.NewPCG(1, 1)), 2)
	if err != nil {
		t.Fatal(err)
	}
	if !seq.LastStepOnly(a) || seq.LastStepOnly(c) {
		t.Errorf("LastStepOnly: adding %v, copy %v; want true, false", seq.LastStepOnly(a), seq.LastStepOnly(c))
	}
	for i := range c.Mask {
		c.Mask[i] = 0
	}
	for i := range c.Size {
		c.Mask[(i+1)*c.Len-1] = 1
	}
	if !seq.LastStepOnly(c) {
		t.Errorf("LastStepOnly = false for a copy batch masked at its last step only")
	}
	_, cy, cm := seq.ChunkTensors(c, 3, 7, dtypes.Float64) // the last chunk of 4, where the mask is 1
	ly, lm := seq.LastStepTensors(c, 7, dtypes.Float64)
	if !reflect.DeepEqual(ly.Shape().Dimensions, []int{c.Size, 1}) || !reflect.DeepEqual(lm.Shape().Dimensions, []int{c.Size, 1}) {
		t.Fatalf("LastStepTensors dims %v, %v; want [%d 1]", ly.Shape().Dimensions, lm.Shape().Dimensions, c.Size)
	}
	ys, ms := tensors.MustCopyFlatData[int32](cy), tensors.MustCopyFlatData[float64](cm)
	for i, y := range tensors.MustCopyFlatData[int32](ly) {
		if m := tensors.MustCopyFlatData[float64](lm)[i]; y != ys[i*4+3] || m != ms[i*4+3] {
			t.Errorf("row %d: last step label %d, mask %g; the chunk's last column holds %d, %g", i, y, m, ys[i*4+3], ms[i*4+3])
		}
	}
	c.Mask[1] = 1
	if seq.LastStepOnly(c) {
		t.Errorf("LastStepOnly = true with step 1 of row 0 masked")
	}
}

// TestWalker checks that the final state and ∂ℒ/∂h_0 do not depend on the chunk length,
// and the walker's errors.
func TestWalker(t *testing.T) {
	cell := &rnn.Simple{In: 5, N: 4, Out: 4, Type: dtypes.Float64}
	scope := model.NewStore().Scope("/model")
	if err := cell.Init(scope, rand.New(rand.NewPCG(2, 1))); err != nil {
		t.Fatal(err)
	}
	b, err := tasks.Copy{T: 3, Recall: 2, Symbols: 3}.Sample(rand.New(rand.NewPCG(2, 2)), 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	walk := func(chunk int) (h, g0 []float64) {
		w, err := seq.NewWalker(backend.MustNew(), scope, cell, chunk, seq.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		hT, err := w.Forward(ctx, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, _, err := w.Backward(ctx, b, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return tensors.MustCopyFlatData[float64](hT), tensors.MustCopyFlatData[float64](g)
	}
	h, g0 := walk(0)
	for _, chunk := range []int{1, 3, b.Len - 1} {
		hc, gc := walk(chunk)
		for i := range h {
			if math.Abs(hc[i]-h[i]) > 1e-13 || math.Abs(gc[i]-g0[i]) > 1e-13*(1+math.Abs(g0[i])) {
				t.Fatalf("chunk %d: h_L[%d] = %.15g, ∂ℒ/∂h_0[%d] = %.15g; whole sequence %.15g, %.15g", chunk, i, hc[i], i, gc[i], h[i], g0[i])
			}
		}
	}

	if _, err := seq.NewWalker(backend.MustNew(), scope, cell, -1, seq.Hooks{}); err == nil {
		t.Error("NewWalker with chunk -1: no error")
	}
	w, err := seq.NewWalker(backend.MustNew(), scope, cell, 2, seq.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	zero := *b
	zero.Mask = make([]float32, len(b.Mask))
	if _, _, err := w.Backward(ctx, &zero, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "all-zero mask") {
		t.Errorf("Backward on an all-zero mask: error %v", err)
	}
	wide, err := tasks.Copy{T: 3, Recall: 2, Symbols: 4}.Sample(rand.New(rand.NewPCG(2, 2)), 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Forward(ctx, wide, nil); err == nil || !strings.Contains(err.Error(), "inputs per step") {
		t.Errorf("Forward on a batch of %d inputs per step, cell of %d: error %v", wide.NumIn, cell.In, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.Forward(cancelled, b, nil); err != context.Canceled {
		t.Errorf("Forward with a cancelled context: error %v, want %v", err, context.Canceled)
	}
}
