// Package notebook holds what the GoNB notebooks share and what no other package should
// import: quick mode, training with a live loss plot in the cell, resuming from the last
// checkpoint when a cell is re-run after an interrupt, and the figures and tables that compare
// runs (over seeds: SeedsChart, SeedsTable; against wall time: TimeChart; gradient norms:
// GradNormChart; the recorded runs: ShowRecorded). Outside a notebook the display calls do
// nothing, so the same code runs under `go test`.
package notebook

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/fnv"
	"html"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/protocol"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/plots"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// QuickEnv is the environment variable that puts notebooks in quick mode (`make test` sets
// it): fewer steps and smaller sizes, the same code.
const QuickEnv = "LONGMEMORY_QUICK"

// Quick reports whether the notebooks run in quick mode: LONGMEMORY_QUICK is "1" or "true";
// unset, "", "0" and "false" mean the default sizes. Any other value panics with a message
// naming it (a typo must not silently run hours of training, nor silently skip them).
func Quick() bool {
	switch v := os.Getenv(QuickEnv); strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true":
		return true
	case "", "0", "false":
		return false
	default:
		panic(fmt.Sprintf("notebook: %s=%q, want 1 or true (quick mode), or 0, false or unset (default sizes)", QuickEnv, v))
	}
}

// Pick returns full normally and quick in quick mode.
func Pick[T any](full, quick T) T {
	if Quick() {
		return quick
	}
	return full
}

// RunsDir is where notebook runs keep their checkpoints: $LONGMEMORY_RUNS if set, else
// $LONGMEMORY_ROOT/build/runs, or a directory under the system's temporary directory in
// quick mode (so that quick runs never resume full ones) or when LONGMEMORY_ROOT is unset.
func RunsDir() string {
	if dir := os.Getenv("LONGMEMORY_RUNS"); dir != "" {
		return dir
	}
	root := os.Getenv("LONGMEMORY_ROOT")
	if Quick() || root == "" {
		return filepath.Join(os.TempDir(), "longmemory-runs-quick")
	}
	return filepath.Join(root, "build", "runs")
}

// RunDir is Train's run directory for p (see package runs: run.json, log.gz,
// checkpoints): RunsDir()/<p.Name>-<FNV-32a of runs.Key(p)>, so that a cell re-run with the
// same settings resumes and one with any setting changed (learning rate, scaling, …) starts a
// run of its own. Where the run lives is not part of a preset (train.Trainer.CheckpointDir),
// and a field added to the preset's types with its zero value leaves the key as it was.
func RunDir(p experiments.Preset) string {
	h := fnv.New32a()
	h.Write([]byte(runs.Key(p)))
	return filepath.Join(RunsDir(), fmt.Sprintf("%s-%08x", strings.ReplaceAll(p.Name, "/", "_"), h.Sum32()))
}

// Run is one finished (or resumed) training run.
type Run struct {
	Name     string
	Task     string // its experiments.Task.Kind ("copy", "adding", …)
	Baseline float64
	Trainer  *train.Trainer
	Dir      string // its run directory (RunDir): `longmemory plot` and `summary` read it
}

// Train trains preset p with a live loss plot in the cell, in run directory RunDir(p),
// through package runs: run.json, log.gz (kept in step with the checkpoints) and the
// checkpoints, as `longmemory train` writes them, so that `longmemory plot`, `summary` and
// `eval` read notebook runs too. The directory is locked while Train runs. If it holds a
// checkpoint, training continues from it (after an interrupt, re-running the cell resumes; a
// finished run is simply reloaded); checkpoints it cannot resume from are moved aside with
// the run's log (runs.Dir.SetAside), never deleted, and the run starts afresh. Interrupting
// the cell (SIGINT, or SIGTERM and SIGHUP: train.StopSignals) saves a checkpoint and returns
// the run so far. The BPTT chunk is chosen for one run at a time (Preset.ForAtOnce).
func Train(p experiments.Preset) (*Run, error) { return trainRun(p.ForAtOnce(1)) }

// trainRun is Train with p's chunk as it is.
func trainRun(p experiments.Preset) (*Run, error) {
	b, err := backend.New()
	if err != nil {
		return nil, err
	}
	dir := RunDir(p)
	id := "live_" + gonbui.UniqueId()
	last, shown := time.Time{}, false
	ctx, stop := runs.StopContext(context.Background())
	defer stop()
	var run *Run
	var start time.Time
	var startStep int
	var title string
	tr, _, err := runs.Train(ctx, dir, p, runs.Options{
		Backend:            b,
		SetAsideUnreadable: true, // never delete a run: keep it aside and start afresh
		Notice:             func(s string) { fmt.Printf("%s: %s\n", p.Name, s) },
		OnStart: func(tr *train.Trainer, task tasks.Task) {
			run = &Run{Name: p.Model.String(), Task: p.Task.Kind, Baseline: task.Baseline(), Trainer: tr, Dir: dir}
			start, startStep, title = time.Now(), tr.Step, task.String()
		},
		OnRecord: func(r train.Record) {
			if !gonbui.IsNotebook || (time.Since(last) < 2*time.Second && r.Step != p.Train.Steps) {
				return
			}
			last, shown = time.Now(), true
			status := fmt.Sprintf("<b>%s</b>: step %d/%d, %.2f steps/s, loss %.4f (baseline %.4f)",
				html.EscapeString(p.Name), r.Step, p.Train.Steps, float64(r.Step-startStep)/math.Max(time.Since(start).Seconds(), 1e-9), r.Loss, run.Baseline)
			gonbui.UpdateHTML(id, "<div>"+status+"</div>"+imgTag(LossChart(title, run.Baseline, false, run)))
		},
	})
	if tr == nil || run == nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	if shown {
		// The live block is transient, but a notebook saves its last content: end it with a
		// line of text saying how the run went (emptying it would leave a blank output).
		// The caller draws the final figure.
		updateText(id, runLine(p.Name, run, p.Train.Steps))
	}
	if errors.Is(err, context.Canceled) && runs.StopCause(ctx) != nil {
		fmt.Printf("%s: interrupted at step %d; checkpoint saved, re-run the cell to continue\n", p.Name, tr.Step)
		err = nil
	}
	if err != nil {
		err = fmt.Errorf("%s: %w", p.Name, err)
	}
	return run, err
}

// LossChart draws the held-out loss of each run against the iteration (or, with
// trainLoss, the training loss of every step) on a log axis, with the memoryless baseline
// dashed, as in the papers' figures, and on the variable-length copy the timing plateau
// (runs.AddPlateau); each model keeps its colour (runs.ColorByModel).
func LossChart(title string, baseline float64, trainLoss bool, rs ...*Run) plots.Chart {
	c := plots.Chart{Title: title, XLabel: "iteration", YLabel: "loss", Width: 720, Height: 380, LogY: true}
	for _, r := range rs {
		curve := runs.HeldOutLoss
		if trainLoss {
			curve = runs.TrainingLoss
		}
		c.Series = append(c.Series, runs.LossSeries(r.Name, curve, r.Trainer.Log))
	}
	runs.ColorByModel(&c)
	runs.AddBaseline(&c, baseline)
	if len(rs) > 0 {
		runs.AddPlateau(&c, runs.Plateau(rs[0].Trainer.Task))
	}
	return c
}

// Show displays a figure in the notebook and flushes it, so that it is saved with the cell:
// one output carrying the figure as PNG (which every viewer shows, also a notebook opened
// unrun and so not trusted) and as SVG (which a trusted notebook and the HTML export
// prefer). A figure with no data (plots.Figure.DataPoints) is not shown: a line says so instead.
// Outside a notebook it does nothing.
func Show(fig plots.Figure) {
	if !gonbui.IsNotebook {
		return
	}
	if fig.DataPoints() == 0 {
		fmt.Println("(no figure: nothing to draw yet)")
		return
	}
	data, meta, err := bundle(fig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "notebook.Show:", err)
		return
	}
	gonbui.SendData(&protocol.DisplayData{Data: data, Metadata: meta})
	gonbui.Sync()
}

// bundle returns fig's MIME bundle for a display_data message and its metadata: the PNG is
// drawn at plots.PNGScale pixels per figure pixel, and shown at the figure's size.
func bundle(fig plots.Figure) (map[protocol.MIMEType]any, map[string]any, error) {
	b, err := fig.PNG()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	data := map[protocol.MIMEType]any{protocol.MIMEImagePNG: b, protocol.MIMEImageSVG: fig.SVG()}
	// map[string]int, which the GoNB protocol registers for its pipe (map[string]any is not).
	size := map[string]int{"width": cfg.Width / plots.PNGScale, "height": cfg.Height / plots.PNGScale}
	// The data drawn, for nbcheck: a saved figure must show data.
	drawn := map[string]int{"data_points": fig.DataPoints()}
	return data, map[string]any{string(protocol.MIMEImagePNG): size, "longmemory": drawn}, nil
}

// imgTag returns fig as an HTML image with the PNG inline, at the figure's size (for the
// live plot, whose HTML is replaced every few seconds).
func imgTag(fig plots.Figure) string {
	b, err := fig.PNG()
	if err != nil {
		return "<pre>" + html.EscapeString(err.Error()) + "</pre>"
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return "<pre>" + html.EscapeString(err.Error()) + "</pre>"
	}
	return fmt.Sprintf(`<img src="data:image/png;base64,%s" width="%d" height="%d">`,
		base64.StdEncoding.EncodeToString(b), cfg.Width/plots.PNGScale, cfg.Height/plots.PNGScale)
}

// updateText replaces the content of display block id by plain text.
func updateText(id, text string) {
	if !gonbui.IsNotebook {
		return
	}
	gonbui.SendData(&protocol.DisplayData{Data: map[protocol.MIMEType]any{protocol.MIMETextPlain: text}, DisplayID: id})
}

// runLine says in one line how far a run got and its last held-out loss (no wall time: the
// saved notebook tells about the model, not the machine that ran it).
func runLine(name string, r *Run, steps int) string {
	log := r.Trainer.Log
	if len(log) == 0 {
		return fmt.Sprintf("%s: no steps", name)
	}
	last := log[len(log)-1]
	loss := fmt.Sprintf("training loss %.4f", last.Loss)
	for i := len(log) - 1; i >= 0; i-- {
		if !math.IsNaN(log[i].EvalLoss) {
			loss = fmt.Sprintf("held-out loss %.4f", log[i].EvalLoss)
			break
		}
	}
	return fmt.Sprintf("%s: step %d/%d, %s (baseline %.4f)", name, last.Step, steps, loss, r.Baseline)
}

// Sized returns preset p at task length T (ignored by the MNIST tasks; 0 keeps p's) and
// with steps training steps, renamed (suffix "@T<T>x<steps>") so that its checkpoints are
// its own. Unless p sets Train.EvalEvery, the held-out batch is scored 20 times over the
// run (enough points for a curve; evaluation is a forward pass over 100 sequences). A
// notebook's settings cell chooses T and steps; full-size runs use p unchanged.
func Sized(p experiments.Preset, T, steps int) experiments.Preset {
	if T > 0 {
		p.Task.T = T
	}
	p.Train.Steps = steps
	if p.Train.EvalEvery == 0 {
		p.Train.EvalEvery = max(1, steps/20)
	}
	p.Name = fmt.Sprintf("%s@T%dx%d", p.Name, p.Task.T, steps)
	return p
}

// TrainAll trains the presets one after the other (see Train) and returns their runs.
func TrainAll(presets ...experiments.Preset) ([]*Run, error) {
	var runs []*Run
	for _, p := range presets {
		r, err := Train(p)
		if err != nil {
			return runs, fmt.Errorf("%s: %w", p.Name, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// Summary returns one line per run: last held-out loss (and accuracy for classification)
// against the baseline, steps and wall time. (runs.Summary gives the table of run
// directories that `longmemory summary` prints.)
func Summary(rs ...*Run) string {
	var b strings.Builder
	for _, r := range rs {
		log := r.Trainer.Log
		if len(log) == 0 {
			fmt.Fprintf(&b, "%-16s not trained\n", r.Name)
			continue
		}
		last := log[len(log)-1]
		final, _, accuracy := runs.HeldOut(log)
		acc := ""
		if !math.IsNaN(accuracy) {
			acc = fmt.Sprintf(", accuracy %.1f%%", 100*accuracy)
		}
		fmt.Fprintf(&b, "%-16s held-out loss %.4f (baseline %.4f)%s after %d steps, %.0f s\n",
			r.Name, final, r.Baseline, acc, last.Step, last.Seconds)
	}
	return b.String()
}

// TrainSeeds trains n replicas of p, with seeds p.Train.Seed, p.Train.Seed+1, …, runs.AtOnce(n)
// of them at once, p's chunk chosen for that many (as `longmemory train -seeds` does; each is a
// Train: a run directory and checkpoints of its own, resumed on a re-run) and returns them in
// seed order. A replica that fails is named in the error; the others are returned. Henaff et
// al. report 8 seeds per setting; SeedsChart draws the replicas as a median with a band.
func TrainSeeds(p experiments.Preset, n int) ([]*Run, error) {
	if n < 1 {
		return nil, fmt.Errorf("notebook: TrainSeeds: n = %d, want >= 1", n)
	}
	all := make([]*Run, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	p = p.ForAtOnce(runs.AtOnce(n))
	for range runs.AtOnce(n) {
		wg.Go(func() {
			for r := range next {
				q := p
				q.Train.Seed = p.Train.Seed + uint64(r)
				all[r], errs[r] = trainRun(q)
				if errs[r] != nil {
					errs[r] = fmt.Errorf("%s, seed %d: %w", p.Name, q.Train.Seed, errs[r])
				}
			}
		})
	}
	for r := range n {
		next <- r
	}
	close(next)
	wg.Wait()
	var done []*Run
	for r := range n {
		if all[r] != nil && errs[r] == nil {
			done = append(done, all[r])
		}
	}
	return done, errors.Join(errs...)
}

// SeedsChart draws each group of replicas (TrainSeeds) as the median of its held-out loss
// with the min–max band over the replicas, and the memoryless baseline dashed (and the timing
// plateau on the variable-length copy, as LossChart).
func SeedsChart(title string, baseline float64, groups ...[]*Run) plots.Chart {
	c := plots.Chart{Title: title, XLabel: "iteration", YLabel: "held-out loss", Width: 720, Height: 380}
	for _, g := range groups {
		var xs []float64
		var curves [][]float64
		for _, r := range g {
			steps, loss := runs.LossCurve(r.Trainer.Log, runs.HeldOutLoss)
			if len(steps) > len(xs) {
				xs = steps
			}
			curves = append(curves, loss)
		}
		if len(g) > 0 {
			c.Series = append(c.Series, plots.Band(fmt.Sprintf("%s, %d seeds", g[0].Name, len(g)), xs, curves, 0))
		}
	}
	runs.ColorByModel(&c)
	runs.AddBaseline(&c, baseline)
	for _, g := range groups {
		if len(g) > 0 {
			runs.AddPlateau(&c, runs.Plateau(g[0].Trainer.Task))
			break
		}
	}
	return c
}
