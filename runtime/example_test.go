package runtime_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

// tempSQLite opens a migrated engine on a SQLite file in a new temporary
// folder, removed by the returned func.
func tempSQLite() (*runtime.Engine, func()) {
	dir, err := os.MkdirTemp("", "leasegen-example-")
	if err != nil {
		log.Fatal(err)
	}
	db, err := leasesqlite.Open(filepath.Join(dir, "tasks.db"))
	if err != nil {
		log.Fatal(err)
	}
	engine := runtime.NewEngine(leasesqlite.New(db))
	if err := engine.Migrate(context.Background()); err != nil {
		log.Fatal(err)
	}
	return engine, func() { db.Close(); os.RemoveAll(dir) }
}

// An engine on MySQL 8+ or MariaDB 10.6+: Open adds the DSN settings the
// driver needs (parseTime, UTC sessions, interpolated parameters).
func Example_mySQL() {
	db, err := leasemysql.Open("app:secret@tcp(127.0.0.1:3306)/app")
	if err != nil {
		log.Fatal(err)
	}
	engine := runtime.NewEngine(leasemysql.New(db))
	if err := engine.Migrate(context.Background()); err != nil {
		log.Fatal(err) // ErrUnavailable when the server is down, with what to do
	}
}

// An engine on PostgreSQL 13+, over pgx: workers in other processes are
// woken by LISTEN/NOTIFY when a task is enqueued.
func Example_postgreSQL() {
	db, err := leasepostgres.Open("postgres://app:secret@127.0.0.1:5432/app")
	if err != nil {
		log.Fatal(err)
	}
	engine := runtime.NewEngine(leasepostgres.New(db))
	if err := engine.Migrate(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// An engine on a SQLite file, shared by the processes of one machine; a
// client enqueues a task and a worker runs it.
func Example_sqlite() {
	ctx := context.Background()
	engine, cleanup := tempSQLite()
	defer cleanup()

	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		log.Fatal(err)
	}
	id, err := client.Enqueue(ctx, "greet", []byte(`{"name":"Ada"}`), runtime.WithPriority(10))
	if err != nil {
		log.Fatal(err)
	}

	w, err := runtime.NewWorker(engine, runtime.Config{})
	if err != nil {
		log.Fatal(err)
	}
	err = w.Handle("greet", func(ctx context.Context, t *runtime.Task) error {
		var p struct{ Name string }
		if err := json.Unmarshal(t.Payload, &p); err != nil {
			return runtime.Permanent(err) // no retry: the payload will not change
		}
		t.SetResult("hello, " + p.Name)
		return nil // an error retries the task with backoff
	}, runtime.WithConcurrency(4))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer w.Stop(ctx) // drains the running tasks, renewing their leases

	info, err := client.Wait(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Status, info.Result)
	// Output: SUCCESS hello, Ada
}

// An idempotent handler writes through the transaction that completes its
// task, fenced on its lease: the row and the completion commit together
// or not at all, and a second task with the same key skips the work.
func ExampleRunIdempotent() {
	ctx := context.Background()
	engine, cleanup := tempSQLite()
	defer cleanup()
	if _, err := engine.DB().ExecContext(ctx, "CREATE TABLE invoices (id TEXT PRIMARY KEY)"); err != nil {
		log.Fatal(err)
	}

	w, err := runtime.NewWorker(engine, runtime.Config{})
	if err != nil {
		log.Fatal(err)
	}
	err = w.Handle("invoice", func(ctx context.Context, t *runtime.Task) error {
		var invoice string // the payload is JSON: here a string
		if err := json.Unmarshal(t.Payload, &invoice); err != nil {
			return runtime.Permanent(err)
		}
		return runtime.RunIdempotent(ctx, t, invoice, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO invoices (id) VALUES (?)", invoice)
			return err
		})
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer w.Stop(ctx)

	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		log.Fatal(err)
	}
	for range 2 { // the same invoice twice
		id, err := client.Enqueue(ctx, "invoice", []byte(`"inv-1"`))
		if err != nil {
			log.Fatal(err)
		}
		if _, err := client.Wait(ctx, id); err != nil {
			log.Fatal(err)
		}
	}
	var rows int
	if err := engine.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM invoices").Scan(&rows); err != nil {
		log.Fatal(err)
	}
	fmt.Println(rows, "invoice row")
	// Output: 1 invoice row
}

// A periodic task: every worker that registers the schedule may fire it,
// and each tick is enqueued once.
func ExampleWithSchedule() {
	ctx := context.Background()
	engine, cleanup := tempSQLite()
	defer cleanup()

	ticked := make(chan time.Time, 1)
	w, err := runtime.NewWorker(engine, runtime.Config{})
	if err != nil {
		log.Fatal(err)
	}
	err = w.Handle("heartbeat", func(_ context.Context, t *runtime.Task) error {
		if _, tick, ok := runtime.TickOf(t); ok {
			select {
			case ticked <- tick:
			default:
			}
		}
		return nil
	}, runtime.WithSchedule(runtime.Periodic{Every: time.Second, SkipOverlap: true}))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer w.Stop(ctx)

	tick := <-ticked
	fmt.Println("ticked on a whole second:", tick.Equal(tick.Truncate(time.Second)))
	// Output: ticked on a whole second: true
}

// A typed result: the handler stores a value as JSON with the completion
// and WaitResult decodes it (what the generated WaitX methods call for a
// task annotated result=T).
func ExampleWaitResult() {
	ctx := context.Background()
	engine, cleanup := tempSQLite()
	defer cleanup()
	type report struct {
		Rows int `json:"rows"`
	}

	w, err := runtime.NewWorker(engine, runtime.Config{})
	if err != nil {
		log.Fatal(err)
	}
	err = w.Handle("import", func(ctx context.Context, t *runtime.Task) error {
		return t.SetResultJSON(report{Rows: 42}) // at most MaxResultBytes, as JSON
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer w.Stop(ctx)

	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		log.Fatal(err)
	}
	id, err := client.Enqueue(ctx, "import", nil)
	if err != nil {
		log.Fatal(err)
	}
	r, err := runtime.WaitResult[report](ctx, client, "import", id)
	if err != nil {
		log.Fatal(err) // a *runtime.TaskEndedError when the task failed
	}
	fmt.Println(r.Rows)
	// Output: 42
}

// A workflow: "charge" and "reserve" run first, side by side; "ship"
// starts once both succeeded and reads their results. The three steps are
// stored in one transaction.
func ExampleClient_EnqueueWorkflow() {
	ctx := context.Background()
	engine, cleanup := tempSQLite()
	defer cleanup()

	w, err := runtime.NewWorker(engine, runtime.Config{})
	if err != nil {
		log.Fatal(err)
	}
	for _, typ := range []string{"charge", "reserve"} {
		err := w.Handle(typ, func(ctx context.Context, t *runtime.Task) error {
			t.SetResult(t.Type + "-ok")
			return nil
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	err = w.Handle("ship", func(ctx context.Context, t *runtime.Task) error {
		parents, err := t.Parents(ctx) // by step name
		if err != nil {
			return err
		}
		for _, p := range parents {
			fmt.Println(p.Step, p.Status, p.Result)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer w.Stop(ctx)

	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		log.Fatal(err)
	}
	run, err := client.EnqueueWorkflow(ctx, runtime.Workflow{Name: "order", Steps: []runtime.Step{
		{Name: "charge", Request: runtime.Request{Type: "charge", Payload: []byte(`{"order":7}`)}},
		{Name: "reserve", Request: runtime.Request{Type: "reserve", Payload: []byte(`{"order":7}`)}},
		{Name: "ship", Request: runtime.Request{Type: "ship", Payload: []byte(`{"order":7}`)}, After: []string{"charge", "reserve"}},
	}})
	if err != nil {
		log.Fatal(err) // ErrInvalidTask for a cycle, an unknown parent, a duplicate step
	}
	if _, err := client.Wait(ctx, run.Tasks["ship"]); err != nil {
		log.Fatal(err)
	}
	// Output:
	// charge SUCCESS charge-ok
	// reserve SUCCESS reserve-ok
}
