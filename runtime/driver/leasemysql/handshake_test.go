package leasemysql

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
)

// tooManyConnections listens on loopback and answers every connection as
// a MySQL server at max_connections does: an error packet (1040) instead
// of the handshake, then a close.
func tooManyConnections(t *testing.T) string {
	t.Helper()
	return dbtest.FakeServer(t, func(c net.Conn) {
		defer c.Close()
		payload := append([]byte{0xff}, binary.LittleEndian.AppendUint16(nil, 1040)...)
		payload = append(payload, "#08004Too many connections"...)
		header := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))[:3]
		_, _ = c.Write(append(append(header, 0), payload...))
	})
}

// A connection the server refuses at the handshake sent nothing: on
// Open's pool the driver says so, and an enqueue on it is ErrUnavailable,
// never ErrOutcomeUnknown, so a caller may retry it.
func TestRefusedHandshakeIsNotSent(t *testing.T) {
	t.Parallel()
	db, err := Open("leasegen@tcp(" + tooManyConnections(t) + ")/db")
	dbtest.Must(t, "open", err)
	t.Cleanup(func() { db.Close() })
	d := New(db)
	err = db.PingContext(bg)
	if err == nil || d.ErrorKind(err) != driver.KindNotSent {
		t.Errorf("a connection refused at the handshake: %v, kind %d; want KindNotSent (%d)", err, d.ErrorKind(err), driver.KindNotSent)
	}
	client, err := runtime.NewClient(runtime.NewEngine(d), runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	_, err = client.Enqueue(bg, "a", nil)
	if !errors.Is(err, runtime.ErrUnavailable) || errors.Is(err, runtime.ErrOutcomeUnknown) {
		t.Errorf("an enqueue on a server refusing connections: %v; want ErrUnavailable, not ErrOutcomeUnknown", err)
	}
}
