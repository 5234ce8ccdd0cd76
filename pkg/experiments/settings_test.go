package experiments

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// settingsDoc is docs/SETTINGS.md, relative to this package's directory.
const settingsDoc = "../../docs/SETTINGS.md"

// settingKeys are the rows every preset family needs, in its own section of docs/SETTINGS.md
// or in its paper's "All `paper/*` presets" section: a row's first cell starts with the key.
var settingKeys = []string{
	"model sizes", "initialisation", "optimiser", "learning rate", "decay", "accumulator start and ε",
	"batch size", "gradient clipping", "1/T scaling", "loss averaging", "nonlinearity σ", "output bias",
	"task length", "baseline", "training steps", "seeds",
}

// settingsRow is one row of a table of docs/SETTINGS.md.
type settingsRow struct {
	cells []string
	line  int // 1-based
}

// settingsSection is the text under one heading of docs/SETTINGS.md and its table rows
// (header and separator rows left out).
type settingsSection struct {
	heading string
	rows    []settingsRow
}

var separatorCell = regexp.MustCompile(`^:?-+:?$`)

// splitTableRow returns the cells of a Markdown table row, trimmed; `\|` is a literal bar.
func splitTableRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	const bar = "\x00"
	cells := strings.Split(strings.ReplaceAll(line, `\|`, bar), "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(strings.ReplaceAll(c, bar, "|"))
	}
	return cells
}

// parseSettings splits text at its headings and collects each section's table rows.
func parseSettings(text string) []settingsSection {
	var out []settingsSection
	cur := settingsSection{heading: "(preamble)"}
	for i, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "#"):
			out = append(out, cur)
			cur = settingsSection{heading: strings.TrimSpace(strings.TrimLeft(line, "#"))}
		case strings.HasPrefix(strings.TrimSpace(line), "|"):
			cells := splitTableRow(line)
			if cells[0] == "setting" || cells[0] == "#" || separatorCell.MatchString(cells[0]) {
				continue // header or separator
			}
			cur.rows = append(cur.rows, settingsRow{cells: cells, line: i + 1})
		}
	}
	return append(out, cur)
}

// presetFamily is the section of docs/SETTINGS.md that documents p: "arjovsky/copy",
// "henaff/varcopy", …, and "henaff/pooling" for the LT-RNNs with the l2-pooled decoder.
func presetFamily(p Preset) (paper, family string) {
	paper, rest, _ := strings.Cut(p.Name, "/")
	if p.Model.Pooling {
		return paper, paper + "/pooling"
	}
	task, _, _ := strings.Cut(rest, "/")
	if i := strings.Index(task, "-T"); i >= 0 {
		task = task[:i]
	}
	return paper, paper + "/" + task
}

// shortFloat formats 1e-3 as "1e-3", as the table writes learning rates and accumulator starts.
func shortFloat(v float64) string {
	s := strconv.FormatFloat(v, 'e', -1, 64)
	return strings.NewReplacer("e-0", "e-", "e+00", "").Replace(s)
}

// TestSettingsTableCoversPresets checks docs/SETTINGS.md against Presets: a "Differences"
// section; a section for every preset family (and one per paper for shared rows); every key
// setting row; rows that name the presets' current values (so a changed preset fails until
// the table follows); four cells per settings row; and, for every value marked "not stated",
// a justification that names its ablation.
func TestSettingsTableCoversPresets(t *testing.T) {
	b, err := os.ReadFile(settingsDoc)
	if err != nil {
		t.Fatalf("the settings table is missing: %v", err)
	}
	sections := parseSettings(string(b))
	find := func(tag string) *settingsSection {
		for i := range sections {
			if strings.Contains(sections[i].heading, "`"+tag+"`") {
				return &sections[i]
			}
		}
		return nil
	}

	differences := false
	for _, s := range sections {
		if strings.HasPrefix(s.heading, "Differences") && len(s.rows) > 0 {
			differences = true
		}
		if !strings.Contains(s.heading, "`") {
			continue // not a settings table
		}
		for _, r := range s.rows {
			if len(r.cells) != 4 {
				t.Errorf("%s:%d: %d cells, want 4 (setting | value | source | choice)", settingsDoc, r.line, len(r.cells))
				continue
			}
			if strings.Contains(r.cells[2], "not stated") && !strings.Contains(strings.ToLower(r.cells[3]), "ablation") {
				t.Errorf("%s:%d: %q is marked not stated, but its justification names no ablation", settingsDoc, r.line, r.cells[0])
			}
		}
	}
	if !differences {
		t.Errorf("%s: no \"Differences\" section with a table", settingsDoc)
	}

	reported := map[string]bool{} // a missing section or row is reported once per family
	report := func(msg string) {
		if !reported[msg] {
			reported[msg] = true
			t.Error(msg)
		}
	}
	for _, p := range Presets() {
		paper, family := presetFamily(p)
		fam, common := find(family), find(paper+"/*")
		if fam == nil {
			report(fmt.Sprintf("%s: no section headed `%s`", settingsDoc, family))
			continue
		}
		if common == nil {
			report(fmt.Sprintf("%s: no section headed `%s/*`", settingsDoc, paper))
			continue
		}
		row := func(key string) *settingsRow {
			for _, s := range []*settingsSection{fam, common} {
				for i := range s.rows {
					if strings.HasPrefix(strings.ToLower(s.rows[i].cells[0]), strings.ToLower(key)) {
						return &s.rows[i]
					}
				}
			}
			return nil
		}
		for _, key := range settingKeys {
			if row(key) == nil {
				report(fmt.Sprintf("%s: no %q row for `%s` (in its section or `%s/*`)", settingsDoc, key, family, paper))
			}
		}
		cfg, err := p.Train.WithDefaults()
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		o := cfg.Optimizer
		want := map[string][]string{
			"model sizes":             {fmt.Sprintf("%s %d", p.Model.Kind, p.Model.Hidden)},
			"learning rate":           {shortFloat(o.LR)},
			"decay":                   {fmt.Sprintf("%g", o.Decay)},
			"accumulator start and ε": {shortFloat(o.AccInit)},
			"batch size":              {fmt.Sprintf("Batch: %d", cfg.Batch)},
			"1/T scaling":             {fmt.Sprintf("ScaleHiddenGrad: %t", cfg.ScaleHiddenGrad)},
			"training steps":          {fmt.Sprintf("Steps: %d", cfg.Steps)},
		}
		if o.Eps == 0 {
			want["accumulator start and ε"] = append(want["accumulator start and ε"], "no ε")
		} else {
			want["accumulator start and ε"] = append(want["accumulator start and ε"], shortFloat(o.Eps))
		}
		switch {
		case o.ClipValue > 0:
			want["gradient clipping"] = []string{fmt.Sprintf("ClipValue: %g", o.ClipValue)}
		case o.ClipNorm > 0:
			want["gradient clipping"] = []string{fmt.Sprintf("ClipNorm: %g", o.ClipNorm)}
		default:
			want["gradient clipping"] = []string{"none"}
		}
		if p.Task.Kind == "mnist" || p.Task.Kind == "pmnist" {
			want["task length"] = []string{"784"}
		} else {
			want["task length"] = []string{fmt.Sprintf("T = %d", p.Task.T)}
		}
		if n := cfg.Orthogonality.Points; n != 0 {
			want["orthogonality penalty"] = []string{fmt.Sprintf("Points: %d", n)}
		}
		for key, subs := range want {
			r := row(key)
			if r == nil {
				if key == "orthogonality penalty" {
					report(fmt.Sprintf("%s: no %q row for `%s`", settingsDoc, key, family))
				}
				continue // reported above
			}
			for _, sub := range subs {
				if !strings.Contains(r.cells[1], sub) {
					t.Errorf("%s:%d: the %q value does not say %q (preset %s)", settingsDoc, r.line, key, sub, p.Name)
				}
			}
		}
	}
}

// TestSettingsParser checks the parser on a small table: escaped bars, header and separator
// rows, and the family of a pooling preset.
func TestSettingsParser(t *testing.T) {
	s := parseSettings("# T\n## `a/*`\n| setting | value | source | choice |\n|---|---|---|---|\n| x | a \\| b | c | d |\n")
	if len(s) != 3 || s[2].heading != "`a/*`" || len(s[2].rows) != 1 {
		t.Fatalf("sections %+v", s)
	}
	if got := s[2].rows[0].cells; len(got) != 4 || got[1] != "a | b" || s[2].rows[0].line != 5 {
		t.Errorf("row %q at line %d", got, s[2].rows[0].line)
	}
	p, err := Lookup("henaff/adding-T400/lt-ornn-128-pool")
	if err != nil {
		t.Fatal(err)
	}
	if _, f := presetFamily(p); f != "henaff/pooling" {
		t.Errorf("family %q, want henaff/pooling", f)
	}
	if _, f := presetFamily(Preset{Name: "arjovsky/copy-T100/urnn-128"}); f != "arjovsky/copy" {
		t.Errorf("family %q, want arjovsky/copy", f)
	}
	if got := shortFloat(1e-4); got != "1e-4" {
		t.Errorf("shortFloat(1e-4) = %q", got)
	}
}
