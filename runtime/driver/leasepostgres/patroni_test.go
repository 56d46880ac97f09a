package leasepostgres

import (
	"database/sql"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
	"github.com/leasegen/leasegen/internal/testwait"
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

// patroniRun is a fault run of three workers on a database of the Patroni
// cluster, whose URL lists both nodes with target_session_attrs=read-write.
func patroniRun(t *testing.T) *systemtest.FaultRun {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the Patroni cases need a cluster (make test starts one)")
	}
	url := pgtest.NewOn(t, pgtest.PatroniURL(t))
	awaitOnEveryNode(t, url)
	b := systemtest.SetupOn(t, &harness, drivertest.OpenDB(t, &harness, url))
	t.Cleanup(func() { patroni(t, "start") })
	return systemtest.NewFaultRun(t, b, 1200, 3, func() *sql.DB { return harness.OpenPool(t, url) })
}

// awaitOnEveryNode waits until every node of url has replayed the
// creation of its database: pgx tries the nodes in order and gives up on a
// standby that answers "database does not exist", and a synchronous
// standby confirms a commit once it holds it, before it replays it.
func awaitOnEveryNode(t *testing.T, url string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	dbtest.Must(t, "parse the URL", err)
	hosts := append([]*pgconn.FallbackConfig{{Host: cfg.Host, Port: cfg.Port}}, cfg.Fallbacks...)
	for _, h := range hosts {
		node := fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Password, h.Host, h.Port, cfg.Database)
		db, err := sql.Open("pgx", node)
		dbtest.Must(t, "open "+h.Host, err)
		testwait.Until(t, func() bool { return db.Ping() == nil }, func() string {
			return fmt.Sprintf("database %s on %s:%d: %v", cfg.Database, h.Host, h.Port, db.Ping())
		})
		db.Close()
	}
}

// Patroni's leader dies (SIGKILL of its Patroni and PostgreSQL, as a
// machine's crash) under three workers; Patroni promotes the synchronous
// standby once the leader's key expires (ttl 10 s). The workers, whose URL
// lists both nodes with target_session_attrs=read-write, go on against the
// new leader, and every task's effect commits once, none lost.
func TestPatroniLeaderKilled(t *testing.T) {
	r := patroniRun(t)
	r.WaitFinished(t, 200, time.Minute)
	leader := patroni(t, "leader")
	patroni(t, "kill", leader)
	killedAt := time.Now()
	r.WaitFinished(t, 800, 2*time.Minute)
	restartAt := time.Now()
	patroni(t, "start") // the old leader comes back as a standby
	r.WaitFinished(t, r.Tasks, 2*time.Minute)
	reran := r.Verify(t)

	pause := r.Book.LongestPause(killedAt, restartAt, nil)
	s := r.Stats()
	t.Logf("leader (node %s) killed: the workers paused %s at most until the standby took over; %d tasks ran again, 0 lost; %d recovered, %d self-fenced",
		leader, pause, reran, s.Recovered, s.SelfFenced)
}

// Patroni's leader freezes (SIGSTOP of its Patroni and PostgreSQL: it
// still accepts TCP connections, and answers nothing) under three
// workers; Patroni promotes the standby once the leader's key expires. The
// workers leave the frozen node (a statement there ends with its
// deadline, a new connection gives up after connect_timeout) and finish
// 600 tasks on the new leader while the old one stays frozen. Thawed, the
// old leader finds its key gone and becomes a standby; its commits wait for
// a synchronous standby meanwhile, so none of them lands on the wrong side.
func TestPatroniLeaderFrozen(t *testing.T) {
	r := patroniRun(t)
	r.WaitFinished(t, 200, time.Minute)
	leader := patroni(t, "leader")
	patroni(t, "freeze", leader)
	t.Cleanup(func() { patroni(t, "thaw", leader) })
	frozenAt := time.Now()
	r.WaitFinished(t, 800, 2*time.Minute)
	thawAt := time.Now()
	patroni(t, "thaw", leader)
	patroni(t, "start")
	r.WaitFinished(t, r.Tasks, 2*time.Minute)
	reran := r.Verify(t)
	s := r.Stats()
	t.Logf("leader (node %s) frozen: the workers paused %s at most, then finished 600 tasks on the new leader in %s while it stayed frozen; %d tasks ran again, 0 lost; %d recovered, %d self-fenced",
		leader, r.Book.LongestPause(frozenAt, thawAt, nil), thawAt.Sub(frozenAt).Round(time.Millisecond), reran, s.Recovered, s.SelfFenced)
}

// Three worker hosts, each a network namespace with its worker process on
// the cluster's URL (both nodes, read-write), and the first cut off the
// network mid-run: the others recover its tasks and every task's effect
// commits once.
func TestPatroniWorkerHostCutOff(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Patroni cases need a cluster (make test starts one)")
	}
	url := pgtest.NewOn(t, pgtest.PatroniURL(t))
	awaitOnEveryNode(t, url)
	systemtest.HostCutOff(t, systemtest.SetupOn(t, &harness, drivertest.OpenDB(t, &harness, url)), []string{url})
}
