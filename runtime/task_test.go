package runtime

import (
	"context"
	"errors"
	"testing"
)

// An error that follows the end of an execution's context names the
// cause, and still wraps what the driver said.
func TestWithCause(t *testing.T) {
	driverErr := errors.New("write tcp: use of closed connection")
	live := context.Background()
	if got := withCause(live, driverErr); got != driverErr {
		t.Errorf("live context: %v, want the error unchanged", got)
	}
	if got := withCause(live, nil); got != nil {
		t.Errorf("no error: %v, want nil", got)
	}
	lost, cancel := context.WithCancelCause(live)
	cancel(ErrLeaseLost)
	for _, err := range []error{context.Canceled, driverErr} {
		got := withCause(lost, err)
		if !errors.Is(got, ErrLeaseLost) || !errors.Is(got, err) {
			t.Errorf("lost lease, %v: got %v, want ErrLeaseLost wrapping it", err, got)
		}
	}
	if got := withCause(lost, ErrLeaseLost); got != ErrLeaseLost {
		t.Errorf("the cause itself: %v, want it unchanged", got)
	}
}
