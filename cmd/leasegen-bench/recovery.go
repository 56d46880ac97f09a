package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// The recovery run's lease settings: short, so that a run takes seconds.
const (
	recoveryLease     = 2 * time.Second
	recoveryHeartbeat = 400 * time.Millisecond
	recoveryInterval  = time.Second
	recoveryPoll      = time.Second // the default PollInterval
	recoveryHeld      = 50
)

const recoveryBoundName = "recovery bound: lease + recovery interval + poll"

// recovery kill -9s a worker process holding running tasks and measures,
// for each of them, the delay from the kill until it runs again in a
// surviving worker (in this process, started before the kill). The kill
// comes at a random point of the survivor's recovery interval, as a crash
// would.
func recovery(ctx context.Context, s *scratch, t *table) error {
	if err := queue(ctx, s, "sleep", recoveryHeld); err != nil {
		return err
	}
	victim, err := startChild(s, "worker", "-child-id", "victim", "-child-type", "sleep", "-child-handler", "sleep",
		"-child-slots", strconv.Itoa(recoveryHeld), "-child-hold", strconv.Itoa(recoveryHeld),
		"-child-lease", recoveryLease.String(), "-child-heartbeat", recoveryHeartbeat.String(),
		"-child-recovery", recoveryInterval.String())
	if err != nil {
		return err
	}
	defer victim.kill()
	if _, err := victim.expect("ready", 30*time.Second); err != nil {
		return err
	}
	if _, err := victim.expect("holding", 30*time.Second); err != nil {
		return err
	}

	restarted := make(chan time.Time, recoveryHeld)
	survivor, err := runtime.NewWorker(s.engine, runtime.Config{
		WorkerID: "survivor", MaxConcurrency: recoveryHeld, LeaseTimeout: recoveryLease,
		HeartbeatInterval: recoveryHeartbeat, RecoveryInterval: recoveryInterval, PollInterval: recoveryPoll,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	err = survivor.Handle("sleep", func(context.Context, *runtime.Task) error {
		restarted <- time.Now()
		return nil
	})
	if err != nil {
		return err
	}
	if err := survivor.Start(ctx); err != nil {
		return err
	}
	defer survivor.Stop(ctx) //nolint:errcheck // the run is over

	time.Sleep(rand.N(recoveryInterval))
	killed := time.Now()
	victim.kill()
	bound := recoveryLease + recoveryInterval + recoveryPoll
	delays := make([]float64, 0, recoveryHeld)
	timeout := time.After(3 * bound)
	for len(delays) < recoveryHeld {
		select {
		case at := <-restarted:
			delays = append(delays, at.Sub(killed).Seconds())
		case <-timeout:
			return fmt.Errorf("recovery: %d of %d tasks ran again within %s of the kill", len(delays), recoveryHeld, 3*bound)
		}
	}
	slices.Sort(delays)
	name := fmt.Sprintf("recovery after kill -9, %d tasks held, lease %s:", recoveryHeld, recoveryLease)
	t.add(name+" first", "s", delays[0])
	t.add(strings.Repeat(" ", len(name))+" median", "s", delays[len(delays)/2])
	t.add(strings.Repeat(" ", len(name))+" last", "s", delays[len(delays)-1])
	t.add(recoveryBoundName, "s", bound.Seconds())
	return nil
}
