package leasemysql

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// plainRequests are n plain tasks (prepared.go) that use every field a
// prepared row binds: JSON payloads that hold every character up to
// U+00FF (escaped as JSON escapes them), quotes, backslashes and control
// whitespace, an empty string, two types and several attempt counts.
func plainRequests(n int) []runtime.Request {
	runes := make([]rune, 256)
	for i := range runes {
		runes[i] = rune(i)
	}
	all, _ := json.Marshal(string(runes))
	reqs := make([]runtime.Request, n)
	for i := range reqs {
		r := runtime.Request{Type: "plain", Payload: fmt.Appendf(nil, `{"n":%d}`, i)}
		switch i % 5 {
		case 0:
			r.Payload = all
		case 1:
			r.Payload = []byte("[\t" + `"'\"\\N"` + "\r\n]")
		case 2:
			r.Payload = []byte(`""`)
		case 3:
			r.Type, r.Options = "plain-too", []runtime.EnqueueOption{runtime.WithMaxAttempts(9)}
		}
		reqs[i] = r
	}
	return reqs
}

// statementsExecuted is how many prepared statements the server has
// executed.
func statementsExecuted(t *testing.T, db *sql.DB) int {
	t.Helper()
	var name string
	var n int
	dbtest.Must(t, "read Com_stmt_execute", db.QueryRow("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'").Scan(&name, &n))
	return n
}

// A full chunk enqueued through the prepared INSERT stores exactly what
// the same chunk stores interpolated, field by field, with its ids in
// request order: one statement without a transaction (MariaDB) and two in
// the batch's transaction (and snapshot, on MySQL).
func TestPreparedStoresWhatInterpolatedStores(t *testing.T) {
	t.Parallel()
	for _, n := range []int{insertChunkRows, 2 * insertChunkRows} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			b := systemtest.Setup(t, &harness)
			st := b.Driver.(*store)
			dbtest.Must(t, "check", st.Check(bg))
			reqs := plainRequests(n)
			setPrepared(st, false)
			interpolated := enqueueMany(t, b.Client, b.DB.DB, reqs, false)
			setPrepared(st, true)
			before := statementsExecuted(t, b.DB.DB)
			prepared := enqueueMany(t, b.Client, b.DB.DB, reqs, false)
			if got := statementsExecuted(t, b.DB.DB) - before; got < n/insertChunkRows {
				t.Fatalf("%d prepared statements ran for %d full chunks", got, n/insertChunkRows)
			}
			for i := range reqs {
				want, err := b.Client.Get(bg, interpolated[i])
				dbtest.Must(t, "get interpolated", err)
				got, err := b.Client.Get(bg, prepared[i])
				dbtest.Must(t, "get prepared", err)
				if diff := cmp.Diff(sameFields(want), sameFields(got)); diff != "" {
					t.Fatalf("request %d: the prepared row differs from the interpolated one (-interpolated +prepared):\n%s", i, diff)
				}
			}
		})
	}
}

// setPrepared lets the store prepare its full-chunk INSERT, or makes it
// run every chunk interpolated, as after the server refused to prepare.
func setPrepared(s *store, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.preparedFailed = !on
}

// sameFields is a task without what differs between two enqueues of the
// same request: its id and instants.
func sameFields(info runtime.TaskInfo) runtime.TaskInfo {
	info.ID, info.CreatedAt, info.UpdatedAt, info.AvailableAt, info.Attempts = 0, time.Time{}, time.Time{}, time.Time{}, nil
	return info
}

// A server that refuses to prepare the full-chunk INSERT, its cap of
// prepared statements reached, stores the batch interpolated: first on
// the store's pool, and on a connection that must prepare it again.
func TestPreparedRefusedFallsBackToInterpolated(t *testing.T) {
	t.Parallel()
	server := dbtest.StartServer(t)
	db := harness.OpenPool(t, server.NewDatabase("app"))
	b := systemtest.SetupOn(t, &harness, &drivertest.DB{DB: db})
	st := b.Driver.(*store)
	dbtest.Must(t, "check", st.Check(bg))
	setCap := func(n int) {
		t.Helper()
		if _, err := db.Exec(fmt.Sprintf("SET GLOBAL max_prepared_stmt_count = %d", n)); err != nil {
			t.Fatal(err)
		}
	}
	setCap(0)
	reqs := plainRequests(insertChunkRows)
	checkPayloads(t, b.Client, reqs, enqueueMany(t, b.Client, db, reqs, false), func(int) bool { return false })
	if st.preparedInsert(bg) != nil {
		t.Fatal("the store prepared its INSERT past a cap of 0")
	}

	setPrepared(st, true)
	setCap(16382)
	if st.preparedInsert(bg) == nil {
		t.Fatal("the store could not prepare its INSERT under the default cap")
	}
	setCap(0) // connections that have not prepared it can no longer
	conns := make([]*sql.Conn, 4)
	for i := range conns { // hold the pool's connections: the batch needs a new one
		c, err := db.Conn(bg)
		dbtest.Must(t, "hold a connection", err)
		conns[i] = c
	}
	checkPayloads(t, b.Client, reqs, enqueueMany(t, b.Client, db, reqs, false), func(int) bool { return false })
	for _, c := range conns {
		c.Close()
	}
}
