package leasepostgres

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
)

// startingUpServer listens on loopback and answers every connection's
// startup message as a PostgreSQL server that is starting up does: a
// FATAL 57P03, then a close.
func startingUpServer(t *testing.T) string {
	t.Helper()
	return dbtest.FakeServer(t, refuseStartup)
}

func refuseStartup(c net.Conn) {
	defer c.Close()
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return
	}
	if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:]))-4); err != nil {
		return
	}
	var fields []byte
	for _, f := range []struct {
		code  byte
		value string
	}{{'S', "FATAL"}, {'V', "FATAL"}, {'C', codeCannotConnectNow}, {'M', "the database system is starting up"}} {
		fields = append(append(append(fields, f.code), f.value...), 0)
	}
	fields = append(fields, 0)
	msg := append([]byte{'E'}, binary.BigEndian.AppendUint32(nil, uint32(4+len(fields)))...)
	_, _ = c.Write(append(msg, fields...))
}

// A connection a server starting up refuses (57P03) sent nothing: the
// driver says so, and an enqueue on it is ErrUnavailable, never
// ErrOutcomeUnknown, so a caller may retry it.
func TestRefusedAtStartupIsNotSent(t *testing.T) {
	t.Parallel()
	db, err := Open("postgres://leasegen@" + startingUpServer(t) + "/db?sslmode=disable")
	dbtest.Must(t, "open", err)
	t.Cleanup(func() { db.Close() })
	d := New(db)
	err = db.PingContext(bg)
	if err == nil || d.ErrorKind(err) != driver.KindNotSent {
		t.Errorf("a connection refused at startup: %v, kind %d; want KindNotSent (%d)", err, d.ErrorKind(err), driver.KindNotSent)
	}
	client, err := runtime.NewClient(runtime.NewEngine(d), runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	_, err = client.Enqueue(bg, "a", nil)
	if !errors.Is(err, runtime.ErrUnavailable) || errors.Is(err, runtime.ErrOutcomeUnknown) {
		t.Errorf("an enqueue on a server starting up: %v; want ErrUnavailable, not ErrOutcomeUnknown", err)
	}
}
