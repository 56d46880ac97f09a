package dbtest

import (
	"net"
	"testing"
)

// FakeServer listens on loopback and hands every connection to serve,
// which owns it; it closes when t ends. It returns the host:port, for a
// DSN: a stand-in for a server in a state a test cannot make a real one
// take on demand (starting up, at its connection limit).
func FakeServer(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Must(t, "listen", err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}
