package billing_test

import (
	"context"
	"testing"

	"github.com/leasegen/leasegen/runtime/leasetest"
	"github.com/leasegen/leasegen/testdata/example/billing"
	"github.com/leasegen/leasegen/testdata/example/billing/billingtest"
)

// The generated billingtest helpers bind each assertion to its task type
// and payload type: asserting an import with a NotifyPayload predicate, or
// on a renamed field, does not compile.
func TestGeneratedTypedHelpers(t *testing.T) {
	engine, rt := leasetest.NewEngine(t)
	client := billing.NewClient(rt)
	ctx := context.Background()
	if _, err := client.EnqueueNotifyBatch(ctx, []billing.NotifyPayload{{UserID: 1, Message: "a"}, {UserID: 2, Message: "b"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.EnqueueExport(ctx, billing.ExportPayload{ExportID: "e1", Tenant: "t1"}); err != nil {
		t.Fatal(err)
	}
	got := billingtest.RequireNotifyEnqueued(t, engine.DB(), func(p billing.NotifyPayload) bool { return p.UserID == 2 })
	if got.Payload.Message != "b" {
		t.Errorf("RequireNotifyEnqueued = %+v", got)
	}
	billingtest.RequireManyNotifyEnqueued(t, engine.DB(), 2, nil)
	billingtest.RequireExportEnqueued(t, engine.DB(), func(p billing.ExportPayload) bool { return p.ExportID == "e1" })
	billingtest.RequireImportNotEnqueued(t, engine.DB(), nil)
}
