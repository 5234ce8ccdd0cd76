package runs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// StopSignals are the signals that stop training with a checkpoint: train.StopSignals and
// SIGUSR1, which Slurm sends before a job's time limit (sbatch --signal) and after which a
// sweep's task requeues itself.
var StopSignals = append([]os.Signal{syscall.SIGUSR1}, train.StopSignals...)

// stopped is the cause of a context that StopContext cancelled.
type stopped struct{ sig os.Signal }

func (s stopped) Error() string { return fmt.Sprintf("stopped by %v", s.sig) }

// StopContext returns a context that is cancelled, with the signal as its cause (StopCause),
// when the process receives one of StopSignals. A repeated signal is the same request (Slurm
// signals every process of a job, and a shell forwards what it gets), so it is caught too and
// changes nothing. stop releases the signals.
func StopContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, StopSignals...)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				cancel(stopped{s})
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// StopCause returns the signal that cancelled a StopContext's ctx, or nil.
func StopCause(ctx context.Context) os.Signal {
	var s stopped
	if errors.As(context.Cause(ctx), &s) {
		return s.sig
	}
	return nil
}
