package backend

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

func TestDefaultIsGo(t *testing.T) {
	t.Setenv(EnvVar, "")
	b, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Name(); got != "Go Backend" {
		t.Errorf("New() with %s unset: backend %q, want \"Go Backend\"", EnvVar, got)
	}
}

func TestXLAWithoutPluginNamesTheFix(t *testing.T) {
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir()) // an empty directory: no plugin anywhere
	for _, config := range []string{"xla:cpu", "xla:cuda"} {
		t.Run(config, func(t *testing.T) {
			t.Setenv(EnvVar, config)
			_, err := New()
			if err == nil {
				t.Fatalf("New() with %s=%s and no plugin: got no error", EnvVar, config)
			}
			plugin := strings.TrimPrefix(config, "xla:")
			for _, want := range []string{config, "plugin \"" + plugin + "\"", "PJRT_PLUGIN_LIBRARY_PATH", "cmd/pjrtinstall", "pjrt_c_api_" + plugin + "_plugin.so"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestUnknownBackend(t *testing.T) {
	_, err := NewWithConfig("tpu9")
	if err == nil || !strings.Contains(err.Error(), `"tpu9"`) || !strings.Contains(err.Error(), "xla:cpu") {
		t.Errorf("NewWithConfig(\"tpu9\"): error %v, want one naming \"tpu9\" and the accepted values", err)
	}
}

// TestGoParallelismSameNumbers checks that the default Go backend's pool is unlimited (newGo)
// and that a matrix product large enough to be split among workers gives, bit for bit, the
// numbers of one worker.
func TestGoParallelismSameNumbers(t *testing.T) {
	unlimited, err := NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	if d := unlimited.Description(); !strings.Contains(d, "parallelism=-1") {
		t.Errorf("default Go backend: %q, want its pool unlimited (parallelism=-1)", d)
	}
	one, err := NewWithConfig("go:parallelism=1")
	if err != nil {
		t.Fatal(err)
	}
	const m, k, n = 300, 257, 130
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(math.Sin(float64(i)))
	}
	for i := range b {
		b[i] = float32(math.Cos(float64(3 * i)))
	}
	product := func(be compute.Backend) [][]float32 {
		out := graph.MustExecOnce(be, graph.MatMul, tensors.FromFlatDataAndDimensions(a, m, k), tensors.FromFlatDataAndDimensions(b, k, n))
		return out.Value().([][]float32)
	}
	got, want := product(unlimited), product(one)
	for i := range want {
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("row %d column %d: %v with the pool unlimited, %v with one worker", i, j, got[i][j], want[i][j])
			}
		}
	}
}
