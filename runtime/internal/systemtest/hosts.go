package systemtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/nethost"
	"github.com/leasegen/leasegen/runtime"
)

// Shape of a HostCutOff run.
const (
	hostTasks = 1200
	hostCount = 3
	hostLimit = 8 // the chaos type's concurrency limit, below the hosts' 24 slots
	// hostCut is how long the first host stays cut off at least: three
	// leases of ShortLeases, longer than the servers keep a claim's
	// session that went silent.
	hostCut = 3 * time.Second
)

// HostCutOff runs a worker process on each of three worker hosts (network
// namespaces, see nethost.Host), host i's on dsns[i mod len(dsns)],
// through 1,200 tasks under a concurrency limit of 8, and cuts the first
// host off the network mid-run: from then on nothing it sends arrives and
// no connection of it is closed, as when a machine's cable is pulled. The
// other hosts recover its tasks once their leases expire; reconnected, it
// goes on by itself, its stale writes rejected. The ledger of every
// handler's start and end shows every task's effect committed once, no two
// executions of a task at once (the cut host stops its own executions
// before their leases can expire) and never more than 8 running.
func HostCutOff(t *testing.T, b *Bundle, dsns []string) {
	if testing.Short() {
		t.Skip("worker hosts skipped in -short mode")
	}
	dbtest.RequireNetHosts(t)
	enqueueChaos(t, b, hostTasks)

	dir := t.TempDir()
	hosts := make([]*nethost.Host, hostCount)
	for i := range hosts {
		hosts[i] = dbtest.NewNetHost(t)
		owner := fmt.Sprintf("host%d", i)
		cmd := hosts[i].Command(os.Args[0], "-test.run=^"+root+"$")
		dsn, err := hosts[i].Reach(dsns[i%len(dsns)])
		dbtest.Must(t, "reach the database from "+hosts[i].Name, err)
		cmd.Env = append(os.Environ(), envChaosWorker+"="+owner, envChaosDSN+"="+dsn,
			envChaosLedger+"="+filepath.Join(dir, owner+".jsonl"), envChaosLimit+"="+strconv.Itoa(hostLimit))
		cmd.Stderr = os.Stderr
		dbtest.Must(t, "start a worker process on "+hosts[i].Name, cmd.Start())
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		})
	}

	awaitUnfinished(t, b, hostTasks*3/4)
	var cutAt time.Time
	inFlight := 0
	for inFlight == 0 { // a host that held nothing at the cut proves little
		awaitProgress(t, "the first host to hold a task", func() int { return b.RunningOf(t, "host0") }, 1)
		dbtest.Must(t, "cut the first host off", hosts[0].Cut())
		cutAt = time.Now()
		if inFlight = b.RunningOf(t, "host0"); inFlight == 0 { // what it held: nothing it does arrives now
			dbtest.Must(t, "reconnect the first host", hosts[0].Reconnect())
		}
	}
	// Cut off until the others hold none of its tasks (its leases expired,
	// the others recovered and claimed them), and for hostCut at least.
	awaitProgress(t, "the cut-off host's tasks to be recovered", func() int { return -b.RunningOf(t, "host0") }, 0)
	recovered := time.Since(cutAt)
	time.Sleep(hostCut - recovered)
	dbtest.Must(t, "reconnect the first host", hosts[0].Reconnect())
	backAt := time.Now()
	awaitUnfinished(t, b, 0)
	elapsed := time.Since(cutAt)

	rows := readChaosLedgers(t, dir, nil)
	reran := CheckLedger(t, rows)
	dups := CheckEffects(t, b.DB, hostTasks)
	if _, byType := maxRunning(rows); byType["chaos"] > hostLimit {
		t.Errorf("%d handlers ran at once, limit %d", byType["chaos"], hostLimit)
	}
	waited, after := cutOffWait(rows, "host0", cutAt, backAt)
	if after == 0 {
		t.Error("the cut-off host ran nothing after it was reconnected")
	}
	t.Logf("%d tasks on %d hosts, the first cut off holding %d; its tasks recovered by the others %s after the cut (each ran again within %s), the others' longest pause in starts %s; reconnected, it ran %d more; all done %s after the cut; %d tasks ran again, %d duplicate effects",
		hostTasks, hostCount, inFlight, recovered.Round(time.Millisecond), waited, longestPause(rows, cutAt, backAt, "host0"), after,
		elapsed.Round(time.Millisecond), reran, dups)
}

// awaitUnfinished waits until at most n of b's tasks are unfinished.
func awaitUnfinished(t *testing.T, b *Bundle, n int) {
	t.Helper()
	awaitProgress(t, fmt.Sprintf("at most %d unfinished tasks", n), func() int { return -b.Unfinished(t) }, -n)
}

// awaitProgress waits until score reaches want, polling the database (the
// worker processes send the test no signal), and fails t when the score
// did not rise for a minute: the workers' progress decides, not the
// machine's speed.
func awaitProgress(t *testing.T, what string, score func() int, want int) {
	t.Helper()
	best, progressed := score(), time.Now()
	for best < want {
		time.Sleep(100 * time.Millisecond)
		if s := score(); s > best {
			best, progressed = s, time.Now()
		}
		if time.Since(progressed) > time.Minute {
			t.Fatalf("waiting for %s: no progress for a minute", what)
		}
	}
}

// cutOffWait returns how long after cutAt the last of owner's tasks in
// flight at cutAt started again elsewhere, and how many executions owner
// started after backAt.
func cutOffWait(rows []Interval, owner string, cutAt, backAt time.Time) (waited time.Duration, after int) {
	held := map[runtime.TaskID]bool{}
	for _, r := range rows {
		if r.Owner == owner && r.Start.Before(cutAt) && r.End.After(cutAt) {
			held[r.Task] = true
		}
		if r.Owner == owner && r.Start.After(backAt) {
			after++
		}
	}
	for _, r := range rows {
		if held[r.Task] && r.Owner != owner && r.Start.After(cutAt) {
			waited = max(waited, r.Start.Sub(cutAt))
		}
	}
	return waited.Round(time.Millisecond), after
}

// longestPause is the longest time in [from, to] in which no execution of
// an owner other than skip started.
func longestPause(rows []Interval, from, to time.Time, skip string) time.Duration {
	var book Ledger
	book.rows = rows
	return book.LongestPause(from, to, func(owner string) bool { return owner != skip })
}
