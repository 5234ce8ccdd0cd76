// Package backend returns the GoMLX compute backend this project runs on.
//
// The pure-Go backend ("go", github.com/gomlx/compute/gobackend) is the default: it
// needs no plugin and no network. XLA is chosen with the environment variable
// GOMLX_BACKEND, as in GoMLX itself:
//
//	GOMLX_BACKEND=go        pure Go (the default when unset or empty; its worker pool unlimited, newGo)
//	GOMLX_BACKEND=xla:cpu   XLA through a PJRT CPU plugin
//	GOMLX_BACKEND=xla:cuda  XLA through a PJRT CUDA plugin
//
// Unlike GoMLX's backends/default, New never downloads a plugin: when XLA is asked for
// and no plugin is installed, it returns an error that says where plugins were searched
// and how to install one.
package backend

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/go-xla/compute/xla"
	"github.com/gomlx/go-xla/pjrt"
)

// EnvVar is the environment variable that selects the backend (GoMLX's own).
const EnvVar = compute.ConfigEnvVar

// Default is the configuration used when GOMLX_BACKEND is unset or empty.
const Default = gobackend.BackendName

func init() {
	// Never let the XLA backend reach the network: plugins are installed explicitly.
	xla.EnableAutoInstall(false)
}

var (
	mu     sync.Mutex
	cached = map[string]compute.Backend{}
)

// New returns the backend selected by $GOMLX_BACKEND (the pure-Go backend when unset).
// Backends are cached per configuration: the same process shares one.
func New() (compute.Backend, error) {
	return NewWithConfig(os.Getenv(EnvVar))
}

// MustNew is New that panics on error, for notebooks and tests.
func MustNew() compute.Backend {
	b, err := New()
	if err != nil {
		panic(err)
	}
	return b
}

// NewWithConfig returns the backend for config, formatted "<name>[:<options>]" as
// GOMLX_BACKEND: "go", "xla:cpu" or "xla:cuda" (other xla plugin names and options are
// passed to go-xla unchanged).
func NewWithConfig(config string) (compute.Backend, error) {
	config = strings.TrimSpace(config)
	if config == "" {
		config = Default
	}
	mu.Lock()
	defer mu.Unlock()
	if b, ok := cached[config]; ok {
		return b, nil
	}
	name, opts, _ := strings.Cut(config, ":")
	var (
		b   compute.Backend
		err error
	)
	switch name {
	case gobackend.BackendName:
		b, err = newGo(opts)
	case xla.BackendName, "stablehlo", "hlo", "pjrt":
		b, err = newXLA(config, opts)
	default:
		err = fmt.Errorf("backend: %s=%q: unknown backend %q, want \"go\" (default), \"xla:cpu\" or \"xla:cuda\"", EnvVar, config, name)
	}
	if err != nil {
		return nil, err
	}
	cached[config] = b
	return b, nil
}

// newGo returns the pure-Go backend with its options, its worker pool unlimited unless the
// options set "parallelism". The backend's default pool of 2×GOMAXPROCS workers is filled by its
// graph executors, idle while a large matrix product runs, so that the product's own workers
// (the pool's Saturate) do not start and it runs on one core; unlimited, the product uses
// every core. The results are the same bit for bit (the product splits its rows and columns
// among workers, never a sum): TestGoParallelismSameNumbers. The steps it speeds up and by how
// much are in docs/bench.txt. The option is set through the backend's Workers pool rather than
// its "parallelism=-1" option, which prints a line to standard output, into every notebook cell
// and every command's output.
func newGo(opts string) (compute.Backend, error) {
	b, err := gobackend.New(opts)
	if err != nil || strings.Contains(opts, "parallelism") {
		return b, err
	}
	workers := reflect.ValueOf(b).Elem().FieldByName("Workers")
	if !workers.IsValid() || workers.Kind() != reflect.Pointer || workers.IsNil() {
		return nil, fmt.Errorf("backend: the Go backend %T has no Workers pool to unlimit; set %s=go:parallelism=-1 instead", b, EnvVar)
	}
	set := workers.MethodByName("SetMaxParallelism")
	if !set.IsValid() {
		return nil, fmt.Errorf("backend: the Go backend's Workers pool %s has no SetMaxParallelism; set %s=go:parallelism=-1 instead", workers.Type(), EnvVar)
	}
	set.Call([]reflect.Value{reflect.ValueOf(-1)})
	return b, nil
}

// PluginSearchPaths are the directories where go-xla looks for PJRT plugins:
// $PJRT_PLUGIN_LIBRARY_PATH if set, else ~/.local/lib/go-xla, /usr/local/lib/go-xla
// and the system library directories.
func PluginSearchPaths() []string {
	if p := os.Getenv(pjrt.PJRTPluginPathsEnv); p != "" {
		return strings.Split(p, ":")
	}
	home, _ := os.UserHomeDir()
	return []string{home + "/.local/lib/go-xla", "/usr/local/lib/go-xla", "(system library paths: LD_LIBRARY_PATH, /etc/ld.so.conf)"}
}

func newXLA(config, opts string) (compute.Backend, error) {
	plugin, _, _ := strings.Cut(opts, ",")
	if plugin == "" {
		plugin = "cpu"
	}
	found := pjrt.AvailablePlugins()
	names := make([]string, 0, len(found))
	for n := range found {
		names = append(names, n)
	}
	sort.Strings(names)
	has := false
	for _, n := range names {
		if n == plugin || strings.HasPrefix(n, plugin+"_") || strings.HasPrefix(n, plugin+"-") {
			has = true
		}
	}
	if !has {
		return nil, fmt.Errorf("backend: %s=%q asks for XLA with the PJRT plugin %q, which is not installed "+
			"(plugins found: %v; searched %s).\n"+
			"To install it, on a machine with internet run `go run ./cmd/pjrtinstall` in this project "+
			"(installs into ~/.local/lib/go-xla; the Docker image does this), or copy pjrt_c_api_%s_plugin.so into a directory and set %s to it; "+
			"or unset %s to use the pure-Go backend",
			EnvVar, config, plugin, names, strings.Join(PluginSearchPaths(), ", "), plugin, pjrt.PJRTPluginPathsEnv, EnvVar)
	}
	return xla.New(opts)
}
