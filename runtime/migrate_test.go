package runtime

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/migrations"
)

// Many processes may start at once and all call Migrate: each version is
// applied once and every call succeeds.
func TestMigrateConcurrentAndIdempotent(t *testing.T) {
	t.Parallel()
	db := dbtest.New(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			// A pool of its own per caller, like separate processes.
			errs[i] = MySQL(db.Open(t)).Migrate(context.Background())
		})
	}
	wg.Wait()
	for _, err := range errs {
		dbtest.Must(t, "concurrent migrate", err)
	}
	dbtest.Must(t, "migrate again", MySQL(db.DB).Migrate(context.Background()))
	steps, err := loadMigrations(migrations.MySQL, "mysql")
	dbtest.Must(t, "load", err)
	if n := db.Int(t, "SELECT COUNT(*) FROM leasegen_schema_migrations"); n != len(steps) {
		t.Errorf("%d versions recorded, want %d", n, len(steps))
	}
	checkIndexes(t, kindMySQL, db.DB)
	// The claim index orders priority descending, as the claim's ORDER BY.
	var collation sql.NullString
	err = db.DB.QueryRow(`SELECT collation FROM information_schema.statistics WHERE table_schema = DATABASE()
		AND index_name = 'leasegen_tasks_due' AND column_name = 'due_priority'`).Scan(&collation)
	dbtest.Must(t, "index order", err)
	if collation.String != "D" {
		t.Errorf("claim index orders priority %q, want D (descending)", collation.String)
	}
}

// checkIndexes fails t unless the task table has the current schema's
// indexes and none of those that versions 3 and 4 dropped.
func checkIndexes(t *testing.T, kind string, db *sql.DB) {
	t.Helper()
	query := "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name = ?"
	current := []string{"leasegen_tasks_due", "leasegen_tasks_by_owner", "leasegen_tasks_key"}
	dropped := []string{"leasegen_tasks_claim", "leasegen_tasks_owner", "leasegen_tasks_stats", "leasegen_tasks_finished",
		"leasegen_tasks_queue", "leasegen_tasks_recover"}
	if kind == kindSQLite {
		query = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?"
		current = []string{"leasegen_tasks_queue", "leasegen_tasks_leases", "leasegen_tasks_by_owner", "leasegen_tasks_finished", "leasegen_tasks_key"}
		dropped = []string{"leasegen_tasks_claim", "leasegen_tasks_recover", "leasegen_tasks_owner", "leasegen_tasks_stats"}
	}
	count := func(index string) int {
		var n int
		dbtest.Must(t, "count indexes", db.QueryRow(query, index).Scan(&n))
		return n
	}
	for _, index := range current {
		if count(index) == 0 {
			t.Errorf("index %s missing", index)
		}
	}
	for _, index := range dropped {
		if count(index) != 0 {
			t.Errorf("index %s still there", index)
		}
	}
}

// A database at schema version 3 upgrades in place: every task keeps the
// instant that matters in its status as its due_at (a queued one its
// available_at, a running one its lease end, a finished one when it
// finished), so that claims, recovery and retention find it; and, on
// MySQL, version 4 can run again after a crash between its statements and
// its record.
func TestMigrateFromVersion3(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind string) {
		db := newTestDB(t, kind)
		engine := engineFor(kind, db.DB)
		steps, err := loadMigrations(engine.migrations, engine.dir)
		dbtest.Must(t, "load migrations", err)
		conn, err := db.DB.Conn(bg)
		dbtest.Must(t, "conn", err)
		dialect := mysqlMigrations
		if kind == kindSQLite {
			dialect = sqliteMigrations
		}
		dbtest.Must(t, "migrate to version 3", applyMigrations(bg, conn, steps[:3], dialect))
		conn.Close()

		now, ago, soon := "NOW(3)", "NOW(3) - INTERVAL 1 HOUR", "NOW(3) - INTERVAL 1 SECOND"
		if kind == kindSQLite {
			ms := "CAST(unixepoch('subsec') * 1000 AS INTEGER)"
			now, ago, soon = ms, ms+" - 3600000", ms+" - 1000"
		}
		// 1 finished an hour ago; 2 queued at priority 7; 3 running on a
		// lease that expired a second ago.
		db.Exec(t, `INSERT INTO leasegen_tasks (task_type, status, payload, priority, available_at, max_attempts, created_at, updated_at,
			lease_owner, lease_until, started_at, finished_at, attempt) VALUES
			('a', 'SUCCESS', '', 0, `+ago+`, 1, `+ago+`, `+ago+`, 'old', `+ago+`, `+ago+`, `+ago+`, 1),
			('a', 'QUEUED', '', 7, `+now+`, 1, `+now+`, `+now+`, NULL, NULL, NULL, NULL, 0),
			('a', 'RUNNING', '', 3, `+ago+`, 2, `+ago+`, `+ago+`, 'dead', `+soon+`, `+ago+`, NULL, 1)`)
		dbtest.Must(t, "migrate to the current version", engine.Migrate(bg))
		if kind == kindMySQL {
			// MySQL commits each DDL statement; SQLite commits a step and its
			// record in one transaction, so only MySQL can lose the record.
			db.Exec(t, "DELETE FROM leasegen_schema_migrations WHERE version = 4")
			dbtest.Must(t, "migrate again after a lost record", engine.Migrate(bg))
		}
		checkIndexes(t, kind, db.DB)

		b := &testBundle{kind: kind, db: db, engine: engine}
		b.client, err = NewClient(engine, ClientConfig{})
		dbtest.Must(t, "client", err)
		queued, err := b.client.Get(bg, 2)
		dbtest.Must(t, "get the queued task", err)
		if !queued.StartedAt.IsZero() || queued.LeaseOwner != "" || queued.Priority != 7 {
			t.Errorf("queued task after the upgrade: started %v, lease owner %q, priority %d", queued.StartedAt, queued.LeaseOwner, queued.Priority)
		}
		ran := make(chan TaskID, 2)
		cfg := testConfig()
		cfg.MaxConcurrency = 1 // one claim, one task: the order of claims is the order of runs
		b.startWorker(t, cfg, map[string]HandlerFunc{"a": func(_ context.Context, task *Task) error {
			ran <- task.ID
			return nil
		}})
		// The queued task runs at once, the expired lease after recovery.
		b.waitStatus(t, 2, StatusSuccess, 5*time.Second)
		b.waitStatus(t, 3, StatusSuccess, 10*time.Second)
		if first := <-ran; first != 2 {
			t.Errorf("task %d ran first, want the queued task 2", first)
		}
		finished, err := b.client.Get(bg, 1)
		dbtest.Must(t, "get the finished task", err)
		if age := time.Since(finished.FinishedAt); age < 50*time.Minute || finished.LeaseOwner != "old" {
			t.Errorf("finished task after the upgrade: finished %v ago by %q, want an hour ago by \"old\"", age, finished.LeaseOwner)
		}
		purged, err := b.client.Purge(bg, time.Minute, 10)
		dbtest.Must(t, "purge", err)
		if purged != 1 {
			t.Errorf("purge of tasks finished over a minute ago deleted %d, want the 1 finished before the upgrade", purged)
		}
	})
}

func TestSplitStatements(t *testing.T) {
	got := splitStatements("-- comment\nCREATE TABLE a (\n  x INT\n);\n\nCREATE TABLE b (y INT);\n")
	if len(got) != 2 || !strings.HasPrefix(got[0], "CREATE TABLE a") || got[1] != "CREATE TABLE b (y INT)" {
		t.Errorf("splitStatements = %q", got)
	}
}

// The session checks refuse connections whose times would be misread.
func TestSessionChecks(t *testing.T) {
	t.Parallel()
	db := dbtest.New(t)
	open := func(dsn string) *sql.DB {
		conn, err := sql.Open("mysql", dsn)
		dbtest.Must(t, "open", err)
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	nonUTC := open(strings.Replace(db.DSN, "time_zone=%27%2B00%3A00%27", "time_zone=%27%2B02%3A00%27", 1))
	if err := MySQL(nonUTC).Migrate(bg); !errors.Is(err, ErrSessionNotUTC) || !strings.Contains(err.Error(), "time_zone=") {
		t.Errorf("session at +02:00: err = %v, want ErrSessionNotUTC saying what to add", err)
	}
	noParseTime := open(strings.Replace(db.DSN, "parseTime=true", "parseTime=false", 1))
	if err := MySQL(noParseTime).Migrate(bg); err == nil || !strings.Contains(err.Error(), "parseTime=true") {
		t.Errorf("without parseTime: err = %v, want a hint to add parseTime=true", err)
	}
	localLoc := open(strings.Replace(db.DSN, "loc=UTC", "loc=Asia%2FTokyo", 1))
	if err := MySQL(localLoc).Migrate(bg); err == nil || !strings.Contains(err.Error(), "loc=UTC") {
		t.Errorf("with loc=Asia/Tokyo: err = %v, want a hint to use loc=UTC", err)
	}
	c, err := NewClient(MySQL(nonUTC), ClientConfig{})
	dbtest.Must(t, "client", err)
	if _, err := c.Enqueue(bg, "a", nil); !errors.Is(err, ErrSessionNotUTC) {
		t.Errorf("enqueue on a non-UTC session: err = %v", err)
	}
}
