package leasetest_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/leasetest"
	"github.com/leasegen/leasegen/runtime/leasetest/sqlitetest"
)

// exampleT stands in for the *testing.T of a service's test, so that the
// example runs: in a test, pass t itself.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func (*exampleT) Helper()                           {}
func (*exampleT) Fatalf(format string, args ...any) { log.Fatalf(format, args...) }
func (t *exampleT) Cleanup(f func())                { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) TempDir() string {
	dir, err := os.MkdirTemp("", "leasetest-example-")
	if err != nil {
		log.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (t *exampleT) done() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// A service's test: the code under test enqueues, the test asserts what
// it enqueued, in its transaction and once committed, and runs the task
// through a real worker.
func ExampleRequireEnqueued() {
	t := &exampleT{} // your test's t
	defer t.done()
	ctx := context.Background()

	engine, client := sqlitetest.NewEngine(t)
	tx, err := engine.DB().BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	// The code under test: it enqueues in its own transaction.
	if _, err := client.EnqueueTx(ctx, tx, "welcome", []byte(`{"user_id":42}`)); err != nil {
		log.Fatal(err)
	}

	type welcome struct {
		UserID int `json:"user_id"`
	}
	leasetest.RequireEnqueued(t, leasetest.In(client, tx), "welcome", func(p welcome) bool { return p.UserID == 42 })
	leasetest.RequireNotEnqueued[welcome](t, leasetest.Committed(client), "welcome", nil) // not before the commit
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}

	info := leasetest.WorkOne(t, engine, func(r runtime.Registrar) error {
		return r.Handle("welcome", func(context.Context, *runtime.Task) error { return nil })
	})
	fmt.Println(info.Type, info.Status)
	// Output: welcome SUCCESS
}
