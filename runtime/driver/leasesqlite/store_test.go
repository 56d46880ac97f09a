package leasesqlite

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// A SQLite claim scans without the write lock and then takes what it
// scanned: a task another claim took in between, or took and released (it
// is queued again, at a higher attempt), is not taken a second time.
func TestSQLiteTakeSkipsTasksClaimedSinceTheScan(t *testing.T) {
	t.Parallel()
	b := systemtest.Setup(t, &harness)
	s := b.Driver.(*store)
	var refs []driver.LeaseRef // as a scan saw them: queued at attempt 0
	for range 4 {
		refs = append(refs, driver.LeaseRef{ID: b.Enqueue(t, "a")})
	}
	// Since the scan: task 1 was claimed by w2; task 2 was claimed by w2 and
	// released, so it is queued again at attempt 1.
	if oks, err := s.take(bg, "w2", time.Minute, refs[1:3]); err != nil || !oks[0] || !oks[1] {
		t.Fatalf("w2's take = %v, %v", oks, err)
	}
	released, err := s.Release(bg, "w2", driver.LeaseRef{ID: refs[2].ID, Attempt: 1}, 0)
	if err != nil || !released {
		t.Fatalf("release = %v, %v", released, err)
	}

	oks, err := s.take(bg, "w1", time.Minute, refs)
	dbtest.Must(t, "take", err)
	if diff := cmp.Diff([]bool{true, false, false, true}, oks); diff != "" {
		t.Errorf("taken (-want +got):\n%s", diff)
	}
	for i, want := range []string{"w1", "w2", "", "w1"} { // a released task has no holder
		info, err := b.Client.Get(bg, refs[i].ID)
		dbtest.Must(t, "get", err)
		if info.LeaseOwner != want {
			t.Errorf("task %d: lease owner %q, want %q", i, info.LeaseOwner, want)
		}
	}
}

// A renewal of more leases than one SQLite statement may name (32,766
// parameters) renews them all, in chunks.
func TestSQLiteRenewsMoreLeasesThanOneStatementNames(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("claims 10,500 tasks")
	}
	b := systemtest.Setup(t, &harness)
	const n = sqliteRenewChunk + 500
	reqs := make([]runtime.Request, n)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "a"}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	var refs []driver.LeaseRef
	for len(refs) < n {
		// A worker's largest claim, with a lease no loaded machine's
		// eleven claims outlast (the harness's claims hold 1 s).
		claimed, err := b.Driver.Claim(bg, driver.ClaimRequest{Owner: "w", Lease: time.Minute, Types: []string{"a"}, Max: 1000})
		dbtest.Must(t, "claim", err)
		if len(claimed) == 0 {
			t.Fatalf("claimed %d of %d", len(refs), n)
		}
		for _, c := range claimed {
			refs = append(refs, driver.LeaseRef{ID: c.ID, Attempt: c.Attempt})
		}
	}
	states, err := b.Driver.Renew(bg, "w", time.Minute, refs)
	dbtest.Must(t, "renew", err)
	for i, st := range states {
		if !st.Held {
			t.Fatalf("lease %d of %d not held after the renewal", i, n)
		}
	}
}

// SQLiteDSN opens the file it is given, whatever its name holds, with every
// setting it promises.
func TestSQLiteDSNEscapesThePath(t *testing.T) {
	for _, name := range []string{"tasks#1.db", "t?x.db", "50%25.db", "a b%.db", "q?#%3f.db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			db, err := sql.Open("sqlite", DSN(path))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("CREATE TABLE probe (id INTEGER)"); err != nil {
				t.Fatal(err)
			}
			var mode string
			var busy int
			if err := db.QueryRow("SELECT journal_mode, (SELECT timeout FROM pragma_busy_timeout) FROM pragma_journal_mode").Scan(&mode, &busy); err != nil {
				t.Fatal(err)
			}
			if mode != "wal" || busy != 10000 {
				t.Errorf("journal_mode %q, busy_timeout %d: want wal and 10000", mode, busy)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			for _, e := range entries {
				files = append(files, e.Name())
			}
			if !slices.Contains(files, name) {
				t.Errorf("files in the directory: %q, want %q among them", files, name)
			}
		})
	}
}

// The driver's errors are read by their result codes: a lock held past the
// busy timeout is a conflict to retry, and a missing table is no schema.
func TestSQLiteErrorCodes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "codes.db")
	holder, err := sql.Open("sqlite", DSN(path))
	dbtest.Must(t, "open", err)
	defer holder.Close()
	impatient, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	dbtest.Must(t, "open", err)
	defer impatient.Close()
	_, err = holder.Exec("CREATE TABLE probe (id INTEGER)")
	dbtest.Must(t, "create", err)

	tx, err := holder.Begin() // _txlock=immediate: takes the write lock
	dbtest.Must(t, "begin", err)
	defer tx.Rollback() //nolint:errcheck // the test ends here
	_, err = impatient.Exec("INSERT INTO probe VALUES (1)")
	s := &store{}
	if err == nil || !sqliteConflict(err) || s.ErrorKind(err) != driver.KindConflict {
		t.Errorf("a write while another holds the lock: %v, want a conflict (SQLITE_BUSY)", err)
	}
	_, err = impatient.Exec("SELECT * FROM leasegen_tasks")
	if s.ErrorKind(err) != driver.KindNoTable || sqliteConflict(err) {
		t.Errorf("a read of a missing leasegen table: %v, want errNoTable", err)
	}
}
