package runtime

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// testBundle is what most tests need: a migrated engine on a fresh
// database, a client on it, and the database for direct checks.
type testBundle struct {
	db     *dbtest.Database
	engine *Engine
	client *Client
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	db := dbtest.New(t)
	engine := MySQL(db.DB)
	dbtest.Must(t, "migrate", engine.Migrate(context.Background()))
	client, err := NewClient(engine, ClientConfig{})
	dbtest.Must(t, "new client", err)
	return &testBundle{db: db, engine: engine, client: client}
}

// testConfig is a worker config with short leases, for tests.
func testConfig() Config {
	return Config{
		LeaseTimeout:      time.Second,
		HeartbeatInterval: 200 * time.Millisecond,
		RecoveryInterval:  300 * time.Millisecond,
		MaxExecutionTime:  10 * time.Second,
		PollInterval:      50 * time.Millisecond,
		Logger:            quietLogger(),
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startWorker starts a worker with the given handlers and stops it when t
// ends.
func (b *testBundle) startWorker(t *testing.T, cfg Config, handlers map[string]HandlerFunc, opts ...HandlerOption) *Worker {
	t.Helper()
	w, err := NewWorker(b.engine, cfg)
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

// waitStatus polls until task id reaches want, failing t after timeout.
func (b *testBundle) waitStatus(t *testing.T, id TaskID, want Status, timeout time.Duration) TaskInfo {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		info, err := b.client.Get(context.Background(), id)
		dbtest.Must(t, "get", err)
		if info.Status == want {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %d: status %s after %s, want %s (last error %q)", id, info.Status, timeout, want, info.LastError)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
