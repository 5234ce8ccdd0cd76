package notebook

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/claims"
	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// SeedsTable compares models trained from several seeds each (TrainSeeds; one group per model,
// all on the same task) as Markdown for ShowTable, one row per group:
//
//   - its free parameters (rnn.Params: fewer than stored where a matrix lives on a group);
//   - the final held-out loss, median [min–max] over the seeds (runs.HeldOut: the median of a
//     seed's last runs.EvalWindow evaluations);
//   - how many seeds solve the task, a final below runs.SolvedLoss (a tenth of the baseline on
//     copy, an MSE of 0.01 on adding), and how many end below the baseline by the margin the
//     reports ask of that many seeds (claims.Margin);
//   - the first evaluated step below the solved line and the wall time then, medians over the
//     seeds that get there;
//   - the steps, the wall time of a seed's run (held-out evaluations included) and the training
//     time per step (runs.StepSeconds), medians over the seeds.
//
// A line under the table gives the baseline and the two lines the counts use. Groups without
// runs are left out; with none at all the table says so.
func SeedsTable(groups [][]*Run) string {
	var b strings.Builder
	var first *Run
	for _, g := range groups {
		if len(g) > 0 {
			first = g[0]
			break
		}
	}
	if first == nil {
		return "no runs to compare\n"
	}
	solvedLoss := runs.SolvedLoss(first.Task, first.Baseline)
	fmt.Fprintln(&b, "| model | free parameters | final held-out loss | solve | below the baseline | first solved: step, wall time | steps | wall time of a run | training time per step |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|---|")
	var margins []string
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		margin := claims.Margin(g[0].Task, g[0].Trainer.Config.EvalBatch, len(g))
		if m := fmt.Sprintf("%.0f%%", 100*margin); !slices.Contains(margins, m) {
			margins = append(margins, m)
		}
		var finals, secs, perStep, firstStep, firstSec []float64
		solved, below := 0, 0
		for _, r := range g {
			final, _, _ := runs.HeldOut(r.Trainer.Log)
			finals = append(finals, final)
			if final < solvedLoss {
				solved++
			}
			if final < (1-margin)*r.Baseline {
				below++
			}
			if n := len(r.Trainer.Log); n > 0 {
				secs = append(secs, r.Trainer.Log[n-1].Seconds)
			}
			perStep = append(perStep, runs.StepSeconds(r.Trainer.Log))
			if step, s := firstBelow(r.Trainer.Log, solvedLoss); step >= 0 {
				firstStep, firstSec = append(firstStep, float64(step)), append(firstSec, s)
			}
		}
		firstText := "–"
		if len(firstStep) > 0 {
			firstText = fmt.Sprintf("%.0f, %.0f s", runs.Median(firstStep), runs.Median(firstSec))
		}
		_, free := rnn.Params(g[0].Trainer.Cell)
		fmt.Fprintf(&b, "| %s | %d | %.4f [%.4f–%.4f] | %d of %d | %d of %d | %s | %d | %.0f s | %.0f ms |\n",
			g[0].Name, free, runs.Median(finals), slices.Min(finals), slices.Max(finals), solved, len(g), below, len(g),
			firstText, g[0].Trainer.Step, runs.Median(secs), 1000*runs.Median(perStep))
	}
	fmt.Fprintf(&b, "\nbaseline %.4f; solve: a final held-out loss below %.4f; below the baseline: a final at least %s under it "+
		"(three standard errors of the median over this many seeds, and at least %.0f%%).\n",
		first.Baseline, solvedLoss, strings.Join(margins, " or "), 100*claims.MinMargin)
	return b.String()
}

// firstBelow returns the first evaluated step whose held-out loss is below level, and the
// run's wall time then; -1 and NaN if there is none.
func firstBelow(log []train.Record, level float64) (step int, seconds float64) {
	for _, r := range log {
		if r.EvalLoss < level {
			return r.Step, r.Seconds
		}
	}
	return -1, math.NaN()
}

// TrainingTime estimates the wall time, in seconds, that training full[i] with seeds seeds
// would take, for every i, one preset after another, at the speeds groups[i] (the seeds of the
// same model at smaller settings) measured on this machine: a group of n seeds trained
// runs.AtOnce(n) of them at once in its median training time per step s (runs.StepSeconds), so
//
//	time of full[i] = s · (L_full / L_measured) · steps · seeds / runs.AtOnce(n),
//
// with the work of a step taken to grow in proportion to the sequence length L (the unrolled
// steps) and the machine to keep the throughput it had. It is an estimate to decide whether a
// run fits in an afternoon, not a measurement. It returns an error when full and groups differ
// in length, a group is empty or a preset does not build.
func TrainingTime(groups [][]*Run, full []experiments.Preset, seeds int) (float64, error) {
	if len(groups) != len(full) {
		return 0, fmt.Errorf("notebook: TrainingTime of %d groups and %d presets", len(groups), len(full))
	}
	total := 0.0
	for i, g := range groups {
		if len(g) == 0 {
			return 0, fmt.Errorf("notebook: TrainingTime: group %d (%s) has no runs", i, full[i].Name)
		}
		_, task, err := full[i].Build()
		if err != nil {
			return 0, fmt.Errorf("notebook: TrainingTime: %s: %w", full[i].Name, err)
		}
		var perStep []float64
		for _, r := range g {
			perStep = append(perStep, runs.StepSeconds(r.Trainer.Log))
		}
		scale := float64(task.SeqLen()) / float64(g[0].Trainer.Task.SeqLen())
		total += runs.Median(perStep) * scale * float64(full[i].Train.Steps*seeds) / float64(runs.AtOnce(len(g)))
	}
	return total, nil
}

// Untrained returns a trainer of preset p at step 0, not resumed and writing nothing: the
// model exactly as p's run started (train.New draws it from p.Train.Seed), to compare with
// what training made of it.
func Untrained(p experiments.Preset) (*train.Trainer, error) {
	b, err := backend.New()
	if err != nil {
		return nil, err
	}
	cell, task, err := p.Build()
	if err != nil {
		return nil, err
	}
	return train.New(b, cell, task, p.Train)
}

// ReadoutTable fits the readout of each run in closed form (runs.FitRidge: ridge regression
// with penalty ridge on the states of sequences training sequences, from the model as the run
// started, which for an echo state network is the reservoir its gradient training kept) and
// returns Markdown for ShowTable, one row per run: its seed, the fitted readout's held-out loss
// (and accuracy on a classification task) against those the run's gradient-trained readout ends
// at (runs.HeldOut). Each fit is also written to the run's directory (runs.RidgeFile). The
// cells must have a linear readout (rnn.LinearReadout: the ESN).
func ReadoutTable(rs []*Run, sequences int, ridge float64) (string, error) {
	b, err := backend.New()
	if err != nil {
		return "", err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "| run | seed | in closed form (%d sequences, β = %g): held-out loss | accuracy | by gradient: held-out loss | accuracy | steps |\n", sequences, ridge)
	fmt.Fprintln(&out, "|---|---|---|---|---|---|---|")
	for _, r := range rs {
		fit, err := runs.FitRidge(b, r.Dir, sequences, ridge)
		if err != nil {
			return "", fmt.Errorf("notebook: %s, seed %d: %w", r.Name, r.Trainer.Config.Seed, err)
		}
		final, _, acc := runs.HeldOut(r.Trainer.Log)
		fitAcc, gradAcc := "–", "–"
		if fit.Accuracy != nil {
			fitAcc = fmt.Sprintf("%.1f%%", 100**fit.Accuracy)
		}
		if !math.IsNaN(acc) {
			gradAcc = fmt.Sprintf("%.1f%%", 100*acc)
		}
		fmt.Fprintf(&out, "| %s | %d | %.4f | %s | %.4f | %s | %d |\n", r.Name, r.Trainer.Config.Seed, fit.Loss, fitAcc, final, gradAcc, r.Trainer.Step)
	}
	return out.String(), nil
}
