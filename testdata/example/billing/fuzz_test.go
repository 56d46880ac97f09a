package billing

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/runtime"
)

// captureNotify records the payload the adapter decoded.
type captureNotify struct{ got *NotifyPayload }

func (c captureNotify) HandleNotify(_ context.Context, _ *runtime.Task, p NotifyPayload) error {
	*c.got = p
	return nil
}

// FuzzNotifyPayloadDecoding feeds any bytes to the generated adapter, as a
// corrupt or outdated stored payload would arrive: it never panics, a
// payload that does not decode fails permanently (naming the task type),
// and one that does reaches the handler and survives a round trip.
func FuzzNotifyPayloadDecoding(f *testing.F) {
	for _, seed := range []string{
		`{"user_id":42,"message":"hi","channels":["mail"],"totals":{"1":2}}`,
		`{"user_id":"not a number"}`,
		`{"totals":{"x":1}}`,
		`null`, `[]`, `{`, "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got NotifyPayload
		err := handleNotify(captureNotify{&got})(context.Background(), &runtime.Task{Type: TaskNotify, Payload: data})
		if err != nil {
			if !runtime.IsPermanent(err) || !strings.Contains(err.Error(), "decode notify payload") {
				t.Fatalf("decode error is not a permanent failure naming the task type: %v", err)
			}
			return
		}
		again, err := runtime.EncodePayload(got)
		if err != nil {
			t.Fatal(err)
		}
		var back NotifyPayload
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, back); diff != "" {
			t.Fatalf("round trip changed the payload (-decoded +again):\n%s", diff)
		}
	})
}
