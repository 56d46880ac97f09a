package leasemysql

import (
	"database/sql"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// groupReplication runs scripts/group-replication.sh with args.
func groupReplication(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("../../../scripts/group-replication.sh", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/group-replication.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// groupDB creates a database on the Group Replication group of
// dbtest.EnvGroupReplicationDSNs, through its primary, dropped the same way
// when t ends, and returns its DSN through every member and which member
// (from 0) is the primary.
func groupDB(t *testing.T) (dsns []string, primary int) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the Group Replication cases need a group (make test starts one)")
	}
	members := dbtest.GroupReplicationNodes(t)
	admin := nodesPool(t, members...)
	name := "leasegen_test_gr_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	_, err := admin.Exec("CREATE DATABASE " + name)
	dbtest.Must(t, "create the database", err)
	t.Cleanup(func() {
		// A connection kept from before a failover may be on a member that
		// refuses writes now: the pool closes it, and the next try goes to
		// the primary.
		var err error
		for range 3 {
			if _, err = admin.Exec("DROP DATABASE IF EXISTS " + name); err == nil {
				return
			}
		}
		t.Errorf("drop %s: %v", name, err)
	})
	var port string
	dbtest.Must(t, "the primary's port", admin.QueryRow("SELECT @@port").Scan(&port))
	primary = -1
	dsns = make([]string, len(members))
	for i, m := range members {
		dsns[i] = dbtest.WithDatabase(t, m, name)
		if strings.HasSuffix(strings.TrimSuffix(m, ")/"), ":"+port) {
			primary = i
		}
	}
	if primary < 0 {
		t.Fatalf("no member listens on the primary's port %s", port)
	}
	return dsns, primary
}

// groupRun is a fault run of three workers on a database of the Group
// Replication group, each on an OpenNodes pool over every member, and
// which member (from 0) was the primary at the start.
func groupRun(t *testing.T) (*systemtest.FaultRun, int) {
	t.Helper()
	dsns, primary := groupDB(t)
	pool := func() *sql.DB { return nodesPool(t, dsns...) }
	db := drivertest.OpenDB(t, &harness, dsns[primary])
	db.DB = pool() // the test's own reads follow the primary too
	t.Cleanup(func() { groupReplication(t, "start") })
	return systemtest.NewFaultRun(t, systemtest.SetupOn(t, &harness, db), 1200, 3, pool), primary
}

// The primary of a Group Replication group dies (SIGKILL); the group
// elects another. Workers whose pools (OpenNodes) list every member find
// the primary (the others refuse writes, super_read_only), follow it to
// the new one, and every task's effect commits once, none lost.
func TestGroupReplicationPrimaryKilled(t *testing.T) {
	r, primary := groupRun(t)
	o := failDuring(t, r, 200, 800, func() { groupReplication(t, "kill", fmt.Sprint(primary+1)) }, func() { groupReplication(t, "start") })
	reran := r.Verify(t)
	s := r.Stats()
	t.Logf("primary (member %d) killed: the workers paused %s at most until another was elected and found; %s while it rejoined (%s); %d tasks ran again, 0 lost; %d recovered, %d self-fenced",
		primary+1, r.Book.LongestPause(o.failedAt, o.healAt, nil), r.Book.LongestPause(o.healAt, o.healedAt, nil), o.healedAt.Sub(o.healAt).Round(time.Millisecond),
		reran, s.Recovered, s.SelfFenced)
}

// The primary of a Group Replication group freezes (SIGSTOP: it accepts
// TCP connections and answers nothing); the group expels it and elects
// another. The workers leave it and finish 600 tasks on the new primary
// while it stays frozen. Thawed, it finds itself expelled and read-only, so
// nothing it held can land; it rejoins as a secondary.
func TestGroupReplicationPrimaryFrozen(t *testing.T) {
	r, primary := groupRun(t)
	member := fmt.Sprint(primary + 1)
	t.Cleanup(func() { groupReplication(t, "thaw", member) })
	o := failDuring(t, r, 200, 800, func() { groupReplication(t, "freeze", member) }, func() {
		groupReplication(t, "thaw", member)
		groupReplication(t, "start")
	})
	reran := r.Verify(t)
	s := r.Stats()
	t.Logf("primary (member %s) frozen: the workers paused %s at most, then finished 600 tasks on the new primary in %s while it stayed frozen; %d tasks ran again, 0 lost; %d recovered, %d self-fenced",
		member, r.Book.LongestPause(o.failedAt, o.healAt, nil), o.healAt.Sub(o.failedAt).Round(time.Millisecond), reran, s.Recovered, s.SelfFenced)
}

// A member outside its group that takes writes, as one restarted without
// rejoining may (here a secondary that left the group, made writable), is
// stale: OpenNodes passes over it, though it is listed first, for the
// group's primary.
func TestGroupReplicationOutsiderPassedOver(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Group Replication cases need a group (make test starts one)")
	}
	members := dbtest.GroupReplicationNodes(t)
	outsider := -1
	for i, m := range members {
		var readOnly int
		dbtest.Must(t, "read_only", harness.OpenPool(t, m).QueryRow("SELECT @@global.super_read_only").Scan(&readOnly))
		if readOnly == 1 {
			outsider = i // a secondary
		}
	}
	if outsider < 0 {
		t.Fatal("the group has no secondary")
	}
	root := harness.OpenPool(t, members[outsider])
	t.Cleanup(func() { groupReplication(t, "start") })
	for _, q := range []string{"STOP GROUP_REPLICATION", "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF"} {
		_, err := root.Exec(q)
		dbtest.Must(t, q, err)
	}
	order := append([]string{members[outsider]}, slices.Delete(slices.Clone(members), outsider, outsider+1)...)
	var port, outsiderPort string
	dbtest.Must(t, "the outsider's port", root.QueryRow("SELECT @@port").Scan(&outsiderPort))
	dbtest.Must(t, "a connection of OpenNodes' pool", nodesPool(t, order...).QueryRow("SELECT @@port").Scan(&port))
	if port == outsiderPort {
		t.Errorf("OpenNodes connected to member %d, outside its group and writable", outsider+1)
	}
}

// Three worker hosts, each a network namespace with its worker process on
// the group's primary, and the first cut off the network mid-run: the
// others recover its tasks and every task's effect commits once.
func TestGroupReplicationWorkerHostCutOff(t *testing.T) {
	dsns, primary := groupDB(t)
	db := drivertest.OpenDB(t, &harness, dsns[primary])
	systemtest.HostCutOff(t, systemtest.SetupOn(t, &harness, db), dsns[primary:primary+1])
}
