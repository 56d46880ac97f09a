package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// ThroughputMinute is one whole minute's finished tasks, over all types.
type ThroughputMinute = leasetype.ThroughputMinute

const (
	// throughputSettle is how long after a minute ends its finished tasks
	// are counted: a completion's instant is taken by its statement, a
	// moment before its transaction commits.
	throughputSettle = 10 * time.Second
	// throughputKeep is how long the counts are kept.
	throughputKeep = 24 * time.Hour
	// rollupInterval is how often each worker counts the minutes that
	// ended; the first worker to do so stores them.
	rollupInterval = time.Minute
)

// Throughput returns the tasks finished in each whole minute of the last
// window (at most a day), oldest first, over all types. Workers count
// each minute a few seconds after it ends; Throughput first counts the
// minutes no worker counted yet, up to an hour back, so it answers while
// no worker runs too. A minute missing from the list was not counted (no
// worker or client looked within the hour after it).
func (c *Client) Throughput(ctx context.Context, window time.Duration) ([]ThroughputMinute, error) {
	if window <= 0 || window > throughputKeep {
		return nil, fmt.Errorf("%w: Throughput window %s: want more than 0 and at most %s", ErrInvalidConfig, window, throughputKeep)
	}
	if _, err := bookkeeping.RollupThroughput(ctx, c.engine.tables, throughputSettle, throughputKeep); err != nil {
		return nil, c.engine.classify(err)
	}
	m, err := bookkeeping.Throughput(ctx, c.engine.tables, window)
	return m, c.engine.classify(err)
}

// rollup counts, about every minute, the tasks that finished in the
// minutes that ended, for Client.Throughput and the UI's chart.
type rollup struct {
	tables   driver.Tables
	logger   *slog.Logger
	workerID string
}

func newRollup(w *Worker) *rollup {
	return &rollup{tables: w.engine.tables, logger: w.cfg.Logger, workerID: w.cfg.WorkerID}
}

func (r *rollup) run(ctx context.Context, stop <-chan struct{}) {
	for {
		passCtx, cancel := context.WithTimeout(ctx, rollupInterval)
		if _, err := bookkeeping.RollupThroughput(passCtx, r.tables, throughputSettle, throughputKeep); err != nil {
			r.logger.Warn("leasegen: counting the tasks finished per minute failed; the next pass tries again",
				"worker", r.workerID, "err", err)
		}
		cancel()
		// Workers that started together spread their passes.
		jitter := time.Duration(rand.Int64N(int64(rollupInterval / 6)))
		select {
		case <-stop:
			return
		case <-time.After(rollupInterval - rollupInterval/12 + jitter):
		}
	}
}
