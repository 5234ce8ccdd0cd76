package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Output fixtures.
const (
	pngOut      = `{"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "image/svg+xml": "<svg width=\"1\"></svg>", "text/plain": "<Figure>"}, "metadata": {"longmemory": {"data_points": 3}}}`
	emptyChart  = `{"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}, "metadata": {"longmemory": {"data_points": 0}}}`
	unknownPNG  = `{"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}, "metadata": {}}`
	svgOnlyOut  = `{"output_type": "display_data", "data": {"image/svg+xml": "<svg width=\"1\"></svg>"}, "metadata": {}}`
	htmlSVGOut  = `{"output_type": "display_data", "data": {"text/html": ["<div><svg width=\"1\"></svg></div>"]}, "metadata": {}}`
	htmlImgOut  = `{"output_type": "display_data", "data": {"text/html": ["<img src=\"data:image/png;base64,AAAA\">"]}, "metadata": {}}`
	pngHTMLOut  = `{"output_type": "display_data", "data": {"image/png": "AAAA", "text/html": "<svg width=\"1\"></svg>"}, "metadata": {"longmemory": {"data_points": 3}}}`
	pngResult   = `{"output_type": "execute_result", "execution_count": 1, "data": {"image/png": "AAAA"}, "metadata": {"longmemory": {"data_points": 3}}}`
	emptyHTML   = `{"output_type": "display_data", "data": {"text/html": []}, "metadata": {}}`
	blankHTML   = `{"output_type": "display_data", "data": {"text/html": ["  \n"]}, "metadata": {}}`
	emptyData   = `{"output_type": "display_data", "data": {}, "metadata": {}}`
	resumedOut  = `{"output_type": "stream", "name": "stdout", "text": ["step 10\n", "nb02/copy/tanh-80: resumed from ckpt-000000300.gob at step 300\n"]}`
	klogOut     = `{"output_type": "stream", "name": "stderr", "text": "I1123 20:29:04.123456   1234 kernel.go:123] Exec ...\n"}`
	plainStream = `{"output_type": "stream", "name": "stdout", "text": ["Instead of 1234 steps\n", "W = 1\n"]}`
)

// nb returns a 4.5 notebook whose cells are the given JSON cells.
func nb(meta string, cells ...string) string {
	if meta == "" {
		meta = "{}"
	}
	return fmt.Sprintf(`{"nbformat": 4, "nbformat_minor": 5, "metadata": %s, "cells": [%s]}`, meta, strings.Join(cells, ", "))
}

// code returns a code cell with an id, run once, with the given outputs.
func code(id string, outputs ...string) string {
	return fmt.Sprintf(`{"id": %q, "cell_type": "code", "execution_count": 1, "metadata": {}, "source": ["x"], "outputs": [%s]}`, id, strings.Join(outputs, ", "))
}

func TestCheck(t *testing.T) {
	md := `{"id": "m", "cell_type": "markdown", "metadata": {}, "source": "# t"}`
	for _, tc := range []struct {
		name, nb string
		problem  string // "" means ok
	}{
		{"ok", nb("", md, code("a", pngOut)), ""},
		{"png only, as execute_result", nb("", code("a", pngResult)), ""},
		{"plain streams", nb("", code("a", plainStream, pngOut)), ""},
		{"unexecuted", `{"nbformat": 4, "nbformat_minor": 5, "cells": [{"id": "a", "cell_type": "code", "execution_count": null, "source": "x", "outputs": [` + pngOut + `]}]}`, "cell 0 was not executed"},
		{"error", nb("", code("a", pngOut, `{"output_type": "error", "ename": "E", "evalue": "boom", "traceback": []}`)), "boom"},
		{"panic", nb("", code("a", pngOut, `{"output_type": "stream", "name": "stderr", "text": ["panic: oops"]}`)), "panic"},
		{"no figure", nb("", code("a")), "0 figure(s)"},
		{"fewer figures than promised", nb(`{"longmemory": {"min_figures": 2}}`, code("a", pngOut)), "want at least 2"},
		{"bundle counts once", nb(`{"longmemory": {"min_figures": 2}}`, code("a", pngOut)), "1 figure(s)"},
		{"not json", `{`, "not a notebook"},
		{"old nbformat", strings.Replace(nb("", code("a", pngOut)), `"nbformat_minor": 5`, `"nbformat_minor": 4`, 1), "nbformat 4.4"},
		{"code cell without id", nb("", `{"cell_type": "code", "execution_count": 1, "source": "x", "outputs": [`+pngOut+`]}`), "cell 0 (code) has no id"},
		{"markdown cell without id", nb("", code("a", pngOut), `{"cell_type": "markdown", "metadata": {}, "source": "x"}`), "cell 1 (markdown) has no id"},
		{"duplicate id", nb("", code("a", pngOut), code("a")), `cell 1 has the same id "a" as cell 0`},
		{"svg only", nb("", md, code("a", svgOnlyOut)), "cell 1 output 0: figure without image/png (has image/svg+xml)"},
		{"svg inside html", nb("", code("a", plainStream, htmlSVGOut)), "cell 0 output 1: figure without image/png (has SVG inside text/html)"},
		{"img inside html", nb("", code("a", htmlImgOut)), "cell 0 output 0: figure without image/png (has <img> inside text/html)"},
		{"png beside svg html", nb("", code("a", pngHTMLOut)), "cell 0 output 0: figure has image/png + SVG inside text/html"},
		{"resumed from", nb("", code("a", resumedOut, pngOut)), `cell 0 output 0 (stdout stream): log line saved: "nb02/copy/tanh-80: resumed from`},
		{"klog line", nb("", code("a", pngOut, klogOut)), `cell 0 output 1 (stderr stream): log line saved: "I1123 20:29:04`},
		{"empty html", nb("", code("a", emptyHTML, pngOut)), "cell 0 output 0: empty text/html display_data"},
		{"blank html", nb("", code("a", pngOut, blankHTML)), "cell 0 output 1: empty text/html display_data"},
		{"empty data", nb("", code("a", pngOut, emptyData)), "cell 0 output 1: empty display_data (no data)"},
		{"empty chart", nb("", code("a", pngOut, emptyChart)), "cell 0 output 1: empty chart: no data points drawn"},
		{"figure not drawn by notebook.Show", nb("", code("a", unknownPNG)), `cell 0 output 0: figure without its metadata "longmemory"`},
		{"issue number", nb("", code("a", pngOut), `{"id": "m", "cell_type": "markdown", "metadata": {}, "source": ["As issue #34 asks"]}`), `cell 1 (markdown): "issue #34": an issue number`},
		{"bare issue reference", nb("", code("a", pngOut), `{"id": "m", "cell_type": "markdown", "metadata": {}, "source": ["see #37"]}`), `" #37": an issue number`},
		{"make target", nb("", code("a", pngOut), `{"id": "m", "cell_type": "markdown", "metadata": {}, "source": ["trained by make runs"]}`), `"make runs": a make target`},
		{"library version", nb("", code("a", pngOut), `{"id": "m", "cell_type": "markdown", "metadata": {}, "source": ["GoMLX v0.28.15"]}`), `"v0.28.15": a library version`},
		{"session talk", nb("", code("a", pngOut), `{"id": "m", "cell_type": "markdown", "metadata": {}, "source": ["Measured in the last session"]}`), `"last session": talk of working sessions`},
		{"markdown heading and LaTeX are fine", nb("", code("a", pngOut), `{"id": "m", "cell_type": "markdown", "metadata": {}, "source": ["## 2. Runs\n", "$x_{t-1}$ and §3.4, 10 000 steps"]}`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "nb.ipynb")
			if err := os.WriteFile(path, []byte(tc.nb), 0o644); err != nil {
				t.Fatal(err)
			}
			problems, _ := check(path)
			got := strings.Join(problems, "; ")
			if tc.problem == "" && got != "" {
				t.Errorf("check: problems %q, want none", got)
			}
			if tc.problem != "" && !strings.Contains(got, tc.problem) {
				t.Errorf("check: problems %q, want one mentioning %q", got, tc.problem)
			}
		})
	}
}

// stable is a notebook as nbformat writes it (indent 1, sorted keys, final newline).
const stable = `{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "m1",
   "metadata": {},
   "source": [
    "# t"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "c1",
   "metadata": {},
   "outputs": [
    {
     "data": {
      "image/png": "iVBORw0KGgo=\n",
      "text/plain": [
       "<Figure>"
      ]
     },
     "metadata": {},
     "output_type": "display_data"
    }
   ],
   "source": [
    "x"
   ]
  }
 ],
 "metadata": {},
 "nbformat": 4,
 "nbformat_minor": 5
}
`

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"stable":     stable,
		"missing id": strings.Replace(stable, `   "id": "m1",`+"\n", "", 1),
		"no newline": strings.TrimSuffix(stable, "\n"),
		"indent 2":   strings.ReplaceAll(stable, "\n ", "\n  "),
		"not json":   "{",
	}
	want := map[string]string{
		"stable":     "",
		"missing id": "MissingIDFieldWarning; nbformat invents ids for cells [0]; not stable under nbformat's read-write round trip (content differs)",
		"no newline": "not stable under nbformat's read-write round trip (formatting differs): only line endings or the final newline differ",
		"indent 2":   "not stable under nbformat's read-write round trip (formatting differs): line 2:",
		"not json":   "nbformat cannot read it",
	}
	var paths []string
	for name, content := range files {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".ipynb")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	problems, err := roundTrip(paths)
	if errors.Is(err, errNoNBFormat) {
		t.Skipf("round trip not checked: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for name := range files {
		got := strings.Join(problems[filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".ipynb")], "; ")
		if want[name] == "" && got != "" {
			t.Errorf("%s: round trip problems %q, want none", name, got)
		}
		for _, w := range strings.Split(want[name], "; ") {
			if w != "" && !strings.Contains(got, w) {
				t.Errorf("%s: round trip problems %q, want one mentioning %q", name, got, w)
			}
		}
	}
}

// TestCommittedNotebooks runs every check, the round trip included, on the notebooks a reader
// opens: the committed ones.
func TestCommittedNotebooks(t *testing.T) {
	paths, err := filepath.Glob("../../notebooks/*.ipynb")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no committed notebooks found (%v)", err)
	}
	rt, err := roundTrip(paths)
	if errors.Is(err, errNoNBFormat) {
		t.Logf("round trip not checked: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		problems, _ := check(path)
		problems = append(problems, rt[path]...)
		for _, p := range problems {
			t.Errorf("%s: %s", filepath.Base(path), p)
		}
	}
}
