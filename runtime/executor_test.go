package runtime

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

// errAfterCommit is what committedThenFailed's completions return.
var errAfterCommit = errors.New("connection lost after COMMIT")

// committedThenFailed completes each execution and then reports an
// error, as PostgreSQL may when the connection drops after its COMMIT.
type committedThenFailed struct{ driver.Driver }

func (d committedThenFailed) Complete(ctx context.Context, q driver.DBTX, owner string, ref driver.LeaseRef, result string) (bool, error) {
	_, _ = d.Driver.Complete(ctx, q, owner, ref, result)
	return false, errAfterCommit
}

func (d committedThenFailed) CompleteMany(ctx context.Context, owner string, reqs []driver.CompletionRequest) ([]bool, error) {
	_, _ = d.Driver.CompleteMany(ctx, owner, reqs)
	return make([]bool, len(reqs)), errAfterCommit
}

// A completion whose COMMIT committed and then reported an error is
// logged as what it is: the task is SUCCESS, not left to recovery.
func TestWriteErrorAfterCommitSaysTheTaskFinished(t *testing.T) {
	db, err := leasesqlite.Open(filepath.Join(t.TempDir(), "tasks.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := NewEngine(committedThenFailed{leasesqlite.New(db)})
	if err := e.Migrate(bg); err != nil {
		t.Fatal(err)
	}
	var logs testwait.Text
	startWorker(t, e, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, "t", func(context.Context, *Task) error { return nil })
	c, _ := NewClient(e, ClientConfig{})
	if _, err := c.Enqueue(bg, "t", nil); err != nil {
		t.Fatal(err)
	}
	logs.Await(t, testwait.Bound, func() bool { return strings.Contains(logs.String(), "leasegen: complete") },
		func() string { return "no log line about the completion: " + logs.String() })
	if got := logs.String(); !strings.Contains(got, "reported an error, yet the task is SUCCESS") || strings.Contains(got, "recovery will requeue") {
		t.Errorf("log after a completion that committed and then failed:\n%s\nwant it to say the task is SUCCESS, not that recovery will requeue it", got)
	}
}
