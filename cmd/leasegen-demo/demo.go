package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/testdata/example/billing"
	"github.com/leasegen/leasegen/testdata/example/money"
)

// runDemo enqueues, runs the worker processes with one crash, shows
// progress and ends with the summary's checks.
func runDemo(c config) error {
	if c.dsn == "" {
		dir, err := os.MkdirTemp("", "leasegen-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		c.sqlite = filepath.Join(dir, "tasks.db")
	}
	ctx := context.Background()
	engine, where, err := openEngine(c)
	if err != nil {
		return err
	}
	if err := engine.Migrate(ctx); err != nil {
		return err
	}
	if _, err := engine.DB().ExecContext(ctx, billing.Schema); err != nil {
		return fmt.Errorf("create the example service's table: %w", err)
	}
	fmt.Printf("leasegen demo on %s: %d tasks, %d worker processes, lease %s, recovery every %s\n",
		where, c.tasks, c.workers, c.lease, c.recovery)

	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		return err
	}
	run := fmt.Sprintf("run%d-", time.Now().UnixNano())
	ids, imports, workflows, err := enqueue(ctx, billing.NewClient(client), run, c.tasks)
	if err != nil {
		return err
	}
	first, last := slices.Min(ids), slices.Max(ids)
	fmt.Printf("enqueued %d tasks (%d imports, notifications and exports in one batch per type, and %d Settle workflows of two steps)\n",
		len(ids), imports, workflows)

	var web *webUI
	if c.ui != "" {
		if web, err = startUI(engine, c.ui); err != nil {
			return err
		}
	}
	procs, err := startWorkers(c)
	if err != nil {
		return err
	}
	defer procs.stopAll()

	watch := newProgress(client, first, last)
	start := time.Now()
	var crash *crashReport
	var elapsed time.Duration // until the last task finished
	for {
		counts, err := watch.sample(ctx)
		if err != nil {
			return err
		}
		watch.show(counts, procs.kills)
		if crash == nil && counts.finished() >= len(ids)/2 { // past the quick imports
			if crash, err = procs.crashOne(ctx, client); err != nil {
				return err
			}
			watch.note(fmt.Sprintf("kill -9 %s while it ran %d tasks; restarted it as %s", crash.victim, len(crash.held), crash.replacement))
		}
		if counts.finished() == len(ids) && elapsed == 0 {
			elapsed = time.Since(start)
		}
		// Done, once the periodic task ticked too (a tick every 2 s).
		if elapsed > 0 && (counts[ticksKey] > 0 || time.Since(start) > 5*time.Second) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	watch.done()
	procs.stopAll()
	err = summarize(ctx, engine, client, c, summaryInput{
		run: run, first: first, last: last, tasks: len(ids), imports: imports, workflows: workflows, crash: crash, elapsed: elapsed,
	})
	if web != nil {
		web.holdUntilInterrupted()
	}
	return err
}

// enqueue stores the demo's n tasks: one Settle workflow (a charge, then
// its receipt) per 50, and of the rest about half imports (idempotent:
// each commits one row), notifications and a few exports that work for a
// while, at three priorities.
func enqueue(ctx context.Context, client *billing.Client, run string, n int) (ids []runtime.TaskID, imports, workflows int, err error) {
	workflows = n / 50
	for i := range workflows {
		w, err := client.EnqueueSettle(ctx, billing.Settle{
			Charge:  billing.ChargeInvoice{InvoiceID: fmt.Sprintf("%s%d", run, i), Amount: money.Amount{Cents: int64(100 + i), Currency: "EUR"}},
			Receipt: billing.SendReceipt{Email: fmt.Sprintf("customer-%d@example.com", i)},
		})
		if err != nil {
			return nil, 0, 0, err
		}
		ids = append(ids, w.Charge, w.Receipt)
	}
	var im []billing.ImportPayload
	var no []billing.NotifyPayload
	var ex []billing.ExportPayload
	for i := range n - 2*workflows {
		switch {
		case i%50 == 0: // exports run at most two at a time (concurrency=2)
			ex = append(ex, billing.ExportPayload{ExportID: fmt.Sprintf("%s%d", run, i), Tenant: billing.Tenant(fmt.Sprintf("tenant-%d", i%7))})
		case i%2 == 0:
			im = append(im, billing.ImportPayload{RequestID: fmt.Sprintf("%s%d", run, i), TenantID: fmt.Sprintf("tenant-%d", i%7),
				FileURL: fmt.Sprintf("s3://demo/%d.csv", i), UploadedAt: time.Now().UTC()})
		default:
			no = append(no, billing.NotifyPayload{UserID: int64(i), Message: "your import is ready"})
		}
	}
	for _, batch := range []func() ([]runtime.TaskID, error){
		func() ([]runtime.TaskID, error) { return client.EnqueueImportBatch(ctx, im) },
		func() ([]runtime.TaskID, error) { return client.EnqueueNotifyBatch(ctx, no) },
		func() ([]runtime.TaskID, error) { return client.EnqueueExportBatch(ctx, ex, runtime.WithPriority(20)) },
	} {
		got, err := batch()
		if err != nil {
			return nil, 0, 0, err
		}
		ids = append(ids, got...)
	}
	return ids, len(im), workflows, nil
}
