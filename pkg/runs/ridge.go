package runs

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
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
	err = WriteFileAtomic(filepath.Join(dir, RidgeFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	})
	return r, err
}

// ReadRidge reads the closed-form fit recorded in dir's RidgeFile.
func ReadRidge(dir string) (Ridge, error) {
	var r Ridge
	b, err := os.ReadFile(filepath.Join(dir, RidgeFile))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, RidgeFile), err)
	}
	return r, nil
}
