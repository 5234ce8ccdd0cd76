// Command nbcheck checks executed notebooks as a reader will see them:
//
//   - every code cell ran and none saved an error or a panic;
//   - each notebook holds at least the figures it promises in its metadata
//     ("longmemory": {"min_figures": N}, default 1);
//   - every cell has an id (nbformat 4.5), and no two cells share one;
//   - every figure carries image/png: the classic Jupyter UI shows a notebook that the reader
//     did not run as "Not Trusted" and then drops image/svg+xml and sanitises text/html, so SVG
//     alone, or SVG inside text/html, shows as run-together text instead of a figure (and a
//     text/html part next to the PNG would be preferred to it, so that is an error too);
//   - no saved stream holds checkpoint "resumed from" lines or GoNB/klog log lines
//     ("I1123 20:29:04.123 ..."), which tell about the machine that ran it, not the model;
//   - no output is an empty text/html (or empty) display, the blank gap a cleared live plot
//     leaves behind;
//   - every figure shows data: its metadata (notebook.Show's) counts the points it draws,
//     reference lines left out, and that count is above 0;
//   - the markdown speaks to students (teachingText): no issue numbers, no `make` targets, no
//     library versions and no talk of working sessions, which belong in commit messages and docs/;
//   - the file is stable under nbformat's read-write round trip (Debian's /usr/bin/python3 with
//     nbformat; skipped with a message when that is missing, or with -roundtrip=false).
//
// `make test` runs it on the notebooks it executed, and `go test ./cmd/nbcheck` on the committed
// ones; `make notebooks-update` on the committed ones.
//
// Usage: nbcheck [-roundtrip=false] notebook.ipynb...
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

type cell struct {
	ID             *string           `json:"id"`
	CellType       string            `json:"cell_type"`
	ExecutionCount *int              `json:"execution_count"`
	Source         json.RawMessage   `json:"source"`
	Outputs        []json.RawMessage `json:"outputs"`
}

type notebook struct {
	NBFormat      int `json:"nbformat"`
	NBFormatMinor int `json:"nbformat_minor"`
	Metadata      struct {
		Longmemory struct {
			MinFigures *int `json:"min_figures"`
		} `json:"longmemory"`
	} `json:"metadata"`
	Cells []cell `json:"cells"`
}

type output struct {
	OutputType string                     `json:"output_type"`
	Ename      string                     `json:"ename"`
	Evalue     string                     `json:"evalue"`
	Name       string                     `json:"name"`
	Text       json.RawMessage            `json:"text"`
	Data       map[string]json.RawMessage `json:"data"`
	Metadata   struct {
		Longmemory *struct {
			DataPoints int `json:"data_points"`
		} `json:"longmemory"`
	} `json:"metadata"`
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

// logLine matches what must not be saved in a stream: a checkpoint resume note, or a
// GoNB/klog log line (severity letter, MMDD, space).
// teachingText are what a notebook's markdown must not say: the project's bookkeeping, which a
// student reading the notebook has no use for.
var teachingText = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`(?i)\bissues?\s*#?\d+|(^|\s)#\d{2,}\b`), "an issue number"},
	{regexp.MustCompile(`\bmake (runs|reports|bench|test|notebook|notebooks-update)\b`), "a make target"},
	{regexp.MustCompile(`\bv\d+\.\d+\.\d+\b`), "a library version"},
	{regexp.MustCompile(`(?i)\b(this|last|previous|next|earlier) session\b`), "talk of working sessions"},
}

var logLine = regexp.MustCompile(`(?m)^.*resumed from.*$|^[IWEF]\d{4} .*$`)

// figureKind tells whether an output is a figure and what it carries: "" when it is not a
// figure, else a description such as "image/png + image/svg+xml" or "SVG inside text/html".
func figureKind(o output) (kind string, hasPNG bool) {
	if o.OutputType != "display_data" && o.OutputType != "execute_result" {
		return "", false
	}
	var parts []string
	if _, ok := o.Data["image/png"]; ok {
		parts = append(parts, "image/png")
		hasPNG = true
	}
	if _, ok := o.Data["image/svg+xml"]; ok {
		parts = append(parts, "image/svg+xml")
	}
	if raw, ok := o.Data["text/html"]; ok {
		h := text(raw)
		switch {
		case strings.Contains(h, "<svg"):
			parts = append(parts, "SVG inside text/html")
		case strings.Contains(h, "<img"):
			parts = append(parts, "<img> inside text/html")
		}
	}
	return strings.Join(parts, " + "), hasPNG
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
	if nb.NBFormat != 4 || nb.NBFormatMinor < 5 {
		problems = append(problems, fmt.Sprintf("nbformat %d.%d, want 4.5 or later (cell ids)", nb.NBFormat, nb.NBFormatMinor))
	}
	ids := map[string]int{}
	code := 0
	for i, c := range nb.Cells {
		switch {
		case c.ID == nil:
			problems = append(problems, fmt.Sprintf("cell %d (%s) has no id", i, c.CellType))
		case *c.ID == "":
			problems = append(problems, fmt.Sprintf("cell %d (%s) has an empty id", i, c.CellType))
		default:
			if j, dup := ids[*c.ID]; dup {
				problems = append(problems, fmt.Sprintf("cell %d has the same id %q as cell %d", i, *c.ID, j))
			}
			ids[*c.ID] = i
		}
		if c.CellType == "markdown" {
			for _, t := range teachingText {
				if m := t.re.FindString(text(c.Source)); m != "" {
					problems = append(problems, fmt.Sprintf("cell %d (markdown): %q: %s", i, m, t.why))
				}
			}
		}
		if c.CellType != "code" {
			continue
		}
		if strings.TrimSpace(text(c.Source)) != "" {
			code++
			if c.ExecutionCount == nil {
				problems = append(problems, fmt.Sprintf("cell %d was not executed", i))
			}
		}
		for j, raw := range c.Outputs {
			var o output
			if err := json.Unmarshal(raw, &o); err != nil {
				problems = append(problems, fmt.Sprintf("cell %d output %d: bad output: %v", i, j, err))
				continue
			}
			at := fmt.Sprintf("cell %d output %d", i, j)
			switch o.OutputType {
			case "error":
				problems = append(problems, fmt.Sprintf("cell %d: error %s: %s", i, o.Ename, o.Evalue))
			case "stream":
				t := text(o.Text)
				if o.Name == "stderr" && strings.Contains(t, "panic:") {
					problems = append(problems, fmt.Sprintf("cell %d: panic on stderr: %.200s", i, t))
				}
				if m := logLine.FindString(t); m != "" {
					problems = append(problems, fmt.Sprintf("%s (%s stream): log line saved: %.120q", at, o.Name, m))
				}
			case "display_data", "execute_result":
				if len(o.Data) == 0 {
					problems = append(problems, fmt.Sprintf("%s: empty %s (no data): a blank gap", at, o.OutputType))
				}
				if raw, ok := o.Data["text/html"]; ok && strings.TrimSpace(text(raw)) == "" {
					problems = append(problems, fmt.Sprintf("%s: empty text/html %s: a blank gap (a cleared live plot?)", at, o.OutputType))
				}
			}
			kind, hasPNG := figureKind(o)
			if kind == "" {
				continue
			}
			figures++
			if !hasPNG {
				problems = append(problems, fmt.Sprintf("%s: figure without image/png (has %s): an untrusted notebook shows no figure", at, kind))
			} else if strings.Contains(kind, "inside text/html") {
				problems = append(problems, fmt.Sprintf("%s: figure has %s: the UI prefers text/html to the PNG and sanitises it in an untrusted notebook", at, kind))
			}
			switch lm := o.Metadata.Longmemory; {
			case lm == nil:
				problems = append(problems, fmt.Sprintf("%s: figure without its metadata \"longmemory\": {\"data_points\": N} (not drawn by notebook.Show?)", at))
			case lm.DataPoints == 0:
				problems = append(problems, fmt.Sprintf("%s: empty chart: no data points drawn", at))
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

// python is the interpreter for the round trip: Debian's, which has nbformat (the python3 first
// on PATH may be another one without it). NBCHECK_PYTHON overrides it.
func python() string {
	if p := os.Getenv("NBCHECK_PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

// roundTripScript reads each notebook with nbformat and writes it back as Jupyter saves it,
// and prints one JSON line per notebook: whether the bytes are the same, the warnings nbformat
// gave (MissingIDFieldWarning, ...), the ids it invented, and the first differing line.
const roundTripScript = `
import json, sys, warnings
import nbformat
for path in sys.argv[1:]:
    r = {"path": path}
    try:
        with open(path, encoding="utf-8") as f:
            orig = f.read()
        before = json.loads(orig)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            nb = nbformat.reads(orig, as_version=nbformat.NO_CONVERT)
            out = nbformat.writes(nb)
        if not out.endswith("\n"):
            out += "\n"
        r["warnings"] = sorted({"%s: %s" % (w.category.__name__, str(w.message).splitlines()[0][:160]) for w in ws})
        r["same"] = out == orig
        r["same_json"] = json.loads(out) == before
        ids_before = [c.get("id") for c in before.get("cells", [])]
        r["new_ids"] = [i for i, c in enumerate(nb.cells) if i < len(ids_before) and ids_before[i] is None and c.get("id")]
        if not r["same"]:
            a, b = orig.splitlines(), out.splitlines()
            n = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            if a == b:
                r["diff"] = "only line endings or the final newline differ (nbformat writes \\n line ends and a final newline)"
            else:
                r["diff"] = "line %d: saved %r, nbformat writes %r" % (n + 1, (a[n] if n < len(a) else "<end>")[:100], (b[n] if n < len(b) else "<end>")[:100])
    except Exception as e:
        r["error"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(r), flush=True)
`

// errNoNBFormat says the round trip cannot run here.
var errNoNBFormat = errors.New("no python with nbformat")

type roundTripResult struct {
	Path     string   `json:"path"`
	Same     bool     `json:"same"`
	SameJSON bool     `json:"same_json"`
	Warnings []string `json:"warnings"`
	NewIDs   []int    `json:"new_ids"`
	Diff     string   `json:"diff"`
	Error    string   `json:"error"`
}

// roundTrip returns, for each path, the problems nbformat's read-write round trip shows, or
// errNoNBFormat (wrapped, with the reason) when no python with nbformat is available.
func roundTrip(paths []string) (map[string][]string, error) {
	py := python()
	if err := exec.Command(py, "-c", "import nbformat").Run(); err != nil {
		return nil, fmt.Errorf("%w: %s -c 'import nbformat': %v (Debian: apt-get install python3-nbformat)", errNoNBFormat, py, err)
	}
	cmd := exec.Command(py, append([]string{"-c", roundTripScript}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("round trip with %s: %v: %s", py, err, stderr.String())
	}
	problems := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r roundTripResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("round trip: bad line %q: %v", line, err)
		}
		var p []string
		if r.Error != "" {
			p = append(p, "nbformat cannot read it: "+r.Error)
		}
		for _, w := range r.Warnings {
			p = append(p, "nbformat warns on reading: "+w)
		}
		if len(r.NewIDs) > 0 {
			p = append(p, fmt.Sprintf("nbformat invents ids for cells %v", r.NewIDs))
		}
		if r.Error == "" && !r.Same {
			what := "formatting differs"
			if !r.SameJSON {
				what = "content differs"
			}
			p = append(p, fmt.Sprintf("not stable under nbformat's read-write round trip (%s): %s", what, r.Diff))
		}
		problems[r.Path] = p
	}
	return problems, nil
}

func main() {
	rt := flag.Bool("roundtrip", true, "also check that nbformat's read-write round trip leaves each file unchanged")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: nbcheck [-roundtrip=false] notebook.ipynb...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	paths := flag.Args()
	var rtProblems map[string][]string
	if *rt {
		var err error
		rtProblems, err = roundTrip(paths)
		switch {
		case errors.Is(err, errNoNBFormat):
			fmt.Printf("nbcheck: round trip skipped: %v\n", err)
		case err != nil:
			fmt.Printf("nbcheck: %v\n", err)
			os.Exit(1)
		}
	}
	failed := false
	for _, path := range paths {
		problems, figures := check(path)
		problems = append(problems, rtProblems[path]...)
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
