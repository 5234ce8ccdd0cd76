// Package slurmtest starts a one-node Slurm cluster for a test: its own munged, slurmctld
// and slurmd, on free TCP ports, with every file in a temporary directory, so that it
// clashes neither with another test's cluster nor with a real one. Clients reach it through
// the environment of Cluster.Env (SLURM_CONF); nothing under /etc is read or changed.
//
// It needs root (the daemons run as root), Debian's slurm-wlm and munge packages, and 2
// CPUs (the node's; on fewer Slurm drains it and Start fails).
package slurmtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Timeouts of Start and of the cleanup.
const (
	startTimeout = 30 * time.Second // until the node is idle
	drainTimeout = 20 * time.Second // until the jobs cancelled at cleanup have ended
	stopTimeout  = 5 * time.Second  // between a daemon's SIGTERM and its SIGKILL
)

// Cluster is a running one-node cluster.
type Cluster struct {
	Dir  string // the cluster's directory: slurm.conf, munge key and socket, state, spool, logs
	Conf string // the path of slurm.conf
	Node string // the node's name: the host's short name

	daemons    []*daemon
	tailsShown bool // whether a failure message has shown the log tails
}

// daemon is a process Start started.
type daemon struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd.Wait has returned
	err  error         // cmd.Wait's error, once done is closed
}

// Env returns the environment entries that Slurm's client commands (sbatch, squeue,
// scontrol, scancel, sinfo) need to reach the cluster; jobs submitted with them inherit
// them.
func (c *Cluster) Env() []string { return []string{"SLURM_CONF=" + c.Conf} }

// skip skips the test, or fails it where CI=true, since CI must run it.
func skip(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: not skipped)")
	}
	t.Skip(msg)
}

// Start starts a cluster and waits until sinfo shows its node idle; t's cleanup cancels
// the cluster's jobs, stops the daemons it started (by PID: SIGTERM, then SIGKILL after
// 5 s) and removes its directory. Without root or without the Slurm and munge programs the
// test is skipped, or fails where CI=true.
func Start(t testing.TB) *Cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		skip(t, fmt.Sprintf("slurmtest: a test cluster runs as root; this is UID %d", os.Geteuid()))
	}
	for _, p := range []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "scancel"} {
		if _, err := exec.LookPath(p); err != nil {
			skip(t, fmt.Sprintf("slurmtest: %s is not in PATH; Slurm and munge come with apt-get install slurm-wlm munge (%v)", p, err))
		}
	}
	// Not t.TempDir: munged wants execute permission for everyone on every directory above
	// its socket, and slurmd's step sockets must fit the 108 bytes of a socket path.
	dir, err := os.MkdirTemp("", "slurmtest")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf")}
	t.Cleanup(func() { c.stop(t) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	c.Node, _, _ = strings.Cut(host, ".")
	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(filepath.Join(dir, "munge.key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	ports, err := freePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Conf, []byte(conf(dir, c.Node, ports[0], ports[1])), 0o644); err != nil {
		t.Fatal(err)
	}

	socket := filepath.Join(dir, "munge.socket")
	c.start(t, "munged", "-F", "--key-file="+filepath.Join(dir, "munge.key"), "--socket="+socket,
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--log-file="+filepath.Join(dir, "munged.log"),
		"--seed-file="+filepath.Join(dir, "munged.seed"))
	c.waitFor(t, "munged's socket "+socket, func() (bool, string) {
		_, err := os.Stat(socket)
		return err == nil, fmt.Sprint(err)
	})
	c.start(t, "slurmctld", "-D", "-f", c.Conf)
	c.start(t, "slurmd", "-D", "-f", c.Conf, "-N", c.Node)
	c.waitFor(t, "node "+c.Node+" idle in sinfo", func() (bool, string) {
		out, err := c.client("sinfo", "-h", "-N", "-n", c.Node, "-o", "%t %E")
		state, _, _ := strings.Cut(out, " ")
		return err == nil && state == "idle", fmt.Sprintf("sinfo: %q, %v", out, err)
	})
	return c
}

// conf is the cluster's slurm.conf. cred_expire=5 (the minimum) lets a requeued job start
// again after about 6 s instead of 120 s; sched_interval=1 and bf_interval=1 let the
// scheduler see it then. A job's processes get SIGKILL 10 s after SIGTERM (KillWait).
func conf(dir, node string, ctldPort, dPort int) string {
	p := func(name string) string { return filepath.Join(dir, name) }
	return strings.Join([]string{
		"ClusterName=slurmtest",
		fmt.Sprintf("SlurmctldHost=%s(127.0.0.1)", node),
		fmt.Sprintf("SlurmctldPort=%d", ctldPort),
		fmt.Sprintf("SlurmdPort=%d", dPort),
		"SlurmUser=root",
		"SlurmdUser=root",
		"AuthType=auth/munge",
		"CredType=cred/munge",
		"AuthInfo=socket=" + p("munge.socket") + ",cred_expire=5",
		"MpiDefault=none",
		"ProctrackType=proctrack/linuxproc",
		"TaskPlugin=task/none",
		"SelectType=select/cons_tres",
		"SelectTypeParameters=CR_Core",
		"JobAcctGatherType=jobacct_gather/none",
		"AccountingStorageType=accounting_storage/none",
		"SchedulerParameters=sched_interval=1,bf_interval=1",
		"KillWait=10",
		"MailProg=/bin/true",
		"ReturnToService=2",
		"StateSaveLocation=" + p("state"),
		"SlurmdSpoolDir=" + p("spool"),
		"SlurmctldPidFile=" + p("slurmctld.pid"),
		"SlurmdPidFile=" + p("slurmd.pid"),
		"SlurmctldLogFile=" + p("slurmctld.log"),
		"SlurmdLogFile=" + p("slurmd.log"),
		fmt.Sprintf("NodeName=%s NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN", node),
		"PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
	}, "\n") + "\n"
}

// freePorts returns n TCP ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			return nil, fmt.Errorf("slurmtest: finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// start starts a daemon in the foreground, its output to DIR/NAME.out. It gets SIGTERM if
// the test process dies without its cleanup (Pdeathsig: strictly, when the thread that
// started it ends, which Go does only for a goroutine that locked its thread).
func (c *Cluster) start(t testing.TB, name string, args ...string) {
	t.Helper()
	out, err := os.Create(filepath.Join(c.Dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), c.Env()...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("slurmtest: starting %s: %v", name, err)
	}
	d := &daemon{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		out.Close()
		close(d.done)
	}()
	c.daemons = append(c.daemons, d)
}

// waitFor polls ok every 200 ms until it holds, a daemon exits or startTimeout passes;
// then it fails t with what ok said last and the tails of the daemons' logs.
func (c *Cluster) waitFor(t testing.TB, what string, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		good, last := ok()
		if good {
			return
		}
		for _, d := range c.daemons {
			select {
			case <-d.done:
				t.Fatalf("slurmtest: waiting for %s: %s exited: %v (last check: %s)\n%s", what, d.name, d.err, last, c.logTails())
			default:
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("slurmtest: no %s after %v (last check: %s)\n%s", what, startTimeout, last, c.logTails())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// client runs a Slurm client command against the cluster and returns its trimmed output.
func (c *Cluster) client(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), c.Env()...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// logTails returns the last lines of the daemons' outputs: in the foreground they write
// their logs there too, and what they say before they open their log files.
func (c *Cluster) logTails() string {
	c.tailsShown = true
	var b strings.Builder
	for _, name := range []string{"munged.out", "slurmctld.out", "slurmd.out"} {
		data, err := os.ReadFile(filepath.Join(c.Dir, name))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		lines = lines[max(0, len(lines)-15):]
		fmt.Fprintf(&b, "--- %s (last %d lines)\n%s\n", name, len(lines), strings.Join(lines, "\n"))
	}
	return b.String()
}

// stop cancels the cluster's jobs and waits (up to drainTimeout) until they have ended, so
// that no job process outlives the cluster; then stops the daemons that Start started,
// slurmd first, by PID; logs their log tails if t failed, and removes the directory.
func (c *Cluster) stop(t testing.TB) {
	if c.running("slurmctld") && c.running("slurmd") {
		if u, err := user.Current(); err == nil {
			if out, err := c.client("scancel", "-u", u.Username); err != nil {
				t.Logf("slurmtest: scancel -u %s: %v: %s", u.Username, err, out)
			}
		}
		deadline := time.Now().Add(drainTimeout)
		for {
			out, err := c.client("squeue", "-h", "-o", "%i %T")
			if err == nil && out == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Logf("slurmtest: jobs left after %v: %s %v", drainTimeout, out, err)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if t.Failed() && !c.tailsShown {
		t.Logf("slurmtest: cluster in %s:\n%s", c.Dir, c.logTails())
	}
	for i := len(c.daemons) - 1; i >= 0; i-- {
		d := c.daemons[i]
		select {
		case <-d.done:
			continue
		default:
		}
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(stopTimeout):
			t.Logf("slurmtest: %s (PID %d) still running %v after SIGTERM; sending SIGKILL", d.name, d.cmd.Process.Pid, stopTimeout)
			d.cmd.Process.Kill()
			<-d.done
		}
	}
	if err := os.RemoveAll(c.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("slurmtest: removing %s: %v", c.Dir, err)
	}
}

// running reports whether the daemon named name was started and has not exited.
func (c *Cluster) running(name string) bool {
	for _, d := range c.daemons {
		if d.name == name {
			select {
			case <-d.done:
				return false
			default:
				return true
			}
		}
	}
	return false
}
