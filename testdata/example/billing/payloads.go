// Package billing is leasegen's example service: three task types, one
// idempotent, one unique, one plain.
package billing

import (
	"time"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/testdata/example/money"
)

//go:generate go run github.com/leasegen/leasegen/cmd/leasegen -schema schema.sql -alerts alerts.yml -dashboard dashboard.json -testhelpers

// ImportPayload imports one uploaded CSV file.
//
//leasegen:task name=import max_attempts=5 priority=10 timeout=5m idempotent
type ImportPayload struct {
	RequestID  string            `json:"request_id" leasegen:"key"`
	TenantID   string            `json:"tenant_id" leasegen:"owner"`
	FileURL    string            `json:"file_url"`
	Options    ImportOptions     `json:"options"`
	Columns    []string          `json:"columns"`
	Labels     map[string]string `json:"labels"`
	UploadedAt time.Time         `json:"uploaded_at"`
	Deadline   *time.Time        `json:"deadline,omitempty"`
	Audit
}

// ImportOptions shapes an import.
type ImportOptions struct {
	Delimiter  string `json:"delimiter"`
	SkipHeader bool   `json:"skip_header"`
	Limits     struct {
		MaxRows int `json:"max_rows"`
	} `json:"limits"`
}

// Audit says who asked for a task and why.
type Audit struct {
	Actor  string `json:"actor"`
	Reason string `json:"reason"`
}

// Tenant identifies a customer.
type Tenant string

type (
	// ExportPayload exports a tenant's invoices; one export per ExportID.
	// Its handler returns an ExportResult (Client.WaitExport reads it).
	//
	//leasegen:task unique concurrency=2 backoff=100ms lease=3s result=ExportResult
	ExportPayload struct {
		ExportID string       `json:"export_id" leasegen:"key"`
		Tenant   Tenant       `json:"tenant" leasegen:"owner"`
		Since    time.Time    `json:"since"`
		Minimum  money.Amount `json:"minimum"`
	}

	// ExportResult is what an export produced.
	ExportResult struct {
		File     string `json:"file"`
		Invoices int    `json:"invoices"`
	}

	// NotifyPayload tells a user something.
	//
	//leasegen:task priority=-1 max_attempts=3
	NotifyPayload struct {
		UserID   int64          `json:"user_id"`
		Message  string         `json:"message"`
		Channels []string       `json:"channels"`
		Totals   map[int]uint32 `json:"totals"`
	}
)

// ReconcilePayload checks, every two seconds, that the imports table holds
// one row per import; while the last check still runs, a tick is dropped.
//
//leasegen:task name=reconcile every=2s overlap=skip priority=20
type ReconcilePayload struct{}

// InvoiceRunPayload issues the day's invoices at 02:30 in Berlin; after an
// outage that missed runs, one run catches up.
//
//leasegen:task name=invoice_run cron="30 2 * * *" tz=Europe/Berlin misfire=once payload='{"dry_run":false}'
type InvoiceRunPayload struct {
	DryRun bool `json:"dry_run"`
}

// Settle charges an invoice, then mails the receipt, which reads the
// charge's id: a workflow, stored in one transaction, whose Receipt step
// starts only once Charge succeeded.
//
//leasegen:workflow
type Settle struct {
	Charge  ChargeInvoice `result:"ChargeID"`
	Receipt SendReceipt   `after:"Charge"`
}

// ChargeInvoice is the payload of Settle's first step.
type ChargeInvoice struct {
	InvoiceID string       `json:"invoice_id"`
	Amount    money.Amount `json:"amount"`
}

// ChargeID is what the Charge step returns.
type ChargeID string

// SendReceipt is the payload of Settle's second step.
type SendReceipt struct {
	Email string `json:"email"`
}

// Dun reminds each customer with an overdue invoice, a step each, then
// tallies the reminders: how many there are is known only once Overdue
// ran, and the tally runs even when some reminders failed.
//
//leasegen:workflow
type Dun struct {
	Overdue FindOverdue                    `leasegen:"max_attempts=3"`
	Remind  runtime.FanOut[RemindCustomer] `after:"Overdue" result:"bool" leasegen:"concurrency=4"`
	Tally   TallyReminders                 `after:"Remind" leasegen:"run_on_parent_failure"`
}

// FindOverdue is the payload of Dun's first step, which returns a
// RemindCustomer per email.
type FindOverdue struct {
	Emails []string `json:"emails"`
}

// RemindCustomer is the payload of each step of Dun's fan-out.
type RemindCustomer struct {
	Email string `json:"email"`
}

// TallyReminders is the payload of Dun's last step.
type TallyReminders struct{}
