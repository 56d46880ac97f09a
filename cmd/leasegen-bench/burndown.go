package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/leasegen/leasegen/internal/nethost"
	"github.com/leasegen/leasegen/runtime"
)

// enqueueRates measures enqueues one at a time and in batches of 1,000.
func enqueueRates(ctx context.Context, o options, s *scratch, t *table) error {
	const single = 2000
	start := time.Now()
	for range single {
		if _, err := s.client.Enqueue(ctx, "noop", nil); err != nil {
			return err
		}
	}
	t.add("enqueue, one at a time (2,000)", "tasks/s", single/time.Since(start).Seconds())

	const batches = 50
	reqs := make([]runtime.Request, 1000)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "noop"}
	}
	start = time.Now()
	for range batches {
		if _, err := s.client.EnqueueMany(ctx, reqs); err != nil {
			return err
		}
	}
	t.add("enqueue, batches of 1,000 (50,000)", "tasks/s", batches*1000/time.Since(start).Seconds())
	return nil
}

// defaultSlots is runtime.Config's MaxConcurrency default: the slots a
// user who sets nothing gets.
const defaultSlots = 100

// defaultBurnName is the burn-down figure of one worker process with the
// default Config, the first a user sees.
func defaultBurnName(o options) string {
	if o.slots == defaultSlots {
		return burnDownName(o, 1)
	}
	return fmt.Sprintf("burn-down, 1 worker process, default Config (%d slots)", defaultSlots)
}

// burnDownName is the burn-down figure of procs worker processes with
// -slots slots.
func burnDownName(o options, procs int) string {
	processes := "1 worker process"
	if procs > 1 {
		processes = fmt.Sprintf("%d worker processes", procs)
	}
	return fmt.Sprintf("burn-down, %s x %d slots (%s no-op tasks)", processes, o.slots, number(float64(o.burn)))
}

const (
	statementsName = "SQL statements per task, burn-down by 1 process"
	binlogName     = "binary log per task (enqueue in batches, claim, completion)"
)

// serverCPUName is the figure of the server's CPU per task in burn-down
// name.
func serverCPUName(name string) string { return "server CPU per task, " + name }

// hostsBurnName is the burn-down figure of hosts worker hosts, a worker
// process each with the default Config.
func hostsBurnName(o options, hosts int) string {
	return fmt.Sprintf("burn-down, %d worker host(s) x default Config (%s no-op tasks)", hosts, number(float64(o.burn)))
}

// burnDown queues o.burn no-op tasks and times procs worker processes of
// slots slots (0: the default Config) working them off, from the first
// claim to the last completion on the database's clock, as figure name.
// onHosts puts each process on a worker host of its own (a network
// namespace, see nethost), which reaches the database through a forwarder
// in this process.
// With one process on MySQL it also takes the statements the server
// received per task from its Questions counter.
func burnDown(ctx context.Context, o options, s *scratch, procs, slots int, onHosts bool, name string, t *table) error {
	return burnDownKeyed(ctx, o, s, procs, slots, onHosts, nil, name, t)
}

// burnDownKeyed is burnDown of tasks under key (nil: none), with the
// enqueue's rate as a figure of its own.
func burnDownKeyed(ctx context.Context, o options, s *scratch, procs, slots int, onHosts bool, key *keyRule, name string, t *table) error {
	binlogBefore, binlogOn, err := binlogBytes(ctx, s)
	if err != nil {
		return err
	}
	queued := time.Now()
	var keyOf func(i int) runtime.EnqueueOption
	if key != nil {
		keyOf = key.keyOf
	}
	if err := queueKeyed(ctx, s, "noop", o.burn, keyOf); err != nil {
		return err
	}
	if keyOf != nil {
		t.add(keyedEnqueueName(key.rule), "tasks/s", float64(o.burn)/time.Since(queued).Seconds())
	}
	var before int64
	if s.kind == kindMySQL {
		var err error
		if before, err = questions(ctx, s.db); err != nil {
			return err
		}
	}
	meter, metered, err := newCPUMeter(ctx, s)
	if err != nil {
		return err
	}
	var cpuBefore time.Duration
	if metered {
		if cpuBefore, err = meter.read(); err != nil {
			return err
		}
	}
	for i := range procs {
		args := []string{"-child-id", fmt.Sprintf("burn-%d", i+1), "-child-slots", strconv.Itoa(slots)}
		if key != nil && key.typeRate > 0 {
			args = append(args, "-child-type-rate", strconv.Itoa(key.typeRate))
		}
		if o.profileDirs != "" {
			name := fmt.Sprintf("burn-%s-%dproc-%d.pprof", s.kind, procs, i+1)
			args = append(args, "-child-cpuprofile", filepath.Join(o.profileDirs, name))
		}
		var host *nethost.Host
		if onHosts {
			if host, err = nethost.New(); err != nil {
				return err
			}
			defer host.Close()
		}
		c, err := startChildOn(s, host, "worker", args...)
		if err != nil {
			return err
		}
		defer c.stop() //nolint:errcheck // the figures are taken from the database
	}
	probes, err := waitDrained(ctx, s, 10*time.Minute)
	if err != nil {
		return err
	}
	if metered {
		cpuAfter, err := meter.read()
		if err != nil {
			return err
		}
		// The server's CPU from the workers' start to the queue's end,
		// its probes included (one statement every few milliseconds).
		t.add(serverCPUName(name), "µs/task", float64((cpuAfter-cpuBefore).Microseconds())/float64(o.burn))
	}
	if s.kind == kindMySQL && procs == 1 && slots == o.slots {
		after, err := questions(ctx, s.db)
		if err != nil {
			return err
		}
		// Ours: the probes and the second SHOW STATUS.
		t.add(statementsName, "stmts/task", float64(after-before-probes-1)/float64(o.burn))
		if binlogOn {
			binlogAfter, _, err := binlogBytes(ctx, s)
			if err != nil {
				return err
			}
			t.add(binlogName, "bytes/task", float64(binlogAfter-binlogBefore)/float64(o.burn))
		}
	}
	done, span, err := successSpan(ctx, s)
	if err != nil {
		return err
	}
	if done != o.burn {
		return fmt.Errorf("burn-down: %d of %d tasks succeeded", done, o.burn)
	}
	t.add(name, "tasks/s", float64(done)/span.Seconds())
	return nil
}

// waitDrained polls until no task is waiting, queued or running and
// returns how many statements that took.
func waitDrained(ctx context.Context, s *scratch, timeout time.Duration) (int64, error) {
	const probe = `SELECT EXISTS (SELECT 1 FROM leasegen_tasks WHERE status IN ('WAITING', 'QUEUED'))
		OR EXISTS (SELECT 1 FROM leasegen_tasks WHERE status IN ('RUNNING', 'CANCEL_REQUESTED'))`
	deadline := time.Now().Add(timeout)
	for probes := int64(1); ; probes++ {
		var busy bool
		if err := s.db.QueryRowContext(ctx, probe).Scan(&busy); err != nil {
			return probes, err
		}
		if !busy {
			return probes, nil
		}
		if time.Now().After(deadline) {
			return probes, fmt.Errorf("tasks still queued or running after %s", timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// successSpan counts the succeeded tasks and the time from the first claim
// to the last completion, on the database's clock.
func successSpan(ctx context.Context, s *scratch) (int, time.Duration, error) {
	query := `SELECT COUNT(*), COALESCE(CAST(TIMESTAMPDIFF(MICROSECOND, MIN(started_at), MAX(due_at)) AS SIGNED), 0)
		FROM leasegen_tasks WHERE status = 'SUCCESS'`
	unit := time.Microsecond
	if s.kind == kindPostgres {
		query = pgSuccessSpan
	}
	if s.kind == kindSQLite {
		query = `SELECT COUNT(*), COALESCE(MAX(due_at) - MIN(started_at), 0) FROM leasegen_tasks WHERE status = 'SUCCESS'`
		unit = time.Millisecond
	}
	var n int
	var span int64
	if err := s.db.QueryRowContext(ctx, query).Scan(&n, &span); err != nil {
		return 0, 0, err
	}
	return n, max(time.Duration(span)*unit, time.Millisecond), nil
}

// keyedBurnKeys is how many concurrency keys the keys group spreads its
// burn-downs over.
const keyedBurnKeys = 1000

// keyedBurnName is the keys group's burn-down figure of r.
func keyedBurnName(o options, r keyRule) string {
	if r.keyOf == nil {
		return fmt.Sprintf("burn-down, 1 worker process, default Config, %s (%s no-op tasks)", r.rule, number(float64(o.burn)))
	}
	return fmt.Sprintf("burn-down, 1 worker process, default Config, %s keys %s (%s no-op tasks)", number(keyedBurnKeys), r.rule, number(float64(o.burn)))
}

// keyedEnqueueName is the figure of the enqueue before the keyed
// burn-down of rule.
func keyedEnqueueName(rule string) string {
	return fmt.Sprintf("enqueue, batches of 1,000 over %s keys %s", number(keyedBurnKeys), rule)
}

// keyRule is one of the keys group's burn-downs: each task i gets
// keyOf(i), a key of keyedBurnKeys, round robin, under rule (nil: no
// key), and the worker gives the type a rate of typeRate starts a second
// (0: none).
type keyRule struct {
	rule     string
	keyOf    func(i int) runtime.EnqueueOption
	typeRate int
}

// ratedPerKey and ratedPerType are the rates of the keys group's rated
// burn-downs: both allow 10,000 starts a second in all, below what an
// unkeyed burn-down reaches on each engine, so that the rate binds.
const (
	ratedPerKey  = 10
	ratedPerType = ratedPerKey * keyedBurnKeys
)

var keyRules = []keyRule{
	{"at key_concurrency=1", func(i int) runtime.EnqueueOption {
		return runtime.WithConcurrencyKey(strconv.Itoa(i%keyedBurnKeys), 1)
	}, 0},
	{"sequential", func(i int) runtime.EnqueueOption {
		return runtime.WithSequentialKey(strconv.Itoa(i%keyedBurnKeys), runtime.SequenceContinue)
	}, 0},
	{fmt.Sprintf("at key_rate=%d/1s", ratedPerKey), func(i int) runtime.EnqueueOption {
		return runtime.WithKeyRate(strconv.Itoa(i%keyedBurnKeys), ratedPerKey, time.Second)
	}, 0},
	{fmt.Sprintf("at rate=%s/1s, no key", number(ratedPerType)), nil, ratedPerType},
}
