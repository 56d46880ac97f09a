package systemtest

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

// Bundle is what most system cases need: a migrated engine on a fresh
// database, its driver, a client on it, and the database for direct
// checks.
type Bundle struct {
	*drivertest.Bundle
	Engine *runtime.Engine
	Client *runtime.Client
	// Signals hears what Engine's workers report.
	Signals *Signals
}

// Setup migrates a fresh database of h and returns the bundle on it.
func Setup(t testing.TB, h *drivertest.Harness) *Bundle {
	t.Helper()
	return SetupOn(t, h, drivertest.NewDB(t, h))
}

// SetupOn is Setup on an existing database.
func SetupOn(t testing.TB, h *drivertest.Harness, db *drivertest.DB) *Bundle {
	t.Helper()
	d := h.New(db.DB)
	signals := newSignals()
	b := &Bundle{Bundle: drivertest.NewBundle(h, db, d), Engine: runtime.NewEngine(d, runtime.WithObserver(signals)), Signals: signals}
	dbtest.Must(t, "migrate", b.Engine.Migrate(context.Background()))
	client, err := runtime.NewClient(b.Engine, runtime.ClientConfig{})
	dbtest.Must(t, "new client", err)
	b.Client = client
	return b
}

// engine returns a new engine on a pool of h's.
func engine(h *drivertest.Harness, db *sql.DB) *runtime.Engine { return runtime.NewEngine(h.New(db)) }

// EngineOn returns a new engine on another pool of the bundle's database,
// whose workers report to b.Signals.
func (b *Bundle) EngineOn(db *sql.DB) *runtime.Engine {
	return runtime.NewEngine(b.H.New(db), runtime.WithObserver(b.Signals))
}

// Config is a worker config for the cases: leases of 5 s renewed every
// second, which no stall of a loaded machine outlasts, and short poll and
// recovery periods. A case that needs a lease to end forces it (Expire)
// or takes ShortLeases.
func Config() runtime.Config {
	return runtime.Config{
		LeaseTimeout:      5 * time.Second,
		HeartbeatInterval: time.Second,
		RecoveryInterval:  300 * time.Millisecond,
		MaxExecutionTime:  10 * time.Second,
		PollInterval:      50 * time.Millisecond,
		Logger:            QuietLogger(),
	}
}

// ShortLeases is Config with 1 s leases renewed every 200 ms, for the
// cases whose subject is a lease running out: kill -9, cut connections,
// self-fencing, draining past a lease. What they assert holds however a
// loaded machine stalls a worker: a stalled worker loses its lease like a
// killed one, and the ledger still shows nothing lost and nothing
// completed twice.
func ShortLeases() runtime.Config {
	cfg := Config()
	cfg.LeaseTimeout, cfg.HeartbeatInterval = time.Second, 200*time.Millisecond
	return cfg
}

// QuietLogger discards what it is given.
func QuietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Enqueue enqueues a task of typ with an empty JSON payload.
func (b *Bundle) Enqueue(t testing.TB, typ string, opts ...runtime.EnqueueOption) runtime.TaskID {
	t.Helper()
	id, err := b.Client.Enqueue(context.Background(), typ, []byte(`{}`), opts...)
	dbtest.Must(t, "enqueue", err)
	return id
}

// StartWorker starts a worker with the given handlers and stops it when t
// ends.
func (b *Bundle) StartWorker(t testing.TB, cfg runtime.Config, handlers map[string]runtime.HandlerFunc, opts ...runtime.HandlerOption) *runtime.Worker {
	t.Helper()
	w, err := runtime.NewWorker(b.Engine, cfg)
	dbtest.Must(t, "new worker", err)
	for typ, fn := range handlers {
		dbtest.Must(t, "handle "+typ, w.Handle(typ, fn, opts...))
	}
	dbtest.Must(t, "start worker", w.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = w.Stop(ctx)
	})
	return w
}

// WaitStatus waits until task id reaches want, looking again at each
// report of the bundle's workers, and fails t after testwait.Bound.
func (b *Bundle) WaitStatus(t testing.TB, id runtime.TaskID, want runtime.Status) runtime.TaskInfo {
	t.Helper()
	var info runtime.TaskInfo
	b.Signals.Await(t, testwait.Bound, func() bool {
		var err error
		info, err = b.Client.Get(context.Background(), id)
		dbtest.Must(t, "get", err)
		return info.Status == want
	}, func() string {
		return fmt.Sprintf("task %d is %s, want %s (last error %q)", id, info.Status, want, info.LastError)
	})
	return info
}

var bg = context.Background()

// StatusCounts counts the stored tasks by status, with the driver's one
// grouped count (a test polls it: it must cost what a COUNT(*) does).
func (b *Bundle) StatusCounts(t testing.TB) map[runtime.Status]int {
	t.Helper()
	counts, err := statusCounts(bg, b.Driver)
	dbtest.Must(t, "count the tasks", err)
	return counts
}

func statusCounts(ctx context.Context, d driver.Driver) (map[runtime.Status]int, error) {
	rows, err := d.Tables().TaskCountByTypeStatus(ctx)
	counts := map[runtime.Status]int{}
	for _, c := range rows {
		counts[c.Status] += c.Tasks
	}
	return counts, err
}

// Total counts the stored tasks.
func (b *Bundle) Total(t testing.TB) int {
	t.Helper()
	n := 0
	for _, c := range b.StatusCounts(t) {
		n += c
	}
	return n
}

// Unfinished counts the stored tasks that have not succeeded.
func (b *Bundle) Unfinished(t testing.TB) int {
	t.Helper()
	n := 0
	for status, c := range b.StatusCounts(t) {
		if status != runtime.StatusSuccess {
			n += c
		}
	}
	return n
}

// RunningOf counts the tasks that owner runs.
func (b *Bundle) RunningOf(t testing.TB, owner string) int {
	t.Helper()
	running, err := b.Driver.Tables().TaskRunningByOwner(bg)
	dbtest.Must(t, "count the running tasks", err)
	return running[owner]
}

// Tasks lists every task f selects, newest first, a page at a time.
func (b *Bundle) Tasks(t testing.TB, f runtime.Filter) []runtime.TaskInfo {
	t.Helper()
	var all []runtime.TaskInfo
	for f.Limit = 1000; ; {
		page, err := b.Client.List(bg, f)
		dbtest.Must(t, "list", err)
		all = append(all, page...)
		if len(page) < f.Limit {
			return all
		}
		f.BeforeID = page[len(page)-1].ID
	}
}
