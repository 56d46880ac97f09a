package systemtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
)

// Metadata travels from the enqueue to the handler and into TaskInfo, on
// the one-row and the batch insert paths; options merge, the last one
// winning a key; a task without any has none.
func testMetadataReachesHandler(t *testing.T, b *Bundle) {
	trace := map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "req": "r1"}
	one, err := b.Client.Enqueue(bg, "md", []byte(`{}`), runtime.WithMetadata(trace), runtime.WithMetadata(map[string]string{"req": "r2", "ü": "ß"}))
	dbtest.Must(t, "enqueue", err)
	want := map[string]string{"traceparent": trace["traceparent"], "req": "r2", "ü": "ß"}
	batch, err := b.Client.EnqueueMany(bg, []runtime.Request{
		{Type: "md", Payload: []byte(`{}`), Options: []runtime.EnqueueOption{runtime.WithMetadata(map[string]string{"n": "1"})}},
		{Type: "md", Payload: []byte(`{}`)},
		{Type: "md", Payload: []byte(`{}`), Options: []runtime.EnqueueOption{runtime.WithMetadata(map[string]string{"n": "3"})}},
	})
	dbtest.Must(t, "enqueue many", err)
	stored := map[runtime.TaskID]map[string]string{one: want, batch[0]: {"n": "1"}, batch[1]: nil, batch[2]: {"n": "3"}}
	for id, md := range stored {
		info, err := b.Client.Get(bg, id)
		dbtest.Must(t, "get", err)
		if diff := cmp.Diff(md, info.Metadata); diff != "" {
			t.Errorf("task %d: TaskInfo.Metadata (-want +got):\n%s", id, diff)
		}
	}
	infos, err := b.Client.List(bg, runtime.Filter{Type: "md"})
	dbtest.Must(t, "list", err)
	for _, info := range infos {
		if diff := cmp.Diff(stored[info.ID], info.Metadata); diff != "" {
			t.Errorf("task %d: listed metadata (-want +got):\n%s", info.ID, diff)
		}
	}

	seen := make(chan *runtime.Task, len(stored))
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{"md": func(_ context.Context, task *runtime.Task) error {
		seen <- task
		return nil
	}})
	for range stored {
		select {
		case task := <-seen:
			if diff := cmp.Diff(stored[task.ID], task.Metadata); diff != "" {
				t.Errorf("task %d: the handler's Task.Metadata (-want +got):\n%s", task.ID, diff)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the worker did not run every task within 5s")
		}
	}
}

// A task whose stored metadata does not decode (a row edited by hand)
// fails for good without its handler running, saying why.
func testUnreadableMetadataFailsTask(t *testing.T, b *Bundle) {
	id := b.Enqueue(t, "md", runtime.WithMetadata(map[string]string{"k": "v"}))
	b.DB.MustExec(t, "UPDATE leasegen_tasks SET metadata = 'not json' WHERE id = ?", id)
	if _, err := b.Client.Get(bg, id); err == nil || !strings.Contains(err.Error(), "metadata is not a JSON object") {
		t.Errorf("Get of the edited row: %v, want an error naming the metadata", err)
	}
	ran := make(chan struct{}, 1)
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{"md": func(context.Context, *runtime.Task) error {
		ran <- struct{}{}
		return nil
	}})
	b.Signals.Await(t, testwait.Bound, func() bool {
		return b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE id = ? AND status = 'FAILED' AND last_error LIKE '%metadata%'", id) == 1
	}, func() string { return "the task with unreadable metadata did not fail naming its metadata" })
	select {
	case <-ran:
		t.Error("the handler ran a task whose metadata does not decode")
	default:
	}
}
