package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

const protocolName = "the protocol's statements alone: claims of 1,000 and their completions, pipelined"

// protocol measures what the lease protocol's statements cost without a
// worker: the driver's claims of 1,000 tasks on one goroutine and their
// grouped completions on another, one batch behind, as a worker at
// saturation runs them, with no handler, execution or slot in between.
// Read against the ceiling, it splits the burn-down's distance from it
// into the statements' share and the worker's.
func protocol(ctx context.Context, o options, s *scratch, t *table) error {
	d := newDriver(s.kind, s.db)
	runtime.NewEngine(d) // attaches the runtime's hooks, as a worker's engine does
	if err := queue(ctx, s, "noop", o.burn); err != nil {
		return err
	}
	batches := make(chan []driver.CompletionRequest, 1)
	completed := make(chan error, 1)
	go func() { completed <- completeAll(ctx, d, batches) }()
	start := time.Now()
	claimed, err := claimAll(ctx, d, o.burn, batches)
	close(batches)
	if completeErr := <-completed; err == nil {
		err = completeErr
	}
	if err != nil {
		return err
	}
	t.add(protocolName, "tasks/s", float64(claimed)/time.Since(start).Seconds())
	return nil
}

// claimAll claims batches of up to 1,000 tasks until it took want and
// hands each to the completion loop.
func claimAll(ctx context.Context, d driver.Driver, want int, batches chan<- []driver.CompletionRequest) (int, error) {
	req := driver.ClaimRequest{Owner: "protocol", Lease: time.Minute, Types: []string{"noop"}, Max: 1000}
	claimed := 0
	for claimed < want {
		tasks, err := d.Claim(ctx, req)
		if err != nil {
			return claimed, err
		}
		if len(tasks) == 0 {
			return claimed, fmt.Errorf("protocol: a claim found nothing after %d of %d tasks", claimed, want)
		}
		reqs := make([]driver.CompletionRequest, len(tasks))
		for i, task := range tasks {
			reqs[i] = driver.CompletionRequest{Ref: driver.LeaseRef{ID: task.ID, Attempt: task.Attempt}}
		}
		batches <- reqs
		claimed += len(tasks)
	}
	return claimed, nil
}

// completeAll completes each batch with one grouped statement.
func completeAll(ctx context.Context, d driver.Driver, batches <-chan []driver.CompletionRequest) error {
	var failed error
	for reqs := range batches {
		if failed != nil {
			continue // drain, so the claim loop never blocks
		}
		oks, err := d.CompleteMany(ctx, "protocol", reqs)
		if lost := slices.Index(oks, false); err == nil && lost >= 0 {
			err = fmt.Errorf("protocol: the completion of task %d lost its lease", reqs[lost].Ref.ID)
		}
		failed = err
	}
	return failed
}

// newDriver opens the driver of kind on db.
func newDriver(kind string, db *sql.DB) driver.Driver {
	switch kind {
	case kindSQLite:
		return leasesqlite.New(db)
	case kindPostgres:
		return leasepostgres.New(db)
	}
	return leasemysql.New(db)
}
