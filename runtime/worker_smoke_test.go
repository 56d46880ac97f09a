package runtime

import (
	"context"
	"testing"
	"time"
)

func TestWorkerCompletesTask(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		got := make(chan string, 1)
		b.startWorker(t, testConfig(), map[string]HandlerFunc{
			"echo": func(ctx context.Context, task *Task) error {
				got <- string(task.Payload)
				task.SetResult("artifact-1")
				return nil
			},
		})
		id, err := b.client.Enqueue(context.Background(), "echo", []byte(`{"x":1}`))
		if err != nil {
			t.Fatal(err)
		}
		info := b.waitStatus(t, id, StatusSuccess, 5*time.Second)
		if p := <-got; p != `{"x":1}` {
			t.Errorf("payload = %s", p)
		}
		if info.Result != "artifact-1" || info.Attempt != 1 || info.FinishedAt.IsZero() || !info.LeaseUntil.IsZero() {
			t.Errorf("finished task = %+v", info)
		}
	})
}
