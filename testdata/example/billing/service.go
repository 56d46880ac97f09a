package billing

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// Schema is the service's own table: one row per committed import. Its
// primary key is the execution's (task, attempt), so that a task imported
// twice shows as two rows; MySQL Group Replication and Galera need a
// primary key on every table.
const Schema = `CREATE TABLE IF NOT EXISTS imports (
  request_id VARCHAR(64) NOT NULL,
  task_id    BIGINT      NOT NULL,
  attempt    INT         NOT NULL,
  file_url   VARCHAR(255) NOT NULL,
  PRIMARY KEY (task_id, attempt)
)`

// Service implements Handlers. It keeps what each handler received, so
// tests can compare it with what was enqueued.
type Service struct {
	// Work is how long HandleExport and HandleNotify take, so that a demo
	// has tasks running when it kills a worker. Imports stay quick: they
	// hold a transaction, and on SQLite the database's one write lock.
	Work time.Duration

	// BeforeCommit, when set, runs inside HandleImport after its write, in
	// its transaction: tests use it to make the lease run out before the
	// commit.
	BeforeCommit func(ctx context.Context, tx *sql.Tx, t *runtime.Task) error
	// Postgres makes the service's statements use PostgreSQL's $1, $2
	// placeholders instead of ?.
	Postgres bool

	mu          sync.Mutex
	imports     []ImportPayload
	exports     []ExportPayload
	notifies    []NotifyPayload
	reconciles  []time.Time // the ticks HandleReconcile ran for
	invoiceRuns []InvoiceRunPayload
	receipts    []string // "email: charge id", for each receipt sent
	tallies     []string // what HandleDunTally saw, a line each
}

var _ Handlers = (*Service)(nil)

// HandleImport records the import in the caller's transaction.
func (s *Service) HandleImport(ctx context.Context, tx *sql.Tx, t *runtime.Task, p ImportPayload) error {
	insert := "INSERT INTO imports (request_id, task_id, attempt, file_url) VALUES (?, ?, ?, ?)"
	if s.Postgres {
		insert = "INSERT INTO imports (request_id, task_id, attempt, file_url) VALUES ($1, $2, $3, $4)"
	}
	if _, err := tx.ExecContext(ctx, insert, p.RequestID, t.ID, t.Attempt, p.FileURL); err != nil {
		return fmt.Errorf("record import %s: %w", p.RequestID, err)
	}
	if s.BeforeCommit != nil {
		if err := s.BeforeCommit(ctx, tx, t); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.imports = append(s.imports, p)
	return nil
}

// HandleExport pretends to export; it returns the file it wrote.
func (s *Service) HandleExport(ctx context.Context, t *runtime.Task, p ExportPayload) (ExportResult, error) {
	if err := s.work(ctx); err != nil {
		return ExportResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exports = append(s.exports, p)
	return ExportResult{File: "export-" + p.ExportID + ".csv", Invoices: len(s.exports)}, nil
}

// HandleNotify pretends to notify.
func (s *Service) HandleNotify(ctx context.Context, _ *runtime.Task, p NotifyPayload) error {
	if err := s.work(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notifies = append(s.notifies, p)
	return nil
}

// HandleReconcile pretends to check the imports; it records its tick.
func (s *Service) HandleReconcile(_ context.Context, t *runtime.Task, _ ReconcilePayload) error {
	_, tick, ok := runtime.TickOf(t)
	if !ok {
		return runtime.Permanent(fmt.Errorf("reconcile task %d was not enqueued by its schedule", t.ID))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reconciles = append(s.reconciles, tick)
	return nil
}

// HandleInvoiceRun pretends to issue invoices.
func (s *Service) HandleInvoiceRun(_ context.Context, _ *runtime.Task, p InvoiceRunPayload) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.invoiceRuns = append(s.invoiceRuns, p)
	return nil
}

// HandleSettleCharge pretends to charge the invoice; it returns the
// charge's id, which the Receipt step reads.
func (s *Service) HandleSettleCharge(_ context.Context, t *runtime.Task, p ChargeInvoice) (ChargeID, error) {
	return ChargeID(fmt.Sprintf("ch-%s-%d", p.InvoiceID, p.Amount.Cents)), nil
}

// HandleSettleReceipt pretends to mail the receipt of the charge its
// parent step made.
func (s *Service) HandleSettleReceipt(_ context.Context, _ *runtime.Task, p SendReceipt, in SettleReceiptInputs) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.receipts = append(s.receipts, p.Email+": "+string(in.Charge))
	return nil
}

// HandleDunOverdue returns a reminder per overdue customer: Dun's fan-out
// runs a Remind step for each.
func (s *Service) HandleDunOverdue(_ context.Context, _ *runtime.Task, p FindOverdue) ([]RemindCustomer, error) {
	reminders := make([]RemindCustomer, len(p.Emails))
	for i, email := range p.Emails {
		reminders[i] = RemindCustomer{Email: email}
	}
	return reminders, nil
}

// HandleDunRemind pretends to mail a reminder; an address at
// bounce.invalid fails for good, as a hard bounce would.
func (s *Service) HandleDunRemind(_ context.Context, _ *runtime.Task, p RemindCustomer) (bool, error) {
	if strings.HasSuffix(p.Email, "@bounce.invalid") {
		return false, runtime.Permanent(fmt.Errorf("reminder to %s bounced", p.Email))
	}
	return true, nil
}

// HandleDunTally records which reminders were sent, in the order Overdue
// returned them: "sent" for each that succeeded, "failed" for the others.
func (s *Service) HandleDunTally(_ context.Context, _ *runtime.Task, _ TallyReminders, in DunTallyInputs) error {
	outcomes := make([]string, len(in.Remind))
	for i, sent := range in.Remind {
		outcomes[i] = "failed"
		if sent != nil && *sent {
			outcomes[i] = "sent"
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tallies = append(s.tallies, strings.Join(outcomes, " "))
	return nil
}

// Tallies returns what HandleDunTally recorded, a line per Dun workflow.
func (s *Service) Tallies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tallies...)
}

// Receipts returns the receipts HandleSettleReceipt sent.
func (s *Service) Receipts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.receipts...)
}

// Reconciled returns the ticks HandleReconcile ran for.
func (s *Service) Reconciled() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.reconciles...)
}

// work waits s.Work, or until ctx ends.
func (s *Service) work(ctx context.Context) error {
	if s.Work <= 0 {
		return nil
	}
	select {
	case <-time.After(s.Work):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Received returns copies of the payloads the handlers ran with.
func (s *Service) Received() ([]ImportPayload, []ExportPayload, []NotifyPayload) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ImportPayload(nil), s.imports...), append([]ExportPayload(nil), s.exports...), append([]NotifyPayload(nil), s.notifies...)
}
