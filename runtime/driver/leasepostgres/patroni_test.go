package leasepostgres

import (
	"database/sql"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// patroni runs scripts/patroni.sh with args and returns what it printed.
func patroni(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("../../../scripts/patroni.sh", args...).Output()
	if err != nil {
		t.Fatalf("scripts/patroni.sh %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// Patroni's leader dies (SIGKILL of its Patroni and PostgreSQL, as a
// machine's crash) under three workers; Patroni promotes the synchronous
// standby once the leader's key expires (ttl 10 s). The workers, whose URL
// lists both nodes with target_session_attrs=read-write, go on against the
// new leader, and every task's effect commits once, none lost.
func TestPatroniLeaderKilled(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the Patroni case needs a cluster (make test starts one)")
	}
	url := pgtest.NewOn(t, pgtest.PatroniURL(t))
	b := systemtest.SetupOn(t, &harness, drivertest.OpenDB(t, &harness, url))
	const tasks = 1200
	r := systemtest.NewFaultRun(t, b, tasks, 3, func() *sql.DB { return harness.OpenPool(t, url) })
	t.Cleanup(func() { patroni(t, "start") })
	r.WaitFinished(t, 200, time.Minute)
	leader := patroni(t, "leader")
	patroni(t, "kill", leader)
	killedAt := time.Now()
	r.WaitFinished(t, 800, 2*time.Minute)
	restartAt := time.Now()
	patroni(t, "start") // the old leader comes back as a standby
	r.WaitFinished(t, tasks, 2*time.Minute)
	reran := r.Verify(t)

	pause := r.Book.LongestPause(killedAt, restartAt, nil)
	s := r.Stats()
	t.Logf("leader (node %s) killed: the workers paused %s at most until the standby took over; %d tasks ran again, 0 lost; %d recovered, %d self-fenced",
		leader, pause, reran, s.Recovered, s.SelfFenced)
}
