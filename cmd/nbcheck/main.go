// Command nbcheck checks executed notebooks: every code cell ran, none saved an error,
// and each notebook holds at least the figures (SVG or PNG outputs) it promises in its
// metadata ("longmemory": {"min_figures": N}, default 1). `make test` runs it on the
// notebooks it executed; `make notebooks-update` on the committed ones.
//
// Usage: nbcheck notebook.ipynb...
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

type notebook struct {
	Metadata struct {
		Longmemory struct {
			MinFigures *int `json:"min_figures"`
		} `json:"longmemory"`
	} `json:"metadata"`
	Cells []struct {
		CellType       string            `json:"cell_type"`
		ExecutionCount *int              `json:"execution_count"`
		Source         json.RawMessage   `json:"source"`
		Outputs        []json.RawMessage `json:"outputs"`
	} `json:"cells"`
}

type output struct {
	OutputType string                     `json:"output_type"`
	Ename      string                     `json:"ename"`
	Evalue     string                     `json:"evalue"`
	Name       string                     `json:"name"`
	Text       json.RawMessage            `json:"text"`
	Data       map[string]json.RawMessage `json:"data"`
}

// text joins a notebook string field, saved either as a string or as a list of lines.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var lines []string
	_ = json.Unmarshal(raw, &lines)
	return strings.Join(lines, "")
}

// check returns the problems found in the notebook at path and its number of figures.
func check(path string) (problems []string, figures int) {
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{err.Error()}, 0
	}
	var nb notebook
	if err := json.Unmarshal(b, &nb); err != nil {
		return []string{fmt.Sprintf("not a notebook: %v", err)}, 0
	}
	code := 0
	for i, c := range nb.Cells {
		if c.CellType != "code" || strings.TrimSpace(text(c.Source)) == "" {
			continue
		}
		code++
		if c.ExecutionCount == nil {
			problems = append(problems, fmt.Sprintf("cell %d was not executed", i))
		}
		for _, raw := range c.Outputs {
			var o output
			if err := json.Unmarshal(raw, &o); err != nil {
				problems = append(problems, fmt.Sprintf("cell %d: bad output: %v", i, err))
				continue
			}
			if o.OutputType == "error" {
				problems = append(problems, fmt.Sprintf("cell %d: error %s: %s", i, o.Ename, o.Evalue))
			}
			if o.OutputType == "stream" && o.Name == "stderr" && strings.Contains(text(o.Text), "panic:") {
				problems = append(problems, fmt.Sprintf("cell %d: panic on stderr: %.200s", i, text(o.Text)))
			}
			for mime, v := range o.Data {
				s := text(v)
				if mime == "image/svg+xml" || mime == "image/png" ||
					(mime == "text/html" && (strings.Contains(s, "<svg") || strings.Contains(s, "data:image/"))) {
					figures++
				}
			}
		}
	}
	if code == 0 {
		problems = append(problems, "no code cells")
	}
	want := 1
	if nb.Metadata.Longmemory.MinFigures != nil {
		want = *nb.Metadata.Longmemory.MinFigures
	}
	if figures < want {
		problems = append(problems, fmt.Sprintf("%d figure(s) in the outputs, want at least %d", figures, want))
	}
	return problems, figures
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: nbcheck notebook.ipynb...")
		os.Exit(2)
	}
	failed := false
	for _, path := range os.Args[1:] {
		problems, figures := check(path)
		if len(problems) == 0 {
			fmt.Printf("nbcheck: %s: ok, %d figure(s)\n", path, figures)
			continue
		}
		failed = true
		for _, p := range problems {
			fmt.Printf("nbcheck: %s: %s\n", path, p)
		}
	}
	if failed {
		os.Exit(1)
	}
}
