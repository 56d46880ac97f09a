package runtime

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"

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
	for _, index := range []string{"leasegen_tasks_claim", "leasegen_tasks_recover", "leasegen_tasks_owner", "leasegen_tasks_key"} {
		if n := db.Int(t, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name = ?", index); n == 0 {
			t.Errorf("index %s missing", index)
		}
	}
	// The claim index orders priority descending, as the claim's ORDER BY.
	var collation sql.NullString
	err = db.DB.QueryRow(`SELECT collation FROM information_schema.statistics WHERE table_schema = DATABASE()
		AND index_name = 'leasegen_tasks_claim' AND column_name = 'priority'`).Scan(&collation)
	dbtest.Must(t, "index order", err)
	if collation.String != "D" {
		t.Errorf("claim index orders priority %q, want D (descending)", collation.String)
	}
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
