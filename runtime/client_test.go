package runtime

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// slowSecondRead is a real engine's driver whose reads of a task after the
// first block until their context ends, as a read does on a loaded server.
type slowSecondRead struct {
	driver.Driver
	reads atomic.Int32
}

func (d *slowSecondRead) Get(ctx context.Context, id leasetype.TaskID) (leasetype.TaskInfo, error) {
	if d.reads.Add(1) > 1 {
		<-ctx.Done()
		return leasetype.TaskInfo{}, ctx.Err()
	}
	return d.Driver.Tables().TaskGet(ctx, id)
}

// A wait whose context ends during a read returns the task as last read,
// with the context's error, as Wait promises.
func TestWaitEndingDuringAReadReturnsTheLastRead(t *testing.T) {
	e := newSQLiteEngine(t)
	id := enqueueN(t, e, "nobody-handles-it", 1)[0]
	slow := NewEngine(&slowSecondRead{Driver: e.driver})
	client, err := NewClient(slow, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 50*firstWait)
	defer cancel()
	info, err := client.Wait(ctx, id)
	if !errors.Is(err, context.DeadlineExceeded) || info.ID != id || info.Status != StatusQueued {
		t.Errorf("Wait = task %d %s, %v; want task %d QUEUED as last read and DeadlineExceeded", info.ID, info.Status, err, id)
	}
}
