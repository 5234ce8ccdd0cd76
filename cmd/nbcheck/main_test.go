package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	const svgOut = `{"output_type": "display_data", "data": {"text/html": ["<svg width=\"1\"></svg>"]}, "metadata": {}}`
	for _, tc := range []struct {
		name, nb string
		problem  string // "" means ok
	}{
		{"ok", `{"cells": [{"cell_type": "code", "execution_count": 1, "source": "x", "outputs": [` + svgOut + `]}]}`, ""},
		{"png", `{"cells": [{"cell_type": "code", "execution_count": 1, "source": ["x"], "outputs": [{"output_type": "display_data", "data": {"image/png": "AAAA"}}]}]}`, ""},
		{"unexecuted", `{"cells": [{"cell_type": "code", "execution_count": null, "source": "x", "outputs": [` + svgOut + `]}]}`, "not executed"},
		{"error", `{"cells": [{"cell_type": "code", "execution_count": 1, "source": "x", "outputs": [` + svgOut + `, {"output_type": "error", "ename": "E", "evalue": "boom", "traceback": []}]}]}`, "boom"},
		{"panic", `{"cells": [{"cell_type": "code", "execution_count": 1, "source": "x", "outputs": [` + svgOut + `, {"output_type": "stream", "name": "stderr", "text": ["panic: oops"]}]}]}`, "panic"},
		{"no figure", `{"cells": [{"cell_type": "code", "execution_count": 1, "source": "x", "outputs": []}]}`, "0 figure(s)"},
		{"fewer figures than promised", `{"metadata": {"longmemory": {"min_figures": 2}}, "cells": [{"cell_type": "code", "execution_count": 1, "source": "x", "outputs": [` + svgOut + `]}]}`, "want at least 2"},
		{"not json", `{`, "not a notebook"},
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
