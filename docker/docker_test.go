// Package docker holds the Dockerfile of the project's notebook image. No Docker engine
// runs where the tests run, so this test checks what can be checked without one: that
// the files the Dockerfile copies exist, that the make targets it calls exist, and that
// its Go version is the one go.mod asks for.
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
