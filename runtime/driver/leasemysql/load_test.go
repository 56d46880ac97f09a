package leasemysql

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

// loadRequests is a batch that exercises every field a load writes: bytes
// the load format gives a meaning (tab, newline, backslash, NUL, \N) in
// payloads, owners and metadata, an empty payload, negative priorities,
// delays and run-at instants.
func loadRequests(n int) []runtime.Request {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	runAt := time.Date(2031, 5, 6, 7, 8, 9, 123e6, time.UTC)
	reqs := make([]runtime.Request, n)
	for i := range reqs {
		r := runtime.Request{Type: "load", Payload: fmt.Appendf(nil, `{"n":%d}`, i)}
		switch i % 8 {
		case 0:
			r.Payload = all
		case 1:
			r.Payload = []byte(`\N`)
		case 2:
			r.Payload = []byte{}
		case 3:
			r.Options = append(r.Options, runtime.WithOwner("owner\twith\\tab\nand line"), runtime.WithPriority(-3))
		case 4:
			r.Options = append(r.Options, runtime.WithMetadata(map[string]string{"k": "line\nbreak\\\t\x00", "é": "ü"}))
		case 5:
			r.Options = append(r.Options, runtime.WithDelay(90*time.Minute), runtime.WithMaxAttempts(9))
		case 6:
			r.Options = append(r.Options, runtime.WithRunAt(runAt), runtime.WithPriority(7))
		}
		reqs[i] = r
	}
	return reqs
}

// loadsRun is how many LOAD DATA statements the server has run.
func loadsRun(t *testing.T, db *sql.DB) int {
	t.Helper()
	var name string
	var n int
	dbtest.Must(t, "read Com_load", db.QueryRow("SHOW GLOBAL STATUS LIKE 'Com_load'").Scan(&name, &n))
	return n
}

// A batch loaded with LOAD DATA stores exactly what the same batch stores
// through INSERT, field by field, with its ids in request order, both when
// the ids are consecutive and when they are read back in the batch's
// snapshot.
func TestLoadStoresWhatInsertStores(t *testing.T) {
	t.Parallel()
	for _, consecutive := range []bool{true, false} {
		t.Run(fmt.Sprintf("consecutive=%v", consecutive), func(t *testing.T) {
			t.Parallel()
			b := drivertest.Setup(t, &harness)
			st := b.Driver.(*store)
			dbtest.Must(t, "check", st.Check(bg))
			if !st.localInfile.Load() {
				checkNoLocalInfile(t, b)
				return
			}
			if consecutive && !st.consecutiveIDs {
				t.Logf("the server's auto-increment ids are not consecutive: the read-back case covers it")
				return
			}
			st.consecutiveIDs = consecutive
			reqs := loadRequests(1100) // two statements
			st.localInfile.Store(false)
			inserted := enqueueMany(t, b.Client, b.DB.DB, reqs, false)
			st.localInfile.Store(true)
			before := loadsRun(t, b.DB.DB)
			loaded := enqueueMany(t, b.Client, b.DB.DB, reqs, false)
			if n := loadsRun(t, b.DB.DB) - before; n < 2 {
				t.Fatalf("%d LOAD DATA statements ran for a batch of 1,100; want 2 at least", n)
			}
			for i := range reqs {
				want, err := b.Client.Get(bg, inserted[i])
				dbtest.Must(t, "get inserted", err)
				got, err := b.Client.Get(bg, loaded[i])
				dbtest.Must(t, "get loaded", err)
				if diff := cmp.Diff(sameFields(want), sameFields(got)); diff != "" {
					t.Fatalf("request %d: loaded task differs from inserted (-inserted +loaded):\n%s", i, diff)
				}
			}
		})
	}
}

// sameFields is a task without what differs between two enqueues of the
// same request: its id and instants, with a delayed task's available_at
// as its delay after creation.
func sameFields(info runtime.TaskInfo) runtime.TaskInfo {
	if year := info.AvailableAt.Year(); year < 2031 {
		info.AvailableAt = time.Time{}.Add(info.AvailableAt.Sub(info.CreatedAt))
	}
	info.ID, info.CreatedAt, info.UpdatedAt, info.Attempts = 0, time.Time{}, time.Time{}, nil
	return info
}

// checkNoLocalInfile runs where the server has local_infile off (Oracle
// MySQL as it ships): it says so, and a batch forced through the load
// path is refused, stored through INSERT, and turns the path off.
func checkNoLocalInfile(t *testing.T, b *drivertest.Bundle) {
	t.Helper()
	var on bool
	dbtest.Must(t, "read local_infile", b.DB.DB.QueryRow("SELECT @@local_infile").Scan(&on))
	if on {
		t.Fatal("the server allows LOAD DATA LOCAL, but the store does not use it")
	}
	t.Logf("local_infile is off on this server: checking that a load is refused and the batch inserted")
	st := b.Driver.(*store)
	st.localInfile.Store(true)
	reqs := loadRequests(loadMinRows)
	checkPayloads(t, b.Client, reqs, enqueueMany(t, b.Client, b.DB.DB, reqs, false), func(int) bool { return false })
	if st.localInfile.Load() {
		t.Error("the store still tries LOAD DATA LOCAL after the server refused it")
	}
}

// A server that stops allowing LOAD DATA LOCAL after the store checked it
// refuses the next load: the batch is stored through INSERT all the same,
// and the store stops trying.
func TestLoadRefusedFallsBackToInsert(t *testing.T) {
	t.Parallel()
	server := dbtest.StartServer(t)
	db := harness.OpenPool(t, server.NewDatabase("app"))
	b := drivertest.SetupOn(t, &harness, &drivertest.DB{DB: db})
	st := b.Driver.(*store)
	dbtest.Must(t, "check", st.Check(bg))
	if !st.localInfile.Load() {
		t.Fatal("a private MariaDB allows LOAD DATA LOCAL by default, but the store does not use it")
	}
	if _, err := db.Exec("SET GLOBAL local_infile = 0"); err != nil {
		t.Fatal(err)
	}
	checkNoLocalInfile(t, b)
}

// A row that LOAD DATA LOCAL would only warn about (here a task type too
// long for its column, which a load truncates) rolls the load back; the
// batch then goes through INSERT, whose error the caller gets, and no row
// of the batch is stored.
func TestLoadWarningsRollBack(t *testing.T) {
	t.Parallel()
	b := drivertest.Setup(t, &harness)
	st := b.Driver.(*store)
	dbtest.Must(t, "check", st.Check(bg))
	if !st.localInfile.Load() {
		t.Log("local_infile is off on this server: TestLoadStoresWhatInsertStores checks the refusal")
		return
	}
	tasks := make([]driver.NewTask, loadMinRows)
	for i := range tasks {
		tasks[i] = driver.NewTask{Type: "ok", Payload: []byte(`{}`), MaxAttempts: 3}
	}
	tasks[loadMinRows/2].Type = strings.Repeat("t", 200)
	before := loadsRun(t, b.DB.DB)
	_, err := st.Insert(bg, b.DB.DB, tasks)
	if err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("insert with a 200-byte type: err = %v, want the server's data-too-long error", err)
	}
	if n := loadsRun(t, b.DB.DB) - before; n != 1 {
		t.Errorf("%d loads ran, want 1 (rolled back)", n)
	}
	if n := b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_tasks"); n != 0 {
		t.Errorf("%d rows stored after the failed batch, want none", n)
	}
	if !st.localInfile.Load() {
		t.Error("a load rolled back for its warnings turned the load path off")
	}
}

// A batch whose payloads exceed a statement's bytes is loaded in as many
// statements, each file bounded as an INSERT's statement would be.
func TestLoadSplitsLargePayloads(t *testing.T) {
	t.Parallel()
	b := drivertest.Setup(t, &harness)
	st := b.Driver.(*store)
	dbtest.Must(t, "check", st.Check(bg))
	if !st.localInfile.Load() {
		t.Log("local_infile is off on this server: TestLoadStoresWhatInsertStores checks the refusal")
		return
	}
	reqs := make([]runtime.Request, loadMinRows)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "big", Payload: fmt.Appendf(nil, `{"n":%d,"pad":%q}`, i, strings.Repeat("x", 20<<10))}
	}
	before := loadsRun(t, b.DB.DB)
	ids := enqueueMany(t, b.Client, b.DB.DB, reqs, false)
	if n, want := loadsRun(t, b.DB.DB)-before, loadMinRows*20<<10/insertChunkBytes+1; n < want {
		t.Errorf("%d loads for %d payloads of 20 KiB, want %d or more", n, loadMinRows, want)
	}
	checkPayloads(t, b.Client, reqs, ids, func(int) bool { return false })
}
