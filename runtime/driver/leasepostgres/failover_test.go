package leasepostgres

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// The primary dies (SIGKILL) mid-run and its synchronous standby is
// promoted, as a failover manager (Patroni) does: workers whose URL lists
// both nodes with target_session_attrs=read-write go on against the new
// primary, and every task's effect commits once, none lost (the standby
// held every acknowledged commit).
func TestFailoverToPromotedStandby(t *testing.T) {
	t.Parallel()
	primary := pgtest.StartServer(t)
	standby := pgtest.StartStandby(t, primary)
	primary.NewDatabase("failover")
	url := fmt.Sprintf("postgres://postgres@%s,%s/failover?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		primary.Addr(), standby.Addr())
	b := systemtest.SetupOn(t, &harness, drivertest.OpenDB(t, &harness, url))
	const tasks = 1200
	r := systemtest.NewFaultRun(t, b, tasks, 3, func() *sql.DB { return harness.OpenPool(t, url) })
	r.WaitFinished(t, 200, time.Minute)
	primary.Kill()
	failedAt := time.Now()
	standby.Promote()
	promotedAt := time.Now()
	r.WaitFinished(t, tasks, 2*time.Minute)
	reran := r.Verify(t)

	pause := r.Book.LongestPause(failedAt, time.Now(), nil)
	s := r.Stats()
	t.Logf("primary killed, standby promoted in %s: the workers paused %s at most; %d tasks ran again, 0 lost; %d recovered, %d self-fenced",
		promotedAt.Sub(failedAt).Round(time.Millisecond), pause, reran, s.Recovered, s.SelfFenced)
}
