package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/leasegen/leasegen/internal/nethost"
	"github.com/leasegen/leasegen/runtime"
)

// childOptions configure a worker or enqueuer process that the benchmark
// starts from its own binary.
type childOptions struct {
	mode       string // "worker" or "enqueue"
	kind       string
	target     string
	taskType   string
	id         string
	handler    string // worker: "noop" returns at once, "sleep" until cancelled
	slots      int
	lease      time.Duration
	heartbeat  time.Duration
	recovery   time.Duration
	hold       int // worker: report once this many tasks run
	typeRate   int // worker: the type's rate, starts a second (0: none)
	rate       int // enqueue: tasks per second
	count      int // enqueue: tasks to send
	skip       int // enqueue: leading tasks marked unmeasured
	cpuprofile string
}

func (c *childOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&c.mode, "child", "", "run as the benchmark's worker or enqueue process (used by the benchmark itself)")
	fs.StringVar(&c.kind, "child-engine", kindSQLite, "child: mysql, postgres or sqlite")
	fs.StringVar(&c.target, "child-db", "", "child: MySQL DSN or SQLite file")
	fs.StringVar(&c.taskType, "child-type", "noop", "child: the task type")
	fs.StringVar(&c.id, "child-id", "", "child worker: its worker id")
	fs.StringVar(&c.handler, "child-handler", "noop", "child worker: noop or sleep")
	fs.IntVar(&c.slots, "child-slots", 0, "child worker: MaxConcurrency (0: default)")
	fs.DurationVar(&c.lease, "child-lease", 0, "child worker: LeaseTimeout (0: default)")
	fs.DurationVar(&c.heartbeat, "child-heartbeat", 0, "child worker: HeartbeatInterval (0: default)")
	fs.DurationVar(&c.recovery, "child-recovery", 0, "child worker: RecoveryInterval (0: default)")
	fs.IntVar(&c.hold, "child-hold", 0, "child worker: say \"holding\" once this many tasks run")
	fs.IntVar(&c.typeRate, "child-type-rate", 0, "child worker: the type's rate in starts a second (0: none)")
	fs.IntVar(&c.rate, "child-rate", 200, "child enqueuer: tasks per second")
	fs.IntVar(&c.count, "child-count", 0, "child enqueuer: tasks to send")
	fs.IntVar(&c.skip, "child-skip", 0, "child enqueuer: leading tasks not measured")
	fs.StringVar(&c.cpuprofile, "child-cpuprofile", "", "child worker: write a CPU profile here")
}

func runChild(c childOptions) error {
	switch c.mode {
	case "worker":
		return runWorkerChild(c)
	case "enqueue":
		return runEnqueueChild(c)
	}
	return fmt.Errorf("unknown -child %q", c.mode)
}

// runWorkerChild runs one worker until SIGTERM, saying "ready" once it runs
// and "holding N rss_kb=K" once it runs -child-hold tasks.
func runWorkerChild(c childOptions) error {
	db, engine, err := openEngine(c.kind, c.target)
	if err != nil {
		return err
	}
	defer db.Close()
	w, err := runtime.NewWorker(engine, runtime.Config{
		WorkerID: c.id, MaxConcurrency: c.slots, LeaseTimeout: c.lease,
		HeartbeatInterval: c.heartbeat, RecoveryInterval: c.recovery,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	handler := func(context.Context, *runtime.Task) error { return nil }
	if c.handler == "sleep" {
		handler = func(ctx context.Context, _ *runtime.Task) error { <-ctx.Done(); return nil }
	}
	var opts []runtime.HandlerOption
	if c.typeRate > 0 {
		opts = append(opts, runtime.WithRate(c.typeRate, time.Second))
	}
	if err := w.Handle(c.taskType, handler, opts...); err != nil {
		return err
	}
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	if err := w.Start(context.Background()); err != nil {
		return err
	}
	fmt.Println("ready")
	if c.hold > 0 {
		for w.Stats().Claimed < int64(c.hold) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond) // let the claim's garbage go
		fmt.Printf("holding %d rss_kb=%d\n", w.Stats().Claimed, rssKB())
	}
	<-stop
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = w.Stop(ctx) // a sleeping handler is cancelled after the timeout
	return nil
}

// runEnqueueChild enqueues -child-count tasks at -child-rate, each carrying
// its send time, then says "sent N".
func runEnqueueChild(c childOptions) error {
	db, engine, err := openEngine(c.kind, c.target)
	if err != nil {
		return err
	}
	defer db.Close()
	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		return err
	}
	if err := paced(context.Background(), client, c.taskType, c.rate, c.count, c.skip); err != nil {
		return err
	}
	fmt.Printf("sent %d\n", c.count)
	return nil
}

// paced enqueues count tasks of taskType, one every 1/rate seconds on
// schedule (catching up when an enqueue ran late); each payload is the send
// time and whether the task is measured (all but the first skip).
func paced(ctx context.Context, client *runtime.Client, taskType string, rate, count, skip int) error {
	start := time.Now()
	for i := range count {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		if _, err := client.Enqueue(ctx, taskType, stamp(time.Now(), i >= skip)); err != nil {
			return err
		}
	}
	return nil
}

// sendStamp is a latency task's payload: its send time and whether the
// task is measured.
type sendStamp struct {
	SentNS   int64 `json:"sent_ns"`
	Measured bool  `json:"measured"`
}

// stamp encodes a send time and whether the task is measured.
func stamp(sent time.Time, measured bool) []byte {
	return fmt.Appendf(nil, `{"sent_ns":%d,"measured":%t}`, sent.UnixNano(), measured)
}

// unstamp decodes a stamp.
func unstamp(p []byte) (sent time.Time, measured bool) {
	var s sendStamp
	_ = json.Unmarshal(p, &s) // the bench's own encoding
	return time.Unix(0, s.SentNS), s.Measured
}

// rssKB reads this process's resident set size in kB.
func rssKB() int64 {
	v, _ := strconv.ParseInt(strings.TrimSuffix(procField("/proc/self/status", "VmRSS"), " kB"), 10, 64)
	return v
}

// child is a running worker or enqueue process.
type child struct {
	cmd   *exec.Cmd
	lines chan string
}

// startChild runs this binary with -child mode and args for s's database.
func startChild(s *scratch, mode string, args ...string) (*child, error) {
	return startChildOn(s, nil, mode, args...)
}

// startChildOn is startChild on a worker host (nil: this machine), which
// reaches the database through its forwarders.
func startChildOn(s *scratch, host *nethost.Host, mode string, args ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	target := s.target
	if host != nil {
		if target, err = host.Reach(target); err != nil {
			return nil, err
		}
	}
	args = append([]string{"-child", mode, "-child-engine", s.kind, "-child-db", target}, args...)
	cmd := exec.Command(exe, args...)
	if host != nil {
		cmd = host.Command(exe, args...)
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s process: %w", mode, err)
	}
	c := &child{cmd: cmd, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c, nil
}

// expect waits for the child's next line, which must start with prefix.
func (c *child) expect(prefix string, timeout time.Duration) (string, error) {
	select {
	case line, ok := <-c.lines:
		if !ok {
			return "", fmt.Errorf("%s process exited before saying %q", filepath.Base(c.cmd.Path), prefix)
		}
		if !strings.HasPrefix(line, prefix) {
			return "", fmt.Errorf("child process said %q, want %q", line, prefix)
		}
		return line, nil
	case <-time.After(timeout):
		return "", fmt.Errorf("child process did not say %q within %s", prefix, timeout)
	}
}

// stop asks the child to stop and waits for it.
func (c *child) stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	return c.cmd.Wait()
}

// kill ends the child with SIGKILL, as a crash would.
func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
}
