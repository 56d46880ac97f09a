package drivertest

import (
	"context"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

func testWorkerCompletesTask(t *testing.T, b *Bundle) {
	got := make(chan string, 1)
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"echo": func(ctx context.Context, task *runtime.Task) error {
			got <- string(task.Payload)
			task.SetResult("artifact-1")
			return nil
		},
	})
	id, err := b.Client.Enqueue(context.Background(), "echo", []byte(`{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	info := b.WaitStatus(t, id, runtime.StatusSuccess, 5*time.Second)
	if p := <-got; p != `{"x":1}` {
		t.Errorf("payload = %s", p)
	}
	if info.Result != "artifact-1" || info.Attempt != 1 || info.FinishedAt.IsZero() || !info.LeaseUntil.IsZero() {
		t.Errorf("finished task = %+v", info)
	}
}
