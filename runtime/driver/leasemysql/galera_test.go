package leasemysql

import (
	"database/sql"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// The Galera cases share the cluster of dbtest.EnvGaleraDSNs, which
// TestGaleraNodeKilled takes a node of down: none runs in parallel.

// galeraDB creates a database on the first node of the Galera cluster and
// returns it with the database's DSN through every node.
func galeraDB(t *testing.T) (*drivertest.DB, []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the Galera cases need a cluster (make test starts one)")
	}
	nodes := dbtest.GaleraNodes(t)
	d := dbtest.NewOn(t, nodes[0])
	dsns := make([]string, len(nodes))
	for i, node := range nodes {
		cfg, err := mysql.ParseDSN(node)
		dbtest.Must(t, "node DSN", err)
		dsns[i] = harness.WithServerAddr(d.DSN, cfg.Addr)
	}
	return drivertest.OpenDB(t, &harness, d.DSN), dsns
}

// galera runs scripts/galera.sh with args: the cluster's nodes are its.
func galera(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("../../../scripts/galera.sh", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/galera.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Eight workers spread over the three nodes of a Galera cluster, where
// row locks are each node's own and only written rows are certified: the
// limits hold across the nodes and every task's effect commits once.
func TestGaleraWorkersOnEveryNode(t *testing.T) {
	db, dsns := galeraDB(t)
	pools := make([]*sql.DB, len(dsns))
	for i, dsn := range dsns {
		pools[i] = harness.OpenPool(t, dsn)
	}
	systemtest.ManyWorkersAcross(t, systemtest.SetupOn(t, &harness, db), pools)
}

// A node dies (SIGKILL) mid-run and rejoins later: the workers on the
// other nodes go on after a pause, recover the tasks that the dead node's
// workers held once their leases expire, and every task's effect commits
// once, with no two executions of a task at once.
func TestGaleraNodeKilled(t *testing.T) {
	db, dsns := galeraDB(t)
	b := systemtest.SetupOn(t, &harness, db)
	const tasks, workers = 1500, 6
	next := 0
	r := systemtest.NewFaultRun(t, b, tasks, workers, func() *sql.DB {
		pool := harness.OpenPool(t, dsns[next%len(dsns)]) // worker wN on node N mod 3 + 1
		next++
		return pool
	})
	dead := len(dsns) // the last node: the bundle's client is on the first
	t.Cleanup(func() { galera(t, "start") })
	o := failDuring(t, r, 300, 900, func() { galera(t, "kill", fmt.Sprint(dead)) }, func() { galera(t, "start") })
	reran := r.Verify(t)
	s := r.Stats()
	live := func(owner string) bool {
		var w int
		fmt.Sscanf(owner, "w%d", &w)
		return w%len(dsns) != dead-1
	}
	// Galera stops every node's commits until it declares the dead node
	// gone (evs.suspect_timeout, 5 s by default); then a lease that ran
	// out meanwhile is recovered and claimed again.
	bound := 5*time.Second + systemtest.ShortLeases().LeaseTimeout + systemtest.ShortLeases().RecoveryInterval + time.Second
	t.Logf("node %d killed: the live nodes' workers paused %s at most while it was down (%s; bound %s), %s while it rejoined (%s); %d tasks ran again, 0 lost; %d recovered, %d self-fenced",
		dead, r.Book.LongestPause(o.failedAt, o.healAt, live), o.healAt.Sub(o.failedAt).Round(time.Millisecond), bound,
		r.Book.LongestPause(o.healAt, o.healedAt, live), o.healedAt.Sub(o.healAt).Round(time.Millisecond),
		reran, s.Recovered, s.SelfFenced)
}

// outage is when a node failed during a run, when the test began to
// heal it, and when it was whole again.
type outage struct{ failedAt, healAt, healedAt time.Time }

// failDuring makes a node fail (fail) once before tasks of r succeeded,
// lets r reach during tasks without it, heals it (heal), and waits for
// the rest of r.
func failDuring(t *testing.T, r *systemtest.FaultRun, before, during int, fail, heal func()) outage {
	t.Helper()
	var o outage
	r.WaitFinished(t, before, time.Minute)
	fail()
	o.failedAt = time.Now()
	r.WaitFinished(t, during, 2*time.Minute)
	o.healAt = time.Now()
	heal()
	o.healedAt = time.Now()
	r.WaitFinished(t, r.Tasks, 2*time.Minute)
	return o
}

// nodesPool opens an OpenNodes pool, closed when t ends.
func nodesPool(t *testing.T, dsns ...string) *sql.DB {
	t.Helper()
	db, err := OpenNodes(dsns...)
	dbtest.Must(t, "open the nodes", err)
	t.Cleanup(func() { db.Close() })
	return db
}

// A node freezes (SIGSTOP: it still accepts TCP connections and then
// answers nothing) under workers whose pools (OpenNodes) list it first:
// they leave it and finish most of the run on the other nodes while it is
// still frozen, with nothing lost and every effect once.
func TestGaleraFrozenNodeIsLeft(t *testing.T) {
	db, dsns := galeraDB(t)
	b := systemtest.SetupOn(t, &harness, db)
	const tasks, workers = 1200, 3
	r := systemtest.NewFaultRun(t, b, tasks, workers, func() *sql.DB { return nodesPool(t, dsns[1], dsns[2], dsns[0]) })
	t.Cleanup(func() { galera(t, "thaw", "2"); galera(t, "start") })
	// 600 tasks on nodes 1 and 3 while node 2 answers nothing.
	o := failDuring(t, r, 200, 800, func() { galera(t, "freeze", "2") }, func() { galera(t, "thaw", "2") })
	reran := r.Verify(t)
	s := r.Stats()
	t.Logf("node 2 frozen under its workers: they paused %s at most, then finished 600 tasks on the other nodes in %s while it stayed frozen; %d tasks ran again, 0 lost; %d recovered, %d self-fenced",
		r.Book.LongestPause(o.failedAt, o.healAt, nil), o.healAt.Sub(o.failedAt).Round(time.Millisecond), reran, s.Recovered, s.SelfFenced)
}

// A node turns read-only (as a demoted primary does) under workers whose
// pools (OpenNodes) list it first: their statements there fail with 1290,
// the pools close those connections and make new ones on the next node,
// and the run finishes there with nothing lost and every effect once.
// Read-only does not bind a user with SUPER, so the workers run as a user
// of their own.
func TestGaleraReadOnlyNodeIsLeft(t *testing.T) {
	db, dsns := galeraDB(t)
	cfg, err := mysql.ParseDSN(db.DSN)
	dbtest.Must(t, "DSN", err)
	user := "lg_" + strings.TrimPrefix(cfg.DBName, "leasegen_test_")
	db.MustExec(t, fmt.Sprintf("CREATE USER '%s'@'127.0.0.1' IDENTIFIED BY 'pw'", user))
	t.Cleanup(func() { db.MustExec(t, fmt.Sprintf("DROP USER '%s'@'127.0.0.1'", user)) })
	db.MustExec(t, fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'127.0.0.1'", cfg.DBName, user))
	as := make([]string, len(dsns))
	for i, dsn := range dsns {
		c, err := mysql.ParseDSN(dsn)
		dbtest.Must(t, "DSN", err)
		c.User, c.Passwd = user, "pw"
		as[i] = c.FormatDSN()
	}
	root3 := harness.OpenPool(t, dsns[2])
	setReadOnly := func(on string) {
		_, err := root3.Exec("SET GLOBAL read_only = " + on)
		dbtest.Must(t, "read_only "+on+" on node 3", err)
	}
	t.Cleanup(func() { setReadOnly("OFF") })

	b := systemtest.SetupOn(t, &harness, db)
	const tasks, workers = 1200, 3
	r := systemtest.NewFaultRun(t, b, tasks, workers, func() *sql.DB { return nodesPool(t, as[2], as[0]) })
	// 600 tasks on node 1 while node 3 refuses every write.
	o := failDuring(t, r, 200, 800, func() { setReadOnly("ON") }, func() { setReadOnly("OFF") })
	reran := r.Verify(t)
	t.Logf("node 3 read-only under its workers: they paused %s at most, then finished 600 tasks on node 1 in %s; %d tasks ran again, 0 lost",
		r.Book.LongestPause(o.failedAt, o.healAt, nil), o.healAt.Sub(o.failedAt).Round(time.Millisecond), reran)
}

// Three worker hosts, each a network namespace with its worker process on
// a node of its own, and the first cut off the network mid-run: the
// others recover its tasks, the limit holds across the nodes, and every
// task's effect commits once.
func TestGaleraWorkerHostCutOff(t *testing.T) {
	db, dsns := galeraDB(t)
	systemtest.HostCutOff(t, systemtest.SetupOn(t, &harness, db), dsns)
}
