package docker

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The bibliography is the one file allowed to name where the source texts were read.
const bibliography = "docs/REFERENCES.md"

// outsidePaths are paths a clone of the repository does not have (built by concatenation so
// that this file does not match itself).
var outsidePaths = []string{".." + "/shared", "/work" + "/shared", "papers" + "/"}

// TestRepositoryStandsAlone checks that no file of the repository (git ls-files, or a walk of
// the tree when git or the .git directory is missing, as in the Docker build context) cites
// a path outside the repository: the papers are cited through docs/REFERENCES.md, and
// `make bench` runs the project's own bench/torch_reference.py.
func TestRepositoryStandsAlone(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := trackedFiles(root)
	if files == nil {
		files = walkFiles(t, root)
	}
	if len(files) == 0 {
		t.Fatal("no files found under", root)
	}
	for _, f := range files {
		if f == bibliography {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // tracked but deleted in the work tree, or not a regular file
		}
		for i, line := range bytes.Split(b, []byte("\n")) {
			for _, p := range outsidePaths {
				if bytes.Contains(line, []byte(p)) {
					t.Errorf("%s:%d cites %q, a path outside the repository (cite %s instead): %s",
						f, i+1, p, bibliography, strings.TrimSpace(string(line)))
				}
			}
		}
	}
}

// trackedFiles returns git's tracked files relative to root, or nil if git cannot list them.
func trackedFiles(root string) []string {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil || len(out) == 0 {
		return nil
	}
	var files []string
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		files = append(files, filepath.ToSlash(f))
	}
	return files
}

// walkFiles returns the regular files under root, relative to it, skipping .git, build, bin
// and node_modules directories.
func walkFiles(t *testing.T, root string) []string {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "build", "bin", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
