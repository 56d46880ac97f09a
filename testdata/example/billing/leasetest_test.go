package billing

import (
	"context"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/leasetest"
	"github.com/leasegen/leasegen/runtime/leasetest/sqlitetest"
)

// How a service tests its own code with leasetest: a test engine in one
// line, an assertion on what the code enqueued (also inside its
// transaction, before the commit), and the handler run once through a real
// worker, its idempotent write committed with the task.
func TestWithLeasetest(t *testing.T) {
	engine, rt := sqlitetest.NewEngine(t)
	_, err := engine.DB().Exec(Schema)
	dbtest.Must(t, "schema", err)
	client, svc := NewClient(rt), &Service{}

	tx, err := engine.DB().BeginTx(bg, nil)
	dbtest.Must(t, "begin", err)
	_, err = client.EnqueueImportTx(bg, tx, sampleImport("r-1"))
	dbtest.Must(t, "enqueue in the transaction", err)
	leasetest.RequireEnqueued(t, leasetest.In(rt, tx), TaskImport, func(p ImportPayload) bool { return p.RequestID == "r-1" })
	dbtest.Must(t, "commit", tx.Commit())
	_, err = client.EnqueueNotify(bg, NotifyPayload{UserID: 42, Message: "imported"})
	dbtest.Must(t, "enqueue", err)
	leasetest.RequireNotEnqueued(t, leasetest.Committed(rt), TaskNotify, func(p NotifyPayload) bool { return p.UserID == 7 })

	register := func(r runtime.Registrar) error { return Register(r, svc) }
	imported := leasetest.WorkOne(t, engine, register) // the import has the higher priority
	notified := leasetest.WorkOne(t, engine, register)
	if imported.Type != TaskImport || imported.Status != runtime.StatusSuccess || notified.Type != TaskNotify || notified.Status != runtime.StatusSuccess {
		t.Errorf("worked %s (%s) then %s (%s), want import then notify, both SUCCESS", imported.Type, imported.Status, notified.Type, notified.Status)
	}
	var rows int
	dbtest.Must(t, "count imports", engine.DB().QueryRow("SELECT COUNT(*) FROM imports WHERE request_id = 'r-1'").Scan(&rows))
	if imports, _, notifies := svc.Received(); rows != 1 || len(imports) != 1 || len(notifies) != 1 {
		t.Errorf("%d import rows, %d imports and %d notifications handled; want one of each", rows, len(imports), len(notifies))
	}
	ctx, cancel := context.WithTimeout(bg, time.Second)
	defer cancel()
	if info, err := rt.Wait(ctx, notified.ID); err != nil || info.Status != runtime.StatusSuccess {
		t.Errorf("Wait on a finished task: %s, %v; want SUCCESS", info.Status, err)
	}
}
