package billing

import (
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

// The annotations' schedules reach the database through Register: reconcile
// ticks every two seconds and its handler sees each tick once; invoice_run
// waits for 02:30 in Berlin, with its fixed payload.
func TestPeriodicTasksFromAnnotations(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		b.startWorker(t)
		deadline := time.Now().Add(10 * time.Second)
		for len(b.service.Reconciled()) < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("reconcile ran for %v in 10 s, want two ticks", b.service.Reconciled())
			}
			time.Sleep(50 * time.Millisecond)
		}
		ticks := b.service.Reconciled()
		if d := ticks[1].Sub(ticks[0]); d != 2*time.Second || ticks[0].Unix()%2 != 0 {
			t.Errorf("reconcile ticks %v: want consecutive even seconds", ticks[:2])
		}
		list, err := b.rt.Schedules(bg)
		dbtest.Must(t, "schedules", err)
		byName := map[string]runtime.ScheduleInfo{}
		for _, s := range list {
			byName[s.Name] = s
		}
		if r := byName[TaskReconcile]; r.Spec != "every 2s" || r.Overlap != "skip" || r.Priority != 20 || r.Ticks < 2 || len(r.Workers) != 1 {
			t.Errorf("reconcile schedule = %+v", r)
		}
		berlin, _ := time.LoadLocation("Europe/Berlin")
		inv := byName[TaskInvoiceRun]
		if local := inv.NextRun.In(berlin); inv.Spec != "cron 30 2 * * * Europe/Berlin" || local.Hour() != 2 || local.Minute() != 30 ||
			time.Until(inv.NextRun) > 25*time.Hour || string(inv.Payload) != `{"dry_run":false}` || inv.Misfire != "once" {
			t.Errorf("invoice_run schedule = %+v (next run %s in Berlin)", inv, inv.NextRun.In(berlin))
		}
	})
}
