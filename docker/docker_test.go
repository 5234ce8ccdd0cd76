// Package docker holds the Dockerfile of the project's notebook image. No Docker engine
// runs where the tests run, so this test checks what can be checked without one: that
// the files the Dockerfile copies exist, that the make targets it calls exist, and that
// its Go version is the one go.mod asks for, and that every place running Go sets the same
// toolchain and GOEXPERIMENT.
package docker

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDockerfileMatchesProject(t *testing.T) {
	dockerfile := read(t, "Dockerfile")
	makefile := read(t, "../Makefile")
	gomod := read(t, "../go.mod")

	sc := bufio.NewScanner(strings.NewReader(dockerfile))
	copies := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && f[0] == "COPY" {
			for _, src := range f[1 : len(f)-1] {
				copies++
				if _, err := os.Stat(filepath.Join("..", src)); err != nil {
					t.Errorf("Dockerfile copies %q, which does not exist in the project: %v", src, err)
				}
			}
		}
	}
	if copies == 0 {
		t.Error("Dockerfile copies nothing")
	}

	targets := regexp.MustCompile(`(?m)^([a-z][a-z-]*)\s*:`).FindAllStringSubmatch(makefile, -1)
	have := map[string]bool{}
	for _, m := range targets {
		have[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`make ((?:[a-z][a-z-]*\s*)+)`).FindAllStringSubmatch(dockerfile, -1) {
		for _, target := range strings.Fields(m[1]) {
			if !have[target] {
				t.Errorf("Dockerfile runs `make %s`, but the Makefile has no target %q", target, target)
			}
		}
	}
	for _, m := range regexp.MustCompile(`"make", "([a-z-]+)"`).FindAllStringSubmatch(dockerfile, -1) {
		if !have[m[1]] {
			t.Errorf("Dockerfile CMD runs make %s, which the Makefile does not define", m[1])
		}
	}
	if !have["docker"] || !strings.Contains(makefile, "docker/Dockerfile") {
		t.Error("the Makefile has no docker target building docker/Dockerfile")
	}

	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(gomod)
	base := regexp.MustCompile(`(?m)^FROM golang:(\d+\.\d+)`).FindStringSubmatch(dockerfile)
	if goVersion == nil || base == nil || goVersion[1] != base[1] {
		t.Errorf("go.mod asks for Go %v, the Docker base image is golang:%v", goVersion, base)
	}
}

// TestEveryGoRunnerSetsTheToolchain checks that every place that runs `go` (the Makefile,
// CI, the Jupyter kernels, the Dockerfile) and the README's instructions set the Go release
// that go.mod needs (GOTOOLCHAIN) and compute's SIMD kernels (GOEXPERIMENT=simd): a machine
// starts on its own Go, and without the experiment compute builds no SIMD kernels.
func TestEveryGoRunnerSetsTheToolchain(t *testing.T) {
	gomod := read(t, "../go.mod")
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(gomod)
	if goVersion == nil {
		t.Fatal("go.mod has no go line")
	}
	toolchain := regexp.MustCompile(`GOTOOLCHAIN[=:" ]+(?:= )?"?(go\d+\.\d+\.\d+)`)
	experiment := regexp.MustCompile(`GOEXPERIMENT[=:" ]+(?:= )?"?simd`)
	files, err := filepath.Glob("../kernels/*/kernel.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no kernelspecs under ../kernels (%v)", err)
	}
	files = append(files, "../Makefile", "../.ci/run", "Dockerfile", "../README.md")
	for _, f := range files {
		text := read(t, f)
		m := toolchain.FindStringSubmatch(text)
		switch {
		case m == nil:
			t.Errorf("%s does not set GOTOOLCHAIN", f)
		case !strings.HasPrefix(m[1], "go"+goVersion[1]+"."):
			t.Errorf("%s sets GOTOOLCHAIN=%s, go.mod asks for Go %s", f, m[1], goVersion[1])
		}
		if !experiment.MatchString(text) {
			t.Errorf("%s does not set GOEXPERIMENT=simd", f)
		}
	}
}
