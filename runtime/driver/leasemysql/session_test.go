package leasemysql

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

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
	if err := engineOn(nonUTC).Migrate(bg); !errors.Is(err, ErrSessionNotUTC) || !strings.Contains(err.Error(), "time_zone=") {
		t.Errorf("session at +02:00: err = %v, want ErrSessionNotUTC saying what to add", err)
	}
	noParseTime := open(strings.Replace(db.DSN, "parseTime=true", "parseTime=false", 1))
	if err := engineOn(noParseTime).Migrate(bg); err == nil || !strings.Contains(err.Error(), "parseTime=true") {
		t.Errorf("without parseTime: err = %v, want a hint to add parseTime=true", err)
	}
	localLoc := open(strings.Replace(db.DSN, "loc=UTC", "loc=Asia%2FTokyo", 1))
	if err := engineOn(localLoc).Migrate(bg); err == nil || !strings.Contains(err.Error(), "loc=UTC") {
		t.Errorf("with loc=Asia/Tokyo: err = %v, want a hint to use loc=UTC", err)
	}
	c, err := runtime.NewClient(engineOn(nonUTC), runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	if _, err := c.Enqueue(bg, "a", nil); !errors.Is(err, ErrSessionNotUTC) {
		t.Errorf("enqueue on a non-UTC session: err = %v", err)
	}
}

// A payload within the client's limit that the server's max_allowed_packet
// cannot take once escaped (quotes double under interpolateParams) is
// refused with the server's limit named, and the connection it would have
// broken serves the next enqueue.
func TestEnqueuePayloadWithinServerLimit(t *testing.T) {
	t.Parallel()
	b := systemtest.Setup(t, &harness)
	const ceiling = 8 << 20 // the largest ClientConfig.MaxPayloadBytes
	client, err := runtime.NewClient(b.Engine, runtime.ClientConfig{MaxPayloadBytes: ceiling})
	dbtest.Must(t, "client", err)
	quotes := []byte(`"` + strings.Repeat("'", ceiling-2) + `"`) // a JSON string that escaping doubles
	fits := len(quotes) <= escapedLimit(int64(b.DB.Int(t, "SELECT @@max_allowed_packet")))
	_, err = client.Enqueue(bg, "a", quotes)
	switch {
	case fits:
		dbtest.Must(t, "8 MiB of quotes within the server's limit", err)
	case !errors.Is(err, runtime.ErrPayloadTooLarge) || !strings.Contains(err.Error(), "max_allowed_packet"):
		t.Errorf("8 MiB of quotes: err = %v, want ErrPayloadTooLarge naming max_allowed_packet", err)
	}
	_, err = client.Enqueue(bg, "a", []byte(`{}`))
	dbtest.Must(t, "the next enqueue", err)
}

// A bounded transaction runs at READ COMMITTED with autocommit off, and
// the pool's connection comes back with the session's own values, after a
// commit and after a rollback.
func TestBoundedSessionsRestoreTheSession(t *testing.T) {
	t.Parallel()
	db := dbtest.New(t)
	pool, err := sql.Open("mysql", db.DSN)
	dbtest.Must(t, "open", err)
	t.Cleanup(func() { pool.Close() })
	pool.SetMaxOpenConns(1) // every statement below runs on the one session
	engine := engineOn(pool)
	dbtest.Must(t, "migrate", engine.Migrate(bg))
	s := New(pool).(*store)
	dbtest.Must(t, "check", s.Check(bg))
	settings := fmt.Sprintf("SELECT CONCAT_WS(' ', @@session.autocommit + 0, @@session.%s, @@session.%s, @@session.net_read_timeout, @@session.net_write_timeout)",
		s.isolationVariable, s.idleVariable)
	read := func(q mysqldb.DBTX) string {
		var v string
		dbtest.Must(t, "read the session", q.QueryRowContext(bg, settings).Scan(&v))
		return v
	}
	before := read(pool)

	c, err := runtime.NewClient(engine, runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	_, err = c.Enqueue(bg, "a", nil)
	dbtest.Must(t, "enqueue", err)
	claimed, err := s.Claim(bg, driver.ClaimRequest{Owner: "w", Lease: time.Minute, Types: []string{"a"}, Max: 1})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %d tasks, %v", len(claimed), err)
	}
	if after := read(pool); after != before {
		t.Errorf("after a claim the session reads %q, before %q", after, before)
	}

	failed := errors.New("fn failed")
	err = s.boundedTx(bg, claimSessionIdle, func(q mysqldb.DBTX) error {
		if inside, want := read(q), "0 READ-COMMITTED 2 2 2"; inside != want {
			t.Errorf("inside a bounded transaction the session reads %q, want %q", inside, want)
		}
		if _, err := q.ExecContext(bg, "UPDATE leasegen_tasks SET priority = 9"); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("boundedTx = %v, want %v", err, failed)
	}
	if after := read(pool); after != before {
		t.Errorf("after a rollback the session reads %q, before %q", after, before)
	}
	if n := db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE priority = 9"); n != 0 {
		t.Errorf("%d rows keep the failed transaction's update", n)
	}
}
