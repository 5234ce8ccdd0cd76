// Command pjrtinstall installs the PJRT plugins that the XLA backend (GOMLX_BACKEND=xla:cpu or
// xla:cuda) loads: the CPU plugin always, the CUDA plugin when an NVIDIA GPU is present.
// It needs internet access (GitHub for CPU, PyPI for CUDA) and installs into
// ~/.local/lib/go-xla, or into <dir>/go-xla with -dir <dir>. It uses go-xla's installer at
// the version pinned in go.mod, so the plugin matches the binding.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gomlx/go-xla/installer"
)

func main() {
	dir := flag.String("dir", "", "library directory to install under (default ~/.local/lib); plugins go to <dir>/go-xla")
	flag.Parse()
	if err := installer.AutoInstall(*dir, true, installer.Normal); err != nil {
		fmt.Fprintln(os.Stderr, "pjrtinstall:", err)
		os.Exit(1)
	}
}
