// Package reports writes the project's reports from the run directories as they stand,
// training and evaluating nothing: docs/VERDICTS.md and docs/verdicts.json (the papers'
// claims, pkg/claims), the two verdict tables between marker lines of docs/RESULTS.md (Splice),
// docs/SUCCESSORS.md (the uRNN's successors), docs/ABLATIONS.md (the setting variants and
// ablations) and the figures of docs/figures.tsv (runs.Chart). `longmemory reports` runs it;
// every report says so in its first lines.
//
// What it reads, from the docs directory: claims.tsv, variants.tsv and successors.tsv
// (pkg/claims' claims files), figures.tsv (ReadFigures: the figures, which report shows
// each, and the ablations), runs.tsv (pkg/sweep's runs file: the pixel-MNIST runs it scores
// on the test split, whose test.json VERDICTS.md sums up, and the ESN runs whose
// readouts it fits in closed form, whose ridge.json SUCCESSORS.md tabulates) and RESULTS.md.
package reports

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/claims"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/sweep"
)

// Options say where Write reads and writes.
type Options struct {
	// Runs holds the run directories (docs/runs), named in the reports as given here.
	Runs string
	// Docs holds the input files (see the package doc); Out receives the reports and, in its
	// figures directory, the figures (Docs when empty). RESULTS.md is read from Docs and
	// written, spliced, to Out.
	Docs, Out string
	// Log receives a line per file written and per figure left out (nil: discarded).
	Log io.Writer
}

// The files Write reads from Options.Docs, beside RESULTS.md.
const (
	ClaimsFile     = "claims.tsv"
	VariantsFile   = "variants.tsv"
	SuccessorsFile = "successors.tsv"
	FiguresFile    = "figures.tsv"
	RunsFile       = "runs.tsv"
	JSONFile       = "verdicts.json" // written beside VERDICTS.md
	FiguresDir     = "figures"
)

// Write writes every report and figure. The inputs are read and RESULTS.md's markers checked
// before anything is written; each file is then replaced whole (runs.WriteFileAtomic).
func Write(o Options) error {
	if o.Out == "" {
		o.Out = o.Docs
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	say := func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }
	in := func(name string) string { return filepath.Join(o.Docs, name) }

	// The inputs.
	figs, err := ReadFigures(in(FiguresFile))
	if err != nil {
		return err
	}
	var cs, vs, ss []claims.Claim
	for _, f := range []struct {
		name string
		cs   *[]claims.Claim
	}{{ClaimsFile, &cs}, {VariantsFile, &vs}, {SuccessorsFile, &ss}} {
		if *f.cs, err = claims.ReadFile(in(f.name)); err != nil {
			return err
		}
	}
	sweepRuns, err := sweep.Read(in(RunsFile))
	if err != nil {
		return err
	}
	results, err := os.ReadFile(in(Results))
	if err != nil {
		return err
	}
	for _, name := range []string{"verdicts", "successors"} {
		if _, err := Splice(results, name, nil); err != nil {
			return fmt.Errorf("%s: %w", in(Results), err)
		}
	}
	if _, err := os.ReadDir(o.Runs); err != nil {
		return err
	}

	// The figures, then the reports that show those drawn.
	figures := filepath.Join(o.Out, FiguresDir)
	if err := os.MkdirAll(figures, 0o755); err != nil {
		return err
	}
	drawn, undrawn := map[string]bool{}, map[string][]string{}
	for _, f := range figs {
		if drawn[f.Name], undrawn[f.Name], err = f.draw(o.Runs, figures, say); err != nil {
			return err
		}
		if !drawn[f.Name] {
			if err := removeStale(filepath.Join(figures, f.Name+".png"), say); err != nil {
				return err
			}
		}
		// An ablation whose arms log the orthogonality penalty gets a second figure of it.
		penalty := f.Name + PenaltyFigure
		if f.Report == Ablations && drawn[f.Name] {
			if drawn[penalty], err = f.drawPenalty(o.Runs, figures, say); err != nil {
				return err
			}
		}
		if !drawn[penalty] {
			if err := removeStale(filepath.Join(figures, penalty+".png"), say); err != nil {
				return err
			}
		}
	}
	byName, err := claims.LoadAll(o.Runs, cs, vs, ss)
	if err != nil {
		return err
	}
	verdicts, variants, successors := claims.JudgeAll(cs, byName), claims.JudgeAll(vs, byName), claims.JudgeAll(ss, byName)
	r := report{Options: o, figs: figs, drawn: drawn, undrawn: undrawn, sweep: sweepRuns}
	out := map[string][]byte{}
	if out[Verdicts], err = r.verdicts(verdicts); err != nil {
		return err
	}
	var js bytes.Buffer
	if err := claims.WriteJSON(&js, verdicts, variants); err != nil {
		return err
	}
	out[JSONFile] = js.Bytes()
	if out[Successors], err = r.successors(successors); err != nil {
		return err
	}
	if out[Ablations], err = r.ablations(variants, say); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		vs   []claims.Verdict
	}{{"verdicts", verdicts}, {"successors", successors}} {
		var table bytes.Buffer
		claims.WriteReport(&table, p.vs, false)
		if results, err = Splice(results, p.name, table.Bytes()); err != nil {
			return fmt.Errorf("%s: %w", in(Results), err)
		}
	}
	out[Results] = results
	for _, name := range []string{Verdicts, JSONFile, Results, Successors, Ablations} {
		path := filepath.Join(o.Out, name)
		if err := runs.WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(out[name]); return err }); err != nil {
			return err
		}
		say("wrote %s", path)
	}
	return nil
}

// report is what the reports are written from.
type report struct {
	Options
	figs    []Figure
	drawn   map[string]bool
	undrawn map[string][]string // the runs a drawn figure leaves out, with why
	sweep   []sweep.Run
}

// runDir is run name's directory.
func (r report) runDir(name string) string { return filepath.Join(r.Runs, name) }

// exists reports whether run name has a directory.
func (r report) exists(name string) bool {
	st, err := os.Stat(r.runDir(name))
	return err == nil && st.IsDir()
}

// figuresOf returns the figures report shows, in the figures file's order.
func (r report) figuresOf(report string) []Figure {
	var out []Figure
	for _, f := range r.figs {
		if f.Report == report {
			out = append(out, f)
		}
	}
	return out
}

// links writes the Markdown images of report's figures that were drawn, each followed by the
// runs it leaves out.
func (r report) links(w io.Writer, report string) {
	for _, f := range r.figuresOf(report) {
		if r.drawn[f.Name] {
			fmt.Fprintf(w, "![%s](%s/%s.png)\n", f.Name, FiguresDir, f.Name)
			if u := r.undrawn[f.Name]; len(u) > 0 {
				fmt.Fprintf(w, "\nNot drawn: %s.\n\n", strings.Join(u, "; "))
			}
		}
	}
}

// then returns the runs of the runs file whose then column starts with word ("eval", "fit").
func (r report) then(word string) []sweep.Run {
	var out []sweep.Run
	for _, s := range r.sweep {
		if len(s.Then) > 0 && s.Then[0] == word {
			out = append(out, s)
		}
	}
	return out
}

// lines writes each of text's lines and a newline.
func lines(w io.Writer, text ...string) {
	for _, t := range text {
		fmt.Fprintln(w, t)
	}
}

func (r report) verdicts(vs []claims.Verdict) ([]byte, error) {
	var w bytes.Buffer
	lines(&w,
		"# Verdicts: the papers' claims against the seeds of their runs",
		"",
		fmt.Sprintf("Written by `longmemory reports` from the run directories under `%s` (each replica's run.json and log.gz)", r.Runs),
		"as `longmemory verdict -json docs/verdicts.json -variants docs/variants.tsv docs/claims.tsv` would: the claims of docs/claims.tsv,",
		"quoted from the papers, judged by pkg/claims. docs/verdicts.json holds the same verdicts with every statistic behind",
		"them; the setting variants of these claims are judged by the same rules in docs/ABLATIONS.md, outside the tally.",
		"Settings: docs/SETTINGS.md.",
		"")
	claims.WriteReport(&w, vs, true)
	lines(&w,
		"",
		"## Pixel MNIST: accuracy on the whole test split (`longmemory eval -save`, at the horizon; the accuracies the claims compare)",
		"")
	// The runs `longmemory sweep` scores on the test split once at their horizon, by name.
	mnist := r.then("eval")
	slices.SortFunc(mnist, func(a, b sweep.Run) int { return strings.Compare(a.Name, b.Name) })
	for _, s := range mnist {
		summary, err := runs.TestSummary(r.runDir(s.Name))
		if err != nil {
			return nil, err
		}
		if summary == "" {
			summary = fmt.Sprintf("not yet (scored once all its replicas reach %d steps)", s.Steps)
		}
		fmt.Fprintf(&w, "- %s: %s\n", s.Name, summary)
	}
	lines(&w,
		"",
		"## Every run",
		"",
		"The best held-out loss of a replica is the lowest median of 5 evaluations running (one evaluation scores a single",
		"held-out batch), so for a run still falling it can be above the last; the table gives the median over the seeds,",
		"with the range in brackets. On pixel MNIST the held-out batch is a fixed draw of training images, so its loss",
		"and accuracy follow training but do not measure generalisation: the claims compare the test split (above).",
		"")
	entries, err := os.ReadDir(r.Runs)
	if err != nil {
		return nil, err
	}
	// Every run directory, in the order `ls -d docs/runs/*/` gave the table before: by name
	// with the trailing slash, so that a run comes after the runs its name begins
	// (…-irnn-32, …-irnn-lr1e-5, then …-irnn).
	var all []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") && r.exists(e.Name()) {
			all = append(all, r.runDir(e.Name()))
		}
	}
	slices.SortFunc(all, func(a, b string) int { return strings.Compare(a+"/", b+"/") })
	if err := runs.Summary(&w, all...); err != nil {
		return nil, err
	}
	lines(&w,
		"",
		"## Figures (median and min–max band over the seeds; the baseline dashed)",
		"")
	r.links(&w, Verdicts)
	return w.Bytes(), nil
}

func (r report) successors(vs []claims.Verdict) ([]byte, error) {
	var w bytes.Buffer
	lines(&w,
		"# After the uRNN: 8 seeds at full size",
		"",
		fmt.Sprintf("Written by `longmemory reports` from the run directories under `%s` (`longmemory summary`);", r.Runs),
		"notebook 11 explains the models and runs them at small sizes. Settings: docs/SETTINGS.md, \"After the uRNN\".",
		"",
		"## Which solve which task within the same budget of steps, and of seconds",
		"",
		"`longmemory verdict docs/successors.tsv`, by the rules of pkg/claims (docs/VERDICTS.md): each row asks whether a model",
		"solves the task within a budget of steps, or of seconds of training with a run's 8 replicas at once on the project's",
		"2-core machines (each run gets the steps it buys at its own measured speed; docs/successors.tsv says why 480 s on copy",
		"and 1500 s on adding). Those machines differ from session to session (AVX-512 or only AVX2).",
		"")
	claims.WriteReport(&w, vs, false)
	lines(&w,
		"",
		"## Runs (the wall time is each run's: compare the models' seconds here)",
		"",
		"Medians over the seeds, the range in brackets; a replica's best held-out loss is the lowest median of 5 evaluations running (for a run still falling, above the last).",
		"")
	// The runs of the report's figures, in order, those that exist.
	var names, dirs []string
	for _, f := range r.figuresOf(Successors) {
		for _, n := range f.Runs {
			if !slices.Contains(names, n) && r.exists(n) {
				names, dirs = append(names, n), append(dirs, r.runDir(n))
			}
		}
	}
	if len(dirs) > 0 {
		if err := runs.Summary(&w, dirs...); err != nil {
			return nil, err
		}
	}
	lines(&w,
		"",
		"## The ESN's readout in closed form",
		"",
		"In the claims and runs above, the ESN's readout learns by RMSProp, like every other model. Echo state networks are",
		"usually trained otherwise: the readout is fitted in closed form to the reservoir's states, by ridge regression",
		"(`longmemory fit`, `train.FitReadout`). Below, that fit for each replica of the ESN runs, on the same reservoir (the",
		"replica's seed) and scored on the same held-out batch, beside the RMSProp readout's final held-out loss. A fit sees",
		"its sequences once; its seconds are the whole of its training, one replica at a time. On copy the fit is least",
		"squares on one-hot targets, not the cross-entropy: its accuracy compares fairly (the memoryless predictor's is",
		"every blank right and one recalled symbol in 8).",
		"")
	// The ESN runs: those of the runs above whose readouts `longmemory sweep` fits (then "fit").
	fitted := map[string]bool{}
	for _, s := range r.then("fit") {
		fitted[s.Name] = true
	}
	var esn []string
	for _, n := range names {
		if fitted[n] {
			esn = append(esn, r.runDir(n))
		}
	}
	if len(esn) > 0 {
		if err := runs.RidgeTable(&w, esn); err != nil {
			return nil, err
		}
	}
	lines(&w,
		"",
		"## Figures (median and min–max band over the seeds; the baseline dashed)",
		"")
	r.links(&w, Successors)
	return w.Bytes(), nil
}

func (r report) ablations(variants []claims.Verdict, say func(string, ...any)) ([]byte, error) {
	var w bytes.Buffer
	lines(&w,
		"# Ablations: the presets' choices against the alternatives, 8 seeds each",
		"",
		fmt.Sprintf("Written by `longmemory reports` from the run directories under `%s` (`longmemory summary`). Each", r.Runs),
		"section is an ablation of docs/SETTINGS.md (D1…D9: what the paper says, what the presets do, why); its table has",
		"one row per arm, the presets' own first, with the median and min–max over the seeds of the final held-out loss (a",
		"seed's final is the median of its last 5 evaluations, as pkg/claims judges) and of the best (the lowest median of 5",
		"evaluations running), and how many seeds end above the task's baseline (never learned, or blew up). Compare arms at",
		"the same steps: an arm still short of its horizon says so in its steps column.",
		"",
		"## Setting variants of the papers' claims",
		"",
		"Each changes one setting of a run a claim of docs/VERDICTS.md names (docs/variants.tsv), judged by the same rules",
		"(pkg/claims), outside the claims' tally.",
		"")
	claims.WriteReport(&w, variants, false)
	for _, f := range r.figuresOf(Ablations) {
		var dirs, missing []string
		for _, n := range f.Runs {
			if r.exists(n) {
				dirs = append(dirs, r.runDir(n))
			} else {
				missing = append(missing, n)
			}
		}
		lines(&w, "", "## "+f.Title, "")
		if len(dirs) > 0 {
			if err := runs.Summary(&w, dirs...); err != nil {
				say("ablation %s: %v", f.Name, err)
				lines(&w, "(no replica of these runs has a log yet)")
			}
		}
		if len(missing) > 0 {
			lines(&w, "", "Not run yet: "+strings.Join(missing, " ")+".")
		}
		if r.drawn[f.Name] {
			lines(&w, "", fmt.Sprintf("![%s](%s/%s.png)", f.Name, FiguresDir, f.Name))
		}
		if penalty := f.Name + PenaltyFigure; r.drawn[penalty] {
			lines(&w, "", "How far each arm's V is from orthogonal: the penalty (1/m) Σ ‖VᵀV x − x‖² it logs before each step's",
				"SGD step on the penalty, in this squared form whichever form the arm steps on (median and min–max band over the seeds).",
				"", fmt.Sprintf("![%s](%s/%s.png)", penalty, FiguresDir, penalty))
		}
	}
	return w.Bytes(), nil
}
