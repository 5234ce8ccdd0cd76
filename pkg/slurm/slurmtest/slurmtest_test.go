package slurmtest

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestStartAndCleanup starts a cluster in a subtest, checks that a client reaches it
// through Env, and that the subtest's cleanup stopped every daemon and removed the
// directory.
func TestStartAndCleanup(t *testing.T) {
	var c *Cluster
	t.Run("cluster", func(t *testing.T) {
		c = Start(t)
		if len(c.daemons) != 3 {
			t.Fatalf("started %d daemons, want 3 (munged, slurmctld, slurmd)", len(c.daemons))
		}
		out, err := c.client("sinfo", "-h", "-o", "%P %D %t")
		if err != nil || out != "test* 1 idle" {
			t.Errorf("sinfo: %q, %v; want %q", out, err, "test* 1 idle")
		}
		if env := c.Env(); len(env) != 1 || env[0] != "SLURM_CONF="+c.Conf {
			t.Errorf("Env() = %q, want [SLURM_CONF=%s]", env, c.Conf)
		}
		conf, err := os.ReadFile(c.Conf)
		if err != nil || !strings.Contains(string(conf), "StateSaveLocation="+c.Dir+"/state\n") {
			t.Errorf("slurm.conf does not keep the state in %s: %v\n%s", c.Dir, err, conf)
		}
	})
	if c == nil || t.Failed() {
		return
	}
	for _, d := range c.daemons {
		if err := syscall.Kill(d.cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (PID %d) after cleanup: kill -0 gives %v, want ESRCH", d.name, d.cmd.Process.Pid, err)
		}
	}
	if _, err := os.Stat(c.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after cleanup: %v, want it removed", c.Dir, err)
	}
}

// TestTwoClusters checks that two clusters started at once do not clash.
func TestTwoClusters(t *testing.T) {
	a, b := Start(t), Start(t)
	if a.Conf == b.Conf {
		t.Fatalf("both clusters use %s", a.Conf)
	}
	for _, c := range []*Cluster{a, b} {
		if out, err := c.client("sinfo", "-h", "-o", "%t"); err != nil || out != "idle" {
			t.Errorf("cluster %s: sinfo: %q, %v; want idle", c.Dir, out, err)
		}
	}
}
