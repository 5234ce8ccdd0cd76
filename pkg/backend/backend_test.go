package backend

import (
	"strings"
	"testing"
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
