package runs

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gomlx/compute"

	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// Migrate rewrites run directory dir (a single run, not a directory of replicas) in today's
// formats, once: its log.csv becomes log.gz, and its newest intact checkpoint, which before
// version 6 held the whole log, is written again holding the variables only; older
// checkpoints are removed. The variables, step and log are unchanged, so a run resumed from
// the migrated directory continues exactly as from the original. A directory already in
// today's formats is left as it is. It returns what it did, one sentence each.
func Migrate(b compute.Backend, dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, LegacyLogFile)); os.IsNotExist(err) {
		if _, err := os.Stat(filepath.Join(dir, LogFile)); err == nil {
			return nil, nil // migrated already: training writes log.gz and version 6 only
		}
	}
	meta, log, err := Read(dir)
	if err != nil {
		return nil, err
	}
	d, err := Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var did []string
	if !HasCheckpoints(dir) {
		if err := d.WriteLog(log); err != nil {
			return nil, err
		}
		return append(did, fmt.Sprintf("%s: log.csv → log.gz (%d records; no checkpoint)", dir, len(log))), nil
	}
	tr, _, err := NewTrainer(b, meta.Preset, dir)
	if err != nil {
		return nil, err
	}
	tr.LoadLog = func() ([]train.Record, error) { return log, nil }
	if _, err := tr.Resume(); err != nil {
		return nil, err
	}
	for _, s := range tr.Skipped {
		did = append(did, fmt.Sprintf("%s: passed over %v", dir, s))
	}
	// The checkpoint's own log (before version 6) ends at its step; the file's may go on (a
	// divergence after it): keep the file's where it holds the checkpoint's records.
	if n := len(tr.Log); len(log) >= n && (n == 0 || log[n-1].Step == tr.Log[n-1].Step) {
		tr.Log = log
	}
	if err := tr.SaveNewest(); err != nil {
		return nil, err
	}
	return append(did, fmt.Sprintf("%s: log.gz of %d records, checkpoint of step %d in version 6 (older ones removed)", dir, len(tr.Log), tr.Step)), nil
}
