package billing

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	_ "modernc.org/sqlite"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
	"github.com/leasegen/leasegen/testdata/example/money"
)

var bg = context.Background()

type bundle struct {
	kind    string
	db      *sql.DB
	engine  *runtime.Engine
	client  *Client
	rt      *runtime.Client
	service *Service
}

// forEachEngine runs test on MySQL, PostgreSQL and SQLite: the generated
// API and the idempotency wrapper work unchanged on each.
func forEachEngine(t *testing.T, test func(t *testing.T, b *bundle)) {
	t.Parallel()
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			test(t, setup(t, kind))
		})
	}
}

func setup(t *testing.T, kind string) *bundle {
	t.Helper()
	var db *sql.DB
	var engine *runtime.Engine
	switch kind {
	case "mysql":
		db = dbtest.New(t).DB
		engine = runtime.NewEngine(leasemysql.New(db))
	case "postgres":
		var err error
		db, err = leasepostgres.Open(pgtest.New(t))
		dbtest.Must(t, "open", err)
		t.Cleanup(func() { db.Close() })
		engine = runtime.NewEngine(leasepostgres.New(db))
	default:
		var err error
		db, err = leasesqlite.Open(filepath.Join(t.TempDir(), "billing.db"))
		dbtest.Must(t, "open", err)
		t.Cleanup(func() { db.Close() })
		engine = runtime.NewEngine(leasesqlite.New(db))
	}
	dbtest.Must(t, "migrate", engine.Migrate(bg))
	_, err := db.Exec(Schema)
	dbtest.Must(t, "schema", err)
	rt, err := runtime.NewClient(engine, runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	return &bundle{kind: kind, db: db, engine: engine, client: NewClient(rt), rt: rt, service: &Service{Postgres: kind == "postgres"}}
}

// count runs a COUNT query.
func (b *bundle) count(t *testing.T, query string) int {
	t.Helper()
	var n int
	dbtest.Must(t, query, b.db.QueryRow(query).Scan(&n))
	return n
}

func (b *bundle) startWorker(t *testing.T) {
	t.Helper()
	w, err := runtime.NewWorker(b.engine, runtime.Config{
		LeaseTimeout:      time.Second,
		HeartbeatInterval: 200 * time.Millisecond,
		RecoveryInterval:  300 * time.Millisecond,
		PollInterval:      50 * time.Millisecond,
	})
	dbtest.Must(t, "worker", err)
	dbtest.Must(t, "register", Register(w, b.service))
	dbtest.Must(t, "start", w.Start(bg))
	t.Cleanup(func() { _ = w.Stop(bg) })
}

func (b *bundle) wait(t *testing.T, ids ...runtime.TaskID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	for _, id := range ids {
		info, err := b.client.Wait(ctx, id) // the generated client's Wait
		dbtest.Must(t, "wait", err)
		if info.Status != runtime.StatusSuccess {
			t.Fatalf("task %d (%s): %s, last error %q", id, info.Type, info.Status, info.LastError)
		}
	}
}

func sampleImport(id string) ImportPayload {
	deadline := time.Date(2027, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	p := ImportPayload{
		RequestID:  id,
		TenantID:   "tenant-" + id,
		FileURL:    "s3://bucket/" + id + ".csv",
		Columns:    []string{"a", "b"},
		Labels:     map[string]string{"source": "upload"},
		UploadedAt: time.Date(2026, 12, 2, 10, 0, 0, 123_456_789, time.UTC),
		Deadline:   &deadline,
		Audit:      Audit{Actor: "alice", Reason: "monthly"},
	}
	p.Options.Delimiter = ";"
	p.Options.SkipHeader = true
	p.Options.Limits.MaxRows = 1000
	return p
}

// Every generated enqueue method stores a task that reaches its handler with
// the payload intact: nested structs, embedded fields, maps, pointers,
// time.Time and a type from another package.
func TestGeneratedAPIRoundTrip(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		imports := []ImportPayload{sampleImport("one"), sampleImport("two"), sampleImport("three"), sampleImport("four")}
		export := ExportPayload{ExportID: "e1", Tenant: "acme", Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)),
			Minimum: money.Amount{Cents: 1250, Currency: "EUR"}}
		notify := NotifyPayload{UserID: 42, Message: "hi", Channels: []string{"mail"}, Totals: map[int]uint32{1: 2}}

		var ids []runtime.TaskID
		id, err := b.client.EnqueueImport(bg, imports[0])
		dbtest.Must(t, "EnqueueImport", err)
		ids = append(ids, id)
		tx, err := b.db.Begin()
		dbtest.Must(t, "begin", err)
		id, err = b.client.EnqueueImportTx(bg, tx, imports[1])
		dbtest.Must(t, "EnqueueImportTx", err)
		dbtest.Must(t, "commit", tx.Commit())
		ids = append(ids, id)
		batch, err := b.client.EnqueueImportBatch(bg, imports[2:])
		dbtest.Must(t, "EnqueueImportBatch", err)
		ids = append(ids, batch...)
		for _, enqueue := range []func() (runtime.TaskID, error){
			func() (runtime.TaskID, error) { return b.client.EnqueueExport(bg, export) },
			func() (runtime.TaskID, error) { return b.client.EnqueueNotify(bg, notify, runtime.WithPriority(5)) },
		} {
			id, err := enqueue()
			dbtest.Must(t, "enqueue", err)
			ids = append(ids, id)
		}
		// The annotation's defaults and the owner field reach the row; an
		// option overrides a default.
		info, _ := b.rt.Get(bg, ids[0])
		if info.Type != TaskImport || info.Priority != 10 || info.MaxAttempts != 5 || info.OwnerID != "tenant-one" {
			t.Errorf("import row: type %q priority %d max attempts %d owner %q", info.Type, info.Priority, info.MaxAttempts, info.OwnerID)
		}
		if info, _ := b.rt.Get(bg, ids[5]); info.Priority != 5 || info.MaxAttempts != 3 {
			t.Errorf("notify row: priority %d (option 5 overrides -1), max attempts %d", info.Priority, info.MaxAttempts)
		}

		b.startWorker(t)
		b.wait(t, ids...)
		gotImports, gotExports, gotNotifies := b.service.Received()
		byID := cmpopts.SortSlices(func(a, b ImportPayload) bool { return a.RequestID < b.RequestID })
		if diff := cmp.Diff(imports, gotImports, byID); diff != "" {
			t.Errorf("imports (-enqueued +handled):\n%s", diff)
		}
		export.Since = export.Since.UTC() // JSON keeps the instant; compare instants
		if len(gotExports) != 1 || !gotExports[0].Since.Equal(export.Since) {
			t.Fatalf("exports = %+v", gotExports)
		}
		gotExports[0].Since = export.Since
		if diff := cmp.Diff([]ExportPayload{export}, gotExports); diff != "" {
			t.Errorf("exports (-enqueued +handled):\n%s", diff)
		}
		if diff := cmp.Diff([]NotifyPayload{notify}, gotNotifies); diff != "" {
			t.Errorf("notifies (-enqueued +handled):\n%s", diff)
		}
		if n := b.count(t, "SELECT COUNT(*) FROM imports"); n != len(imports) {
			t.Errorf("%d import rows, want %d", n, len(imports))
		}
		if got, err := b.client.WaitExport(bg, ids[4]); err != nil || got != (ExportResult{File: "export-e1.csv", Invoices: 1}) {
			t.Errorf("WaitExport = %+v, %v; want the handler's result", got, err)
		}
		if _, err := b.client.WaitExport(bg, ids[0]); !errors.Is(err, runtime.ErrInvalidTask) {
			t.Errorf("WaitExport of an import task: %v, want ErrInvalidTask", err)
		}
	})
}

// A unique task's key deduplicates at enqueue; an idempotent task's key
// makes a second task with the same key skip its work and succeed. Either
// key empty is refused at the enqueue.
func TestKeys(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		first, err := b.client.EnqueueExport(bg, ExportPayload{ExportID: "same", Tenant: "a"})
		dbtest.Must(t, "export", err)
		again, err := b.client.EnqueueExport(bg, ExportPayload{ExportID: "same", Tenant: "a"})
		dbtest.Must(t, "export again", err)
		if first != again {
			t.Errorf("unique export enqueued twice: ids %d and %d", first, again)
		}
		if _, err := b.client.EnqueueExport(bg, ExportPayload{Tenant: "a"}); !errors.Is(err, runtime.ErrInvalidTask) {
			t.Errorf("unique export with an empty key: %v, want ErrInvalidTask (nothing would deduplicate it)", err)
		}
		if _, err := b.client.EnqueueImport(bg, sampleImport("")); !errors.Is(err, runtime.ErrInvalidTask) || !strings.Contains(err.Error(), "RequestID") {
			t.Errorf("idempotent import with an empty key: %v, want ErrInvalidTask naming RequestID (its work could not be told apart)", err)
		}
		imports, err := b.client.EnqueueImportBatch(bg, []ImportPayload{sampleImport("dup"), sampleImport("dup")})
		dbtest.Must(t, "imports", err)
		if imports[0] == imports[1] {
			t.Fatal("idempotent (not unique) imports share a task")
		}
		b.startWorker(t)
		b.wait(t, append(imports, first)...)
		if n := b.count(t, "SELECT COUNT(*) FROM imports WHERE request_id = 'dup'"); n != 1 {
			t.Errorf("duplicate key: %d import rows, want 1", n)
		}
		got, _, _ := b.service.Received()
		if len(got) != 1 {
			t.Errorf("HandleImport ran %d times for one key", len(got))
		}
		for _, id := range imports {
			if info, _ := b.rt.Get(bg, id); info.Status != runtime.StatusSuccess {
				t.Errorf("task %d: %s", id, info.Status)
			}
		}
	})
}

// A lease lost while the handler's transaction is open rolls its write back;
// the recovered task commits once.
func TestLostLeaseRollsBackTheWrite(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		expire := map[string]string{
			"mysql":    "UPDATE leasegen_tasks SET due_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?",
			"postgres": "UPDATE leasegen_tasks SET lease_until = now() - interval '1 second' WHERE id = $1",
			"sqlite":   "UPDATE leasegen_tasks SET due_at = CAST(unixepoch('subsec') * 1000 AS INTEGER) - 1000 WHERE id = ?",
		}[b.kind]
		// The lease runs out before the first attempt commits; the expiry is
		// written in the handler's own transaction, so it rolls back too.
		b.service.BeforeCommit = func(ctx context.Context, tx *sql.Tx, task *runtime.Task) error {
			if task.Attempt == 1 {
				_, err := tx.ExecContext(ctx, expire, task.ID)
				return err
			}
			return nil
		}
		id, err := b.client.EnqueueImport(bg, sampleImport("late"))
		dbtest.Must(t, "enqueue", err)
		b.startWorker(t)
		b.wait(t, id)
		rows, err := b.db.Query("SELECT attempt FROM imports WHERE request_id = 'late'")
		dbtest.Must(t, "query", err)
		var attempts []int
		for rows.Next() {
			var a int
			dbtest.Must(t, "scan", rows.Scan(&a))
			attempts = append(attempts, a)
		}
		rows.Close()
		if !slices.Equal(attempts, []int{2}) {
			t.Errorf("committed import rows from attempts %v, want only attempt 2", attempts)
		}
	})
}

// A payload that no longer decodes fails permanently, naming the type.
func TestUndecodablePayloadFailsPermanently(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		id, err := b.rt.Enqueue(bg, TaskNotify, []byte(`{"user_id":"not a number"}`))
		dbtest.Must(t, "enqueue", err)
		good, err := b.client.EnqueueNotify(bg, NotifyPayload{UserID: 1, Message: "fine"})
		dbtest.Must(t, "enqueue", err)
		b.startWorker(t)
		b.wait(t, good) // other tasks keep flowing
		deadline := time.Now().Add(5 * time.Second)
		for {
			info, _ := b.rt.Get(bg, id)
			if info.Status == runtime.StatusFailed {
				if info.Attempt != 1 || !strings.Contains(info.LastError, "decode notify payload") || !strings.Contains(info.LastError, "user_id") {
					t.Errorf("attempt %d, error %q", info.Attempt, info.LastError)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("status %s", info.Status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// A worker dedicated to one task type registers only that type's handler,
// and a batch enqueued inside a transaction appears when it commits and
// never when it rolls back.
func TestRegisterOneTypeAndBatchTx(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		notifies := []NotifyPayload{{UserID: 1, Message: "a"}, {UserID: 2, Message: "b"}}
		tx, err := b.db.BeginTx(bg, nil)
		dbtest.Must(t, "begin", err)
		if _, err := b.client.EnqueueNotifyBatchTx(bg, tx, notifies); err != nil {
			t.Fatal(err)
		}
		dbtest.Must(t, "rollback", tx.Rollback())
		if n := b.count(t, "SELECT COUNT(*) FROM leasegen_tasks"); n != 0 {
			t.Fatalf("%d tasks after the batch's transaction rolled back, want 0", n)
		}
		tx, err = b.db.BeginTx(bg, nil)
		dbtest.Must(t, "begin", err)
		ids, err := b.client.EnqueueNotifyBatchTx(bg, tx, notifies)
		dbtest.Must(t, "enqueue in tx", err)
		dbtest.Must(t, "commit", tx.Commit())
		export, err := b.client.EnqueueExport(bg, ExportPayload{ExportID: "e1", Tenant: "a"})
		dbtest.Must(t, "export", err)

		w, err := runtime.NewWorker(b.engine, runtime.Config{LeaseTimeout: time.Second, HeartbeatInterval: 200 * time.Millisecond, PollInterval: 50 * time.Millisecond})
		dbtest.Must(t, "worker", err)
		dbtest.Must(t, "register notify only", RegisterNotify(w, b.service))
		dbtest.Must(t, "start", w.Start(bg))
		t.Cleanup(func() { _ = w.Stop(bg) })
		b.wait(t, ids...)
		time.Sleep(200 * time.Millisecond)
		if info, _ := b.rt.Get(bg, export); info.Status != runtime.StatusQueued {
			t.Errorf("export task %s on a worker that registered only notify, want QUEUED", info.Status)
		}
		if _, _, got := b.service.Received(); len(got) != 2 {
			t.Errorf("notify handler ran %d times, want 2", len(got))
		}
	})
}

// registrar records what Register registers, as a test harness would.
type registrar []string

func (r *registrar) Handle(taskType string, _ runtime.HandlerFunc, _ ...runtime.HandlerOption) error {
	*r = append(*r, taskType)
	return nil
}

// Register takes any runtime.Registrar, so a harness can see every task
// type a package handles without a database.
func TestRegisterTakesARegistrar(t *testing.T) {
	var got registrar
	dbtest.Must(t, "register", Register(&got, &Service{}))
	if diff := cmp.Diff(registrar{TaskImport, TaskExport, TaskNotify, TaskReconcile, TaskInvoiceRun, TaskSettleCharge, TaskSettleReceipt, TaskDunOverdue, TaskDunRemind, TaskDunTally}, got); diff != "" {
		t.Errorf("registered types (-want +got):\n%s", diff)
	}
}

// The generated workflow API: EnqueueSettle stores both steps, Receipt
// starts after Charge and reads its typed result, WaitSettle returns
// once both succeeded, and the run names the workflow and its steps.
func TestGeneratedWorkflow(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		b.startWorker(t)
		run, err := b.client.EnqueueSettle(bg, Settle{
			Charge:  ChargeInvoice{InvoiceID: "inv-7", Amount: money.Amount{Cents: 1250, Currency: "EUR"}},
			Receipt: SendReceipt{Email: "ada@example.com"},
		})
		dbtest.Must(t, "EnqueueSettle", err)
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		defer cancel()
		dbtest.Must(t, "WaitSettle", b.client.WaitSettle(ctx, run))
		if diff := cmp.Diff([]string{"ada@example.com: ch-inv-7-1250"}, b.service.Receipts()); diff != "" {
			t.Errorf("receipts (-want +got):\n%s", diff)
		}
		w, err := b.rt.Workflow(bg, run.ID)
		dbtest.Must(t, "Workflow", err)
		if w.Name != WorkflowSettle || len(w.Steps) != 2 || w.Steps[0].TaskID != run.Charge || w.Steps[1].TaskID != run.Receipt ||
			len(w.Steps[1].After) != 1 || w.Steps[1].After[0] != "Charge" {
			t.Errorf("workflow %+v, want %s with Charge then Receipt after it", w, WorkflowSettle)
		}
		if info, _ := b.rt.Get(bg, run.Receipt); info.Type != TaskSettleReceipt {
			t.Errorf("Receipt's task type %q, want %q", info.Type, TaskSettleReceipt)
		}
	})
}

// The generated fan-out: Overdue's handler returns a reminder per email, a
// Remind step runs for each, and Tally, which runs on its parents'
// failure, reads their results in Overdue's order, with a failed one nil.
// WaitDun waits for the spawned steps too, and reports the bounce.
func TestGeneratedFanOut(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		b.startWorker(t)
		emails := []string{"ada@example.com", "bob@bounce.invalid", "cy@example.com", "di@example.com"}
		run, err := b.client.EnqueueDun(bg, Dun{Overdue: FindOverdue{Emails: emails}})
		dbtest.Must(t, "EnqueueDun", err)
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		defer cancel()
		err = b.client.WaitDun(ctx, run)
		var ended *runtime.TaskEndedError
		if !errors.As(err, &ended) || ended.Task.Type != TaskDunRemind || ended.Task.Status != runtime.StatusFailed {
			t.Fatalf("WaitDun: %v, want the bounced Remind step's *runtime.TaskEndedError", err)
		}
		if diff := cmp.Diff([]string{"sent failed sent sent"}, b.service.Tallies()); diff != "" {
			t.Errorf("tallies (-want +got):\n%s", diff)
		}
		w, err := b.rt.Workflow(bg, run.ID)
		dbtest.Must(t, "Workflow", err)
		var names []string
		for _, s := range w.Steps {
			names = append(names, s.Name)
			if !s.Status.Terminal() {
				t.Errorf("step %s is %s after WaitDun", s.Name, s.Status)
			}
		}
		if diff := cmp.Diff([]string{"Overdue", "Remind/0", "Remind/1", "Remind/2", "Remind/3", "Tally"}, names); diff != "" {
			t.Errorf("steps (-want +got):\n%s", diff)
		}
	})
}
