package leasemysql

import (
	"bytes"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
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
	b := drivertest.Setup(t, &harness)
	const ceiling = 8 << 20 // the largest ClientConfig.MaxPayloadBytes
	client, err := runtime.NewClient(b.Engine, runtime.ClientConfig{MaxPayloadBytes: ceiling})
	dbtest.Must(t, "client", err)
	quotes := bytes.Repeat([]byte{'\''}, ceiling)
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
