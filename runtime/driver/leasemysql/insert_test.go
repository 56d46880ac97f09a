package leasemysql

import (
	"fmt"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

// Every batch path returns ids in request order, an existing key's id for a
// duplicate, and stores each payload with its own row.
func TestEnqueueManyPaths(t *testing.T) {
	t.Parallel()
	paths := map[string]func(*store){
		"returning":   func(s *store) { s.returning, s.consecutiveIDs = true, false },
		"consecutive": func(s *store) { s.returning, s.consecutiveIDs = false, true },
		"each":        func(s *store) { s.returning, s.consecutiveIDs = false, false },
	}
	for name, force := range paths {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := drivertest.Setup(t, &harness)
			st := b.Driver.(*store)
			dbtest.Must(t, "check", st.Check(bg))
			// A path the server lacks must not be the store's choice:
			// RETURNING is MariaDB's, consecutive ids need lock mode 0 or 1.
			var version string
			var lockMode int
			dbtest.Must(t, "server", b.DB.DB.QueryRow("SELECT VERSION(), @@innodb_autoinc_lock_mode").Scan(&version, &lockMode))
			if supported := map[string]bool{"returning": isMariaDB(version), "consecutive": lockMode <= 1, "each": true}[name]; !supported {
				if (name == "returning" && st.returning) || (name == "consecutive" && st.consecutiveIDs) {
					t.Errorf("server %s (autoinc lock mode %d) lacks the %s path, but the store chose it", version, lockMode, name)
				}
				t.Logf("server %s (autoinc lock mode %d) has no %s path: checked that the store does not choose it", version, lockMode, name)
				return
			}
			force(st)
			existing := b.Enqueue(t, "a", runtime.WithIdempotencyKey("old"))
			reqs := make([]runtime.Request, 2500) // three statements of at most 1,000 rows
			for i := range reqs {
				reqs[i] = runtime.Request{Type: "a", Payload: fmt.Appendf(nil, `{"n":%d}`, i)}
			}
			if name != "consecutive" {
				reqs[7].Options = []runtime.EnqueueOption{runtime.WithIdempotencyKey("old")}
				reqs[8].Options = []runtime.EnqueueOption{runtime.WithIdempotencyKey("new")}
				reqs[9].Options = []runtime.EnqueueOption{runtime.WithIdempotencyKey("new")}
			}
			got, err := b.Client.EnqueueMany(bg, reqs)
			dbtest.Must(t, "enqueue many", err)
			if len(got) != len(reqs) {
				t.Fatalf("%d ids for %d requests", len(got), len(reqs))
			}
			if name != "consecutive" && (got[7] != existing || got[9] != got[8]) {
				t.Errorf("keyed rows: ids %d %d %d, want %d then a repeated new id", got[7], got[8], got[9], existing)
			}
			for i, id := range got {
				if name != "consecutive" && (i == 7 || i == 9) {
					continue
				}
				info, err := b.Client.Get(bg, id)
				dbtest.Must(t, "get", err)
				if want := fmt.Sprintf(`{"n":%d}`, i); string(info.Payload) != want {
					t.Fatalf("id %d (request %d) has payload %s, want %s", id, i, info.Payload, want)
				}
			}
		})
	}
}
