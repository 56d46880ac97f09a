package leasemysql

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// Every batch path returns ids in request order, an existing key's id for a
// duplicate, and stores each payload with its own row: RETURNING (MariaDB),
// the read-back in the batch's own snapshot (a batch without keys in a
// transaction of its own), consecutive ids from LAST_INSERT_ID (a batch
// without keys in the caller's transaction, where lock mode 0 or 1 allows
// it), and one statement a row.
func TestEnqueueManyPaths(t *testing.T) {
	t.Parallel()
	paths := map[string]struct {
		force          func(*store)
		keys, callerTx bool
	}{
		"returning":   {force: func(s *store) { s.returning, s.consecutiveIDs = true, false }, keys: true},
		"snapshot":    {force: func(s *store) { s.returning, s.consecutiveIDs = false, false }},
		"consecutive": {force: func(s *store) { s.returning, s.consecutiveIDs = false, true }, callerTx: true},
		"each":        {force: func(s *store) { s.returning, s.consecutiveIDs = false, false }, keys: true},
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := systemtest.Setup(t, &harness)
			st := b.Driver.(*store)
			dbtest.Must(t, "check", st.Check(bg))
			// A path the server lacks must not be the store's choice:
			// RETURNING is MariaDB's, consecutive ids need lock mode 0 or 1.
			var version string
			var lockMode int
			dbtest.Must(t, "server", b.DB.DB.QueryRow("SELECT VERSION(), @@innodb_autoinc_lock_mode").Scan(&version, &lockMode))
			if (name == "returning" && !isMariaDB(version)) || (name == "consecutive" && lockMode > 1) {
				if (name == "returning" && st.returning) || (name == "consecutive" && st.consecutiveIDs) {
					t.Errorf("server %s (autoinc lock mode %d) lacks the %s path, but the store chose it", version, lockMode, name)
				}
				t.Logf("server %s (autoinc lock mode %d) has no %s path: checked that the store does not choose it", version, lockMode, name)
				return
			}
			path.force(st)
			existing := b.Enqueue(t, "a", runtime.WithIdempotencyKey("old"))
			reqs := make([]runtime.Request, 2500) // three statements of at most 1,000 rows
			for i := range reqs {
				reqs[i] = runtime.Request{Type: "a", Payload: fmt.Appendf(nil, `{"n":%d}`, i)}
			}
			if path.keys {
				reqs[7].Options = []runtime.EnqueueOption{runtime.WithIdempotencyKey("old")}
				reqs[8].Options = []runtime.EnqueueOption{runtime.WithIdempotencyKey("new")}
				reqs[9].Options = []runtime.EnqueueOption{runtime.WithIdempotencyKey("new")}
			}
			got := enqueueMany(t, b.Client, b.DB.DB, reqs, path.callerTx)
			if path.keys && (got[7] != existing || got[9] != got[8]) {
				t.Errorf("keyed rows: ids %d %d %d, want %d then a repeated new id", got[7], got[8], got[9], existing)
			}
			checkPayloads(t, b.Client, reqs, got, func(i int) bool { return path.keys && (i == 7 || i == 9) })
		})
	}
}

// With auto_increment_increment 2 (as some multi-primary setups set it; a
// Galera node sets the cluster's size, whatever the session asks) a
// statement's ids are not consecutive: the store does not assume they are,
// and a batch gets its own ids in its transaction and in the caller's.
func TestEnqueueManyWithAutoIncrementIncrement(t *testing.T) {
	t.Parallel()
	db := drivertest.NewDB(t, &harness)
	cfg, err := mysql.ParseDSN(db.DSN)
	dbtest.Must(t, "parse DSN", err)
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["auto_increment_increment"] = "2" // set on every session of the pool
	b := systemtest.SetupOn(t, &harness, &drivertest.DB{DB: harness.OpenPool(t, cfg.FormatDSN()), DSN: cfg.FormatDSN()})
	st := b.Driver.(*store)
	dbtest.Must(t, "check", st.Check(bg))
	step := b.DB.Int(t, "SELECT @@session.auto_increment_increment")
	if st.consecutiveIDs {
		t.Errorf("the store counts on consecutive ids under auto_increment_increment %d", step)
	}
	for _, callerTx := range []bool{false, true} {
		reqs := make([]runtime.Request, 300)
		for i := range reqs {
			reqs[i] = runtime.Request{Type: "a", Payload: fmt.Appendf(nil, `{"tx":%v,"n":%d}`, callerTx, i)}
		}
		got := enqueueMany(t, b.Client, b.DB.DB, reqs, callerTx)
		if step < 2 || int(got[1]-got[0]) != step {
			t.Errorf("ids %d, %d under auto_increment_increment %d: the ids do not step by 2 or more, so this test proves nothing", got[0], got[1], step)
		}
		checkPayloads(t, b.Client, reqs, got, func(int) bool { return false })
	}
}

// enqueueMany enqueues reqs in a transaction of the client's or, with
// callerTx, of the caller's.
func enqueueMany(t *testing.T, c *runtime.Client, db *sql.DB, reqs []runtime.Request, callerTx bool) []runtime.TaskID {
	t.Helper()
	var ids []runtime.TaskID
	var err error
	if callerTx {
		tx, terr := db.BeginTx(bg, nil)
		dbtest.Must(t, "begin", terr)
		ids, err = c.EnqueueManyTx(bg, tx, reqs)
		dbtest.Must(t, "enqueue many in the caller's transaction", err)
		dbtest.Must(t, "commit", tx.Commit())
	} else {
		ids, err = c.EnqueueMany(bg, reqs)
		dbtest.Must(t, "enqueue many", err)
	}
	if len(ids) != len(reqs) {
		t.Fatalf("%d ids for %d requests", len(ids), len(reqs))
	}
	return ids
}

// checkPayloads fails t unless each id's row holds its request's payload.
func checkPayloads(t *testing.T, c *runtime.Client, reqs []runtime.Request, ids []runtime.TaskID, skip func(i int) bool) {
	t.Helper()
	for i, id := range ids {
		if skip(i) {
			continue
		}
		info, err := c.Get(bg, id)
		dbtest.Must(t, "get", err)
		if string(info.Payload) != string(reqs[i].Payload) {
			t.Fatalf("id %d (request %d) has payload %s, want %s", id, i, info.Payload, reqs[i].Payload)
		}
	}
}
