package billing_test

import (
	"context"
	"testing"

	"github.com/leasegen/leasegen/runtime/leasetest"
	"github.com/leasegen/leasegen/runtime/leasetest/sqlitetest"
	"github.com/leasegen/leasegen/testdata/example/billing"
	"github.com/leasegen/leasegen/testdata/example/billing/billingtest"
)

// The generated billingtest helpers bind each assertion to its task type
// and payload type: asserting an import with a NotifyPayload predicate, or
// on a renamed field, does not compile.
func TestGeneratedTypedHelpers(t *testing.T) {
	_, rt := sqlitetest.NewEngine(t)
	client := billing.NewClient(rt)
	ctx := context.Background()
	if _, err := client.EnqueueNotifyBatch(ctx, []billing.NotifyPayload{{UserID: 1, Message: "a"}, {UserID: 2, Message: "b"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.EnqueueExport(ctx, billing.ExportPayload{ExportID: "e1", Tenant: "t1"}); err != nil {
		t.Fatal(err)
	}
	got := billingtest.RequireNotifyEnqueued(t, leasetest.Committed(rt), func(p billing.NotifyPayload) bool { return p.UserID == 2 })
	if got.Payload.Message != "b" {
		t.Errorf("RequireNotifyEnqueued = %+v", got)
	}
	billingtest.RequireManyNotifyEnqueued(t, leasetest.Committed(rt), 2, nil)
	billingtest.RequireExportEnqueued(t, leasetest.Committed(rt), func(p billing.ExportPayload) bool { return p.ExportID == "e1" })
	billingtest.RequireImportNotEnqueued(t, leasetest.Committed(rt), nil)
}
