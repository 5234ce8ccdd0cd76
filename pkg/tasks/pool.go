package tasks

import (
	"fmt"
	"math/rand/v2"
)

// Pool trains on a fixed set of N sequences of Task instead of fresh ones, as the uRNN
// authors' code does (a training set of 10⁵ sequences; docs/SETTINGS.md, C1). Sequence i of
// the set is Task's draw from the random stream (Seed, i), so the set needs no memory and is
// the same in every run with the same Seed; a batch picks its sequences uniformly, with
// replacement, with the rng it is given. Held-out scores use fresh sequences (HeldOut).
type Pool struct {
	Task Task
	N    int    // sequences in the set, >= 1
	Seed uint64 // which set
}

// HeldOut returns the task whose draws score a model on data it has not trained on: t itself,
// or for a Pool the task it draws its set from (a fresh copy sequence repeats one of the set's
// with probability at most N/K^S, 10⁻⁴ for 10⁵ of 8¹⁰: about one in a hundred held-out batches
// of 100 holds one).
func HeldOut(t Task) Task {
	if p, ok := t.(Pool); ok {
		return p.Task
	}
	return t
}

// Validate implements Task.
func (p Pool) Validate() error {
	if p.Task == nil {
		return fmt.Errorf("tasks: Pool.Task is nil, want the task to draw the set from")
	}
	if p.N < 1 {
		return fmt.Errorf("tasks: Pool.N = %d, want >= 1", p.N)
	}
	if _, ok := p.Task.(Pool); ok {
		return fmt.Errorf("tasks: Pool.Task is a Pool, want a task of fresh sequences")
	}
	return p.Task.Validate()
}

// SeqLen implements Task.
func (p Pool) SeqLen() int { return p.Task.SeqLen() }

// NumInputs implements Task.
func (p Pool) NumInputs() int { return p.Task.NumInputs() }

// NumOutputs implements Task.
func (p Pool) NumOutputs() int { return p.Task.NumOutputs() }

// Baseline implements Task: the set's task's.
func (p Pool) Baseline() float64 { return p.Task.Baseline() }

// String implements Task, e.g. "Copy(T=100, K=8, S=10), pool of 100000".
func (p Pool) String() string { return fmt.Sprintf("%s, pool of %d", p.Task, p.N) }

// Sequence returns sequence i of the set, a batch of one.
func (p Pool) Sequence(i int) (*Batch, error) {
	if i < 0 || i >= p.N {
		return nil, fmt.Errorf("tasks: Pool.Sequence(%d), want 0..%d", i, p.N-1)
	}
	return p.Task.Sample(rand.New(rand.NewPCG(p.Seed, uint64(i))), 1)
}

// Sample implements Task: batch sequences of the set, picked with rng.
func (p Pool) Sample(rng *rand.Rand, batch int) (*Batch, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if batch < 1 {
		return nil, fmt.Errorf("tasks: Pool.Sample batch = %d, want >= 1", batch)
	}
	var out *Batch
	for range batch {
		b, err := p.Sequence(rng.IntN(p.N))
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = &Batch{Len: b.Len, NumIn: b.NumIn, NumClasses: b.NumClasses}
		}
		out.Size++
		out.X = append(out.X, b.X...)
		out.Labels = append(out.Labels, b.Labels...)
		out.Y = append(out.Y, b.Y...)
		out.Mask = append(out.Mask, b.Mask...)
	}
	return out, out.Check()
}
