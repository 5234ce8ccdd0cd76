package runs

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/plots"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

var nan = math.NaN()

// A Curve is what a chart draws of a log against the step.
type Curve int

const (
	HeldOutLoss  Curve = iota // the held-out loss at each evaluation
	TrainingLoss              // the training loss of every step
	// Penalty is the soft orthogonality penalty in its squared form, (1/m) Σ_i ‖VᵀV x_i − x_i‖²
	// (train.Orthogonality, Henaff et al. 2016 §4.3), logged before each step's SGD step on the
	// penalty (squared or not), at the evaluation steps: how far V has drifted from orthogonal.
	// A run trained without the penalty has none to draw.
	Penalty
)

// String names c as a chart's y axis.
func (c Curve) String() string {
	switch c {
	case HeldOutLoss, TrainingLoss:
		return "loss"
	case Penalty:
		return "orthogonality penalty"
	}
	return fmt.Sprintf("Curve(%d)", int(c))
}

// LossCurve returns the steps and values of curve c of a log: the held-out loss (or the
// penalty) at the evaluation steps, or the training loss of every step.
func LossCurve(log []train.Record, c Curve) (steps, v []float64) {
	for _, r := range log {
		var x float64
		switch {
		case c == TrainingLoss:
			x = r.Loss
		case math.IsNaN(r.EvalLoss):
			continue // not an evaluation step
		case c == Penalty:
			x = r.Penalty
		default:
			x = r.EvalLoss
		}
		if !math.IsNaN(x) {
			steps, v = append(steps, float64(r.Step)), append(v, x)
		}
	}
	return steps, v
}

// EvalWindow is how many consecutive held-out evaluations a median runs over where one would
// be too noisy to judge by (one evaluation scores a single held-out batch).
const EvalWindow = 5

// TooFewToDraw says why run directory dir (a run of replicas, or one) is not drawn in a figure
// of held-out losses: its replicas' logs hold fewer than EvalWindow held-out evaluations, so
// it would draw a dot or nothing. It returns "" for a run to draw, and otherwise a phrase such
// as "50 steps, 1 held-out evaluation(s), too few to draw" (the evaluations the most any
// replica has; the steps of the least and the most advanced logged replica when they differ, "24–25
// steps", as the sweep's status gives them).
func TooFewToDraw(dir string) string {
	evals, least, most := 0, -1, 0
	for _, rep := range RunDirs(dir) {
		_, log, err := Read(rep)
		if err != nil {
			continue
		}
		xs, _ := LossCurve(log, HeldOutLoss)
		evals = max(evals, len(xs))
		step := 0
		if n := len(log); n > 0 {
			step = log[n-1].Step
		}
		most = max(most, step)
		if least < 0 || step < least {
			least = step
		}
	}
	if evals >= EvalWindow {
		return ""
	}
	steps := fmt.Sprintf("%d", most)
	if least >= 0 && least < most {
		steps = fmt.Sprintf("%d–%d", least, most)
	}
	return fmt.Sprintf("%s steps, %d held-out evaluation(s), too few to draw", steps, evals)
}

// HeldOut returns a log's final held-out loss and accuracy, the medians of its last
// EvalWindow evaluations (of all of them when there are fewer; pkg/claims judges by the same),
// and its best held-out loss: the lowest median of EvalWindow consecutive evaluations, the
// loss the run held rather than one evaluation's dip; for a run still falling it can be above
// the final. A divergence (a held-out loss of +Inf, train.Record) makes the final loss +Inf and
// the accuracy 0, and is not part of the best. NaN, +Inf and NaN if the held-out batch was
// never scored.
func HeldOut(log []train.Record) (final, best, acc float64) {
	final, best, acc = nan, math.Inf(1), nan
	var loss, accs []float64
	diverged := false
	for _, r := range log {
		switch {
		case math.IsInf(r.EvalLoss, 1):
			diverged = true
		case !math.IsNaN(r.EvalLoss):
			loss, accs = append(loss, r.EvalLoss), append(accs, r.EvalAccuracy)
		}
	}
	k := min(EvalWindow, len(loss))
	for i := k; i <= len(loss) && k > 0; i++ {
		best = math.Min(best, Median(loss[i-k:i]))
	}
	if k > 0 {
		final, acc = Median(loss[len(loss)-k:]), Median(accs[len(accs)-k:])
	}
	if diverged {
		final, acc = math.Inf(1), 0
	}
	return final, best, acc
}

// SolvedLoss is the held-out loss below which a run has solved its task (experiments.Task.Kind),
// as issue #12 defines it: a mean squared error of 0.01 on the adding problem, a tenth of the
// memoryless baseline on the others (copy's cross-entropy).
func SolvedLoss(task string, baseline float64) float64 {
	if task == "adding" {
		return 0.01
	}
	return 0.1 * baseline
}

// Median returns the median of the non-NaN values of v (NaN if there are none).
func Median(v []float64) float64 {
	s := slices.DeleteFunc(slices.Clone(v), math.IsNaN)
	if len(s) == 0 {
		return nan
	}
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// LossSeries draws curve c of logs as one series: a single log as its curve (LossCurve),
// several (the replicas of a multi-seed run) as their median with the min–max band, named
// "name, N seeds".
func LossSeries(name string, c Curve, logs ...[]train.Record) plots.Series {
	var xs []float64
	var curves [][]float64
	for _, log := range logs {
		steps, loss := LossCurve(log, c)
		if len(steps) > len(xs) {
			xs = steps
		}
		curves = append(curves, loss)
	}
	if len(logs) == 1 {
		return plots.Series{Name: name, X: xs, Y: curves[0]}
	}
	return plots.Band(fmt.Sprintf("%s, %d seeds", name, len(curves)), xs, curves, 0)
}

// AddBaseline appends the memoryless baseline to c as a dashed dark grey line from step 0 to
// the last step of c's series (at least 1).
func AddBaseline(c *plots.Chart, baseline float64) {
	addLevel(c, "baseline", baseline, "#555555")
}

// AddPlateau appends the variable-length copy's timing plateau (Plateau) to c as a dashed light
// grey line named "timing plateau", from step 0 to the last step of c's series; nothing when
// plateau is NaN (another task).
func AddPlateau(c *plots.Chart, plateau float64) {
	if !math.IsNaN(plateau) {
		addLevel(c, "timing plateau", plateau, "#999999")
	}
}

// addLevel appends a dashed horizontal line at y, named name, from step 0 to the last step of
// c's series (at least 1).
func addLevel(c *plots.Chart, name string, y float64, color string) {
	last := 1.0
	for _, s := range c.Series {
		if n := len(s.X); n > 0 && !s.Dashed {
			last = math.Max(last, s.X[n-1])
		}
	}
	c.Series = append(c.Series, plots.Series{Name: name, X: []float64{0, last}, Y: []float64{y, y}, Dashed: true, Color: color})
}

// Plateau returns the timing plateau S·ln K/(T + 2S) of a variable-length copy task (also on a
// fixed set of its sequences, tasks.Pool): the loss of a network that knows when to answer but
// not what (tasks.VariableCopy.RecallBaseline), the line the task's learning curves are read
// against. It is NaN for every other task.
func Plateau(task tasks.Task) float64 {
	switch t := task.(type) {
	case tasks.VariableCopy:
		return t.RecallBaseline()
	case tasks.Pool:
		return Plateau(t.Task)
	}
	return nan
}

// ErrNoLog is Chart's error when none of the runs has a replica with a log (or, for the
// held-out loss, an evaluation) yet: nothing to draw.
var ErrNoLog = errors.New("no replica has a log yet")

// Chart draws curve c of each run directory against the iteration (the held-out loss, the
// training loss of every step, or the orthogonality penalty): a single run as its curve, a multi-seed run
// as the median over its replicas with the min–max band, named "<model> <hidden>" (with
// "pool" for an LT-RNN with l2 pooling; by their directories when two would share a name,
// keeping the ", N seeds" of a multi-seed run), and for a loss the first run's baseline dashed (and, on the
// variable-length copy, its timing plateau: AddPlateau), on a log axis (a loss is positive, and learning shows as a factor); each model in its colour
// (ColorByModel). The title is the first run's task. Left out: a replica of a multi-seed run with no log
// yet, or with no held-out evaluation yet when c is the held-out loss; a run or replica without the
// penalty's values when c is the penalty; and a run none of whose replicas is left (just started, or
// started again by train -restart). An error if that leaves nothing to draw (ErrNoLog).
func Chart(dirs []string, c Curve) (plots.Chart, error) {
	chart := plots.Chart{XLabel: "iteration", YLabel: c.String(), Width: 720, Height: 400, LogY: true}
	baseline, plateau := nan, nan
	var drawn []string // the directory of each series
	logged := false    // some replica has a log
	for _, dir := range dirs {
		var logs [][]train.Record
		var meta Meta
		for _, rep := range RunDirs(dir) {
			m, log, err := Read(rep)
			if errors.Is(err, os.ErrNotExist) && len(Replicas(dir)) > 0 {
				continue // a replica just starting: nothing to draw yet
			}
			if err != nil {
				return chart, err
			}
			logged = logged || len(log) > 0
			if _, v := LossCurve(log, c); len(v) == 0 && (c == HeldOutLoss && len(Replicas(dir)) > 0 || c == Penalty) {
				continue // a replica not evaluated yet, or trained without the penalty: nothing to draw
			}
			meta, logs = m, append(logs, log)
		}
		if len(logs) == 0 {
			continue // every replica just starting (or started again: train -restart): drawn once logged
		}
		if chart.Title == "" {
			chart.Title = meta.Task
		}
		if math.IsNaN(baseline) {
			baseline = meta.Baseline
			if task, err := meta.Preset.Task.Build(); err == nil {
				plateau = Plateau(task)
			}
		}
		name := meta.Preset.Model.String()
		if len(Replicas(dir)) == 0 {
			chart.Series = append(chart.Series, LossSeries(name, c, logs[0]))
		} else {
			chart.Series = append(chart.Series, LossSeries(name, c, logs...))
		}
		drawn = append(drawn, dir)
	}
	if len(chart.Series) == 0 && c == Penalty && logged {
		return chart, fmt.Errorf("%s: no replica logs an orthogonality penalty at an evaluation (a run trained without it has none): %w", strings.Join(dirs, ", "), ErrNoLog)
	}
	if len(chart.Series) == 0 {
		return chart, fmt.Errorf("%s: %w", strings.Join(dirs, ", "), ErrNoLog)
	}
	ColorByModel(&chart) // before the names below drop the model's kind
	// Runs of the same model are told apart by their directory names, less the part they
	// all share ("adding-lt-irnn", "adding-lt-irnn-lr1e-3" → "adding-lt-irnn", "lr1e-3").
	names := map[string][]int{}
	for i, s := range chart.Series {
		names[s.Name] = append(names[s.Name], i)
	}
	for _, same := range names {
		if len(same) < 2 {
			continue
		}
		bases := make([]string, len(same))
		for j, i := range same {
			bases[j] = filepath.Base(filepath.Clean(drawn[i]))
		}
		prefix := bases[0]
		for _, b := range bases[1:] {
			for !strings.HasPrefix(b, prefix) {
				prefix = prefix[:len(prefix)-1]
			}
		}
		prefix = prefix[:strings.LastIndex(prefix, "-")+1] // cut at a word boundary
		for j, i := range same {
			name := strings.TrimPrefix(bases[j], prefix)
			if name == "" {
				name = bases[j]
			}
			if _, seeds, ok := strings.Cut(chart.Series[i].Name, ", "); ok {
				name += ", " + seeds // "8 seeds"
			}
			chart.Series[i].Name = name
		}
	}
	if !math.IsNaN(baseline) && c != Penalty {
		AddBaseline(&chart, baseline)
		AddPlateau(&chart, plateau)
	}
	return chart, nil
}

// WriteFigure writes c to path (atomically) as a PNG or an SVG, by path's extension.
func WriteFigure(path string, c plots.Chart) error {
	var fig []byte
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png":
		b, err := c.PNG()
		if err != nil {
			return err
		}
		fig = b
	case ".svg":
		fig = []byte(c.SVG())
	default:
		return fmt.Errorf("%s: unknown figure format %q (want .png or .svg)", path, ext)
	}
	return WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(fig); return err })
}

// Summary writes a Markdown table with one row per run directory: what was trained, for how
// long, and its held-out loss (last, and best: HeldOut's, held over EvalWindow evaluations, so
// above the last for a run still falling) against the task's baseline, with how many seeds
// end above the baseline (never learned, or blew up; a diverged seed among them). A multi-seed
// directory gives one row: steps of the shortest replica, wall time of the slowest, the
// median over its replicas with the range in brackets (a replica that diverged counts with
// its final loss +Inf, and its steps are not the run's); a replica just starting, with no log
// or no held-out loss yet, is left out of the row and of its count of seeds, and a run none
// of whose replicas has one gets a row that says so.
func Summary(w io.Writer, dirs ...string) error {
	fmt.Fprintln(w, "| run | model | task | steps | wall time | final held-out loss | seeds ending above the baseline | best | final accuracy | baseline |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, dir := range dirs {
		reps := Replicas(dir)
		var finals, bests, accs []float64
		var meta Meta
		steps, secs := math.MaxInt, 0.0
		for _, rep := range RunDirs(dir) {
			m, log, err := Read(rep)
			if errors.Is(err, os.ErrNotExist) && len(reps) > 0 {
				continue // a replica just starting: not in the table yet
			}
			if err != nil {
				return err
			}
			if len(log) == 0 {
				return fmt.Errorf("%s: the log is empty", rep)
			}
			final, best, acc := HeldOut(log)
			if math.IsNaN(final) && len(reps) > 0 {
				continue // a replica not evaluated yet: not in the table yet
			}
			meta = m
			last := log[len(log)-1]
			secs = max(secs, last.Seconds)
			if !math.IsInf(final, 1) { // a replica that diverged (train.Record) is done, whatever its steps
				steps = min(steps, last.Step)
			}
			finals, bests, accs = append(finals, final), append(bests, best), append(accs, acc)
		}
		if len(finals) == 0 { // every replica just starting (or started again: train -restart)
			model, task, baseline := "–", "–", "–"
			for _, rep := range reps {
				if m, err := ReadMeta(rep); err == nil {
					model, task, baseline = m.Preset.Model.String(), m.Task, fmt.Sprintf("%.4f", m.Baseline)
					break
				}
			}
			fmt.Fprintf(w, "| %s (%d seeds, no held-out loss yet) | %s | %s | 0 | 0 s | – | – | – | – | %s |\n", filepath.Base(dir), len(reps), model, task, baseline)
			continue
		}
		if steps == math.MaxInt { // every replica diverged
			steps = 0
		}
		accText := "–"
		if a := Median(accs); !math.IsNaN(a) {
			accText = fmt.Sprintf("%.1f%%", 100*a)
		}
		name, final, best := filepath.Base(dir), fmt.Sprintf("%.4f", finals[0]), fmt.Sprintf("%.4f", bests[0])
		if len(reps) > 0 {
			spread := func(v []float64) string {
				return fmt.Sprintf("%.4f [%.4f–%.4f]", Median(v), slices.Min(v), slices.Max(v))
			}
			name, final, best = fmt.Sprintf("%s (%d seeds)", name, len(finals)), spread(finals), spread(bests)
		}
		above, scored := 0, 0 // a single run's final is NaN before its first evaluation
		for _, f := range finals {
			if !math.IsNaN(f) {
				scored++
			}
			if f > meta.Baseline {
				above++
			}
		}
		aboveText := "–"
		if scored > 0 {
			aboveText = fmt.Sprintf("%d of %d", above, scored)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.0f s | %s | %s | %s | %s | %.4f |\n", name,
			meta.Preset.Model, meta.Task, steps, secs, final, aboveText, best, accText, meta.Baseline)
	}
	return nil
}

// StepSeconds returns a replica's training time per step. It leaves out what the log's
// seconds column also counts but training did not spend: the steps on either side of a
// held-out evaluation (the evaluation, and a checkpoint written with it, fall between their
// records) and, by a median over windows, the compilation after a resume or a process stopped
// for a while (SIGSTOP). A window adds up the seconds and steps of up to 100 such consecutive
// steps (fewer in a short log, so that there are at least 20 windows where the log allows),
// so that the log's wall time, kept to 1/100 s, times steps much shorter than that. A log that
// records evaluations only is timed over all its steps. NaN when the log holds fewer than two
// records.
func StepSeconds(log []train.Record) float64 {
	evaluated := func(i int) bool { return i >= 0 && i < len(log) && !math.IsNaN(log[i].EvalLoss) }
	var clean []int // i: the step from record i−1 to record i is plain training
	for i := 1; i < len(log); i++ {
		if log[i].Step > log[i-1].Step && !evaluated(i) && !evaluated(i-1) {
			clean = append(clean, i)
		}
	}
	if len(clean) == 0 { // a log of evaluations only: every step counts
		for i := 1; i < len(log); i++ {
			if log[i].Step > log[i-1].Step {
				clean = append(clean, i)
			}
		}
	}
	w := min(100, max(1, len(clean)/20))
	var per []float64
	for k := 0; k+w <= len(clean); k += w {
		var secs float64
		steps := 0
		for _, i := range clean[k : k+w] {
			secs += log[i].Seconds - log[i-1].Seconds
			steps += log[i].Step - log[i-1].Step
		}
		per = append(per, secs/float64(steps))
	}
	return Median(per)
}

// ReplicasStepSeconds is a run's training time per step with its replicas trained at once: the
// median over the replicas' logs of StepSeconds (NaN when no log is long enough to time).
func ReplicasStepSeconds(logs ...[]train.Record) float64 {
	var v []float64
	for _, l := range logs {
		v = append(v, StepSeconds(l))
	}
	return Median(v)
}

// StepsBought is the steps that a budget of seconds of training buys at stepSeconds a step
// (ReplicasStepSeconds), at least 1; 0 when the speed is unknown (NaN or not positive). The
// claims judge a budget of seconds at these steps, and the sweep trains a run whose horizon is
// in seconds to them.
func StepsBought(seconds, stepSeconds float64) int {
	if !(stepSeconds > 0) {
		return 0
	}
	return max(1, int(seconds/stepSeconds))
}

// modelColors are the colours of the models' curves, one for each of experiments.Kinds:
// saturated ones (d3's category10 without its grey and olive, then dark rows of category20b
// and category20c), so that a thin curve and its pale band stand out from the grid and from the
// grey dashed baseline, whatever the model. The linear recurrences' four (lru, s4d, lru-deep,
// s4d-deep), charted beside the uRNN and the LSTMs, are saturated colours (three of Kelly's colours
// of maximum contrast, and CSS's deeppink) at least 27 (plots.DeltaE) from every other kind's
// colour, from each other, the white page and the grey baseline.
var modelColors = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
	"#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#008856", "#e6550d", "#f99379", "#ff1493", "#8db600"}

// minColorDistance is the least colour difference (plots.DeltaE) ColorByModel keeps between
// the series of one chart while modelColors allows.
const minColorDistance = 20

// ColorByModel colours each series of c that has none by its model's kind, the first word of
// its name ("lt-ornn 80, 8 seeds" → "lt-ornn"): the kind's place in experiments.Kinds picks from
// modelColors, so that a model keeps its colour from figure to figure. The first series of each
// kind takes its kind's colour; a further series of a kind (a variant: "lru-deep 64 no γ") takes
// the next of modelColors that no kind in c owns, none has taken and is at least
// minColorDistance from every colour taken (relaxed in that order when none is). Dashed series
// (the baseline) keep theirs.
func ColorByModel(c *plots.Chart) {
	var taken []string
	for _, s := range c.Series {
		if s.Color != "" {
			taken = append(taken, s.Color)
		}
	}
	kindOf := func(s plots.Series) int {
		kind, _, _ := strings.Cut(s.Name, " ")
		return max(0, slices.Index(experiments.Kinds, strings.TrimSuffix(kind, ",")))
	}
	owned := map[string]bool{} // the colours of the kinds in c
	var variants []int
	for i := range c.Series {
		s := &c.Series[i]
		if s.Color != "" || s.Dashed {
			continue
		}
		col := modelColors[kindOf(*s)%len(modelColors)]
		if owned[col] || slices.Contains(taken, col) {
			variants = append(variants, i)
			continue
		}
		owned[col] = true
		s.Color, taken = col, append(taken, col)
	}
	apart := func(col string) bool {
		for _, t := range taken {
			if plots.DeltaE(col, t) < minColorDistance {
				return false
			}
		}
		return true
	}
	free := func(col string) bool { return !slices.Contains(taken, col) }
	unowned := func(col string) bool { return !owned[col] && free(col) && apart(col) }
	for _, i := range variants {
		s := &c.Series[i]
		k := kindOf(*s)
		for _, ok := range []func(string) bool{unowned, func(col string) bool { return free(col) && apart(col) }, free} {
			for j := range len(modelColors) {
				if col := modelColors[(k+j)%len(modelColors)]; s.Color == "" && ok(col) {
					s.Color = col
				}
			}
		}
		if s.Color != "" {
			taken = append(taken, s.Color)
		}
	}
}
