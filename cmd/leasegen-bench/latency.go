package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// The defaults of an idle worker's two periodic statements.
const (
	defaultPollInterval     = time.Second
	defaultRecoveryInterval = 30 * time.Second
)

const idleStatementsName = "idle worker: statements per second (PollInterval 1s, RecoveryInterval 30s)"

// latencyName names a latency figure.
func latencyName(local bool, what string) string {
	if local {
		return "latency, enqueued in the worker's process, " + what
	}
	return "latency, enqueued from another process, " + what
}

// latency measures enqueue-to-start at o.rate tasks per second, o.warmup
// unmeasured and then o.latencyFor measured, for a worker on default
// settings in this process. With local true the tasks come from this
// process's engine, which wakes the worker at once; otherwise from an
// enqueue process, which the worker notices by polling. Then the worker
// sits idle: on MySQL the statements it sends are counted, and one more
// task measures how soon an idle worker notices work.
func latency(ctx context.Context, o options, s *scratch, local bool, t *table) error {
	var mu sync.Mutex
	var waits []time.Duration
	first := make(chan time.Duration, 1)
	w, err := runtime.NewWorker(s.engine, runtime.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	err = w.Handle("ping", func(_ context.Context, task *runtime.Task) error {
		sent, measured := unstamp(task.Payload)
		if measured {
			mu.Lock()
			waits = append(waits, time.Since(sent))
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = w.Handle("first", func(_ context.Context, task *runtime.Task) error {
		sent, _ := unstamp(task.Payload)
		first <- time.Since(sent)
		return nil
	})
	if err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	defer w.Stop(ctx) //nolint:errcheck // the run is over
	// Let the worker back off to its idle poll.
	time.Sleep(3 * time.Second)

	count := int(float64(o.rate) * (o.warmup + o.latencyFor).Seconds())
	skip := int(float64(o.rate) * o.warmup.Seconds())
	if err := send(ctx, s, local, "ping", o.rate, count, skip); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(waits)
		mu.Unlock()
		if n == count-skip {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("latency: %d of %d tasks started", n, count-skip)
		}
	}
	slices.Sort(waits)
	for _, q := range []float64{.50, .90, .99} {
		p := waits[min(len(waits)-1, int(q*float64(len(waits))))]
		t.add(latencyName(local, fmt.Sprintf("p%.0f", q*100)), "ms", millis(p))
	}

	if local && s.kind == kindMySQL {
		time.Sleep(3 * time.Second) // back to the idle poll
		before, err := questions(ctx, s.db)
		if err != nil {
			return err
		}
		time.Sleep(o.idle)
		after, err := questions(ctx, s.db)
		if err != nil {
			return err
		}
		t.add(idleStatementsName, "stmts/s", float64(after-before-1)/o.idle.Seconds())
	} else {
		time.Sleep(o.idle)
	}
	if err := send(ctx, s, local, "first", 1, 1, 0); err != nil {
		return err
	}
	select {
	case d := <-first:
		where := "same process"
		if !local {
			where = "other process"
		}
		t.add(fmt.Sprintf("first task after %s idle, %s", o.idle, where), "ms", millis(d))
	case <-time.After(30 * time.Second):
		return fmt.Errorf("latency: the task after the idle period did not start in 30s")
	}
	return nil
}

// send enqueues count tasks of taskType at rate from this process or from
// an enqueue process.
func send(ctx context.Context, s *scratch, local bool, taskType string, rate, count, skip int) error {
	if local {
		return paced(ctx, s.client, taskType, rate, count, skip)
	}
	c, err := startChild(s, "enqueue", "-child-type", taskType, "-child-rate", strconv.Itoa(rate),
		"-child-count", strconv.Itoa(count), "-child-skip", strconv.Itoa(skip))
	if err != nil {
		return err
	}
	if _, err := c.expect("sent", time.Duration(count/rate+30)*time.Second); err != nil {
		c.kill()
		return err
	}
	return c.cmd.Wait()
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
