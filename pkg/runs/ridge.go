package runs

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gomlx/compute"

	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// RidgeFile is the file in a replica's directory that records its readout fitted in closed
// form (FitRidge): the way echo state networks are trained, beside the gradient training its
// log records.
const RidgeFile = "ridge.json"

// RidgeSalt seeds, with the replica's seed, the training sequences of FitRidge: they differ
// from the batches its gradient training drew and from its held-out batch (notebook 11 draws
// its closed-form fits the same way).
const RidgeSalt = 0xe5

// Ridge is a readout fitted in closed form to a replica's untrained model (train.FitReadout),
// as RidgeFile records it.
type Ridge struct {
	Sequences int      // training sequences whose states the fit regressed on
	Beta      float64  // the ridge penalty β
	Rows      int      // the scored steps the fit used (one per sequence on adding; T + 20 on copy)
	Seconds   float64  // wall time of drawing the sequences, running the model over them and solving
	Loss      float64  // held-out loss of the fitted readout, on the replica's held-out batch (the one its log scores)
	Accuracy  *float64 `json:",omitempty"` // held-out accuracy, for classification tasks
	Host      string   // the machine (Host)
	Backend   string
}

// FitRidge fits, in closed form, the linear readout of the model of the replica in dir as
// its run started (step 0, drawn from its run.json's preset and seed: for an echo state
// network, the reservoir its gradient training uses, which never changes): ridge regression
// with penalty beta on the states of sequences training sequences drawn from the replica's
// seed and RidgeSalt (train.FitReadout). It scores the fitted readout on the replica's held-out
// batch, writes the result to dir's RidgeFile (atomically) and returns it. The replica's log
// and checkpoints are not touched. The cell must have a linear readout (rnn.LinearReadout: the
// ESN).
func FitRidge(b compute.Backend, dir string, sequences int, beta float64) (Ridge, error) {
	if sequences < 1 {
		return Ridge{}, fmt.Errorf("fit: %d sequences, want >= 1", sequences)
	}
	if !(beta >= 0) || math.IsInf(beta, 1) {
		return Ridge{}, fmt.Errorf("fit: β = %g, want a finite β >= 0", beta)
	}
	meta, err := ReadMeta(dir)
	if err != nil {
		return Ridge{}, fmt.Errorf("fit: %w", err)
	}
	p := meta.Preset
	tr, task, err := NewTrainer(b, p, dir)
	if err != nil {
		return Ridge{}, fmt.Errorf("fit: %s: %w", dir, err)
	}
	start := time.Now()
	batch, err := task.Sample(rand.New(rand.NewPCG(p.Train.Seed, RidgeSalt)), sequences)
	if err != nil {
		return Ridge{}, fmt.Errorf("fit: %s: %w", dir, err)
	}
	fit, err := train.FitReadout(b, tr.Store.Scope(train.ModelScope), tr.Cell, batch, beta)
	if err != nil {
		return Ridge{}, fmt.Errorf("fit: %s: %w", dir, err)
	}
	seconds := time.Since(start).Seconds()
	loss, acc, err := tr.Evaluate()
	if err != nil {
		return Ridge{}, fmt.Errorf("fit: %s: %w", dir, err)
	}
	r := Ridge{Sequences: sequences, Beta: beta, Rows: fit.Rows, Seconds: seconds, Loss: loss,
		Host: Host(), Backend: b.Name()}
	if !math.IsNaN(acc) {
		r.Accuracy = &acc
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return r, fmt.Errorf("fit: %s: the fitted readout's held-out loss is %g", dir, loss)
	}
	return r, writeJSON(filepath.Join(dir, RidgeFile), r)
}

// ReadRidge reads the closed-form fit recorded in dir's RidgeFile.
func ReadRidge(dir string) (Ridge, error) {
	var r Ridge
	err := readJSON(filepath.Join(dir, RidgeFile), &r)
	return r, err
}

// RidgeTable writes one Markdown row per run directory: its replicas' closed-form fits
// (ridge.json; replicas without one are left out and counted) against the held-out loss
// its gradient-trained readout ends at (HeldOut of the same replicas' logs), then the
// machines that made the fits.
func RidgeTable(w io.Writer, dirs []string) error {
	fmt.Fprintln(w, "| run | fits | sequences, β | readout in closed form: held-out loss, median [min–max] | solve the task | accuracy | seconds of a fit (median), of all added | readout by gradient: final held-out loss (steps) | baseline |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	var hosts []string
	for _, dir := range dirs {
		reps := RunDirs(dir)
		var losses, accs, secs, grads []float64
		var settings []string
		var meta Meta
		gradSteps := math.MaxInt
		for _, rep := range reps {
			m, log, err := Read(rep)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			if m.Preset.Name != "" {
				meta = m
			}
			if final, _, _ := HeldOut(log); !math.IsNaN(final) {
				grads = append(grads, final)
				gradSteps = min(gradSteps, log[len(log)-1].Step)
			}
			r, err := ReadRidge(rep)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			losses, secs = append(losses, r.Loss), append(secs, r.Seconds)
			if r.Accuracy != nil {
				accs = append(accs, *r.Accuracy)
			}
			if s := fmt.Sprintf("%d, %g", r.Sequences, r.Beta); !slices.Contains(settings, s) {
				settings = append(settings, s)
			}
			if !slices.Contains(hosts, r.Host) {
				hosts = append(hosts, r.Host)
			}
		}
		name := filepath.Base(dir)
		if len(losses) == 0 {
			fmt.Fprintf(w, "| %s | 0 of %d | – | – | – | – | – | – | %.4f |\n", name, len(reps), meta.Baseline)
			continue
		}
		solvedLoss := SolvedLoss(meta.Preset.Task.Kind, meta.Baseline)
		solved := 0
		for _, l := range losses {
			if l < solvedLoss {
				solved++
			}
		}
		accText, gradText := "–", "–"
		if len(accs) > 0 {
			accText = fmt.Sprintf("%.1f%%", 100*Median(accs))
		}
		if len(grads) > 0 {
			gradText = fmt.Sprintf("%.4f [%.4f–%.4f] (%d)", Median(grads), slices.Min(grads), slices.Max(grads), gradSteps)
		}
		total := 0.0
		for _, s := range secs {
			total += s
		}
		fmt.Fprintf(w, "| %s | %d of %d | %s | %.4f [%.4f–%.4f] | %d of %d (below %.4f) | %s | %.1f s, %.0f s | %s | %.4f |\n",
			name, len(losses), len(reps), strings.Join(settings, "; "), Median(losses), slices.Min(losses), slices.Max(losses),
			solved, len(losses), solvedLoss, accText, Median(secs), total, gradText, meta.Baseline)
	}
	if len(hosts) > 0 {
		fmt.Fprintf(w, "\nThe fits ran on %s, one after another.\n", strings.Join(hosts, " and "))
	}
	return nil
}
