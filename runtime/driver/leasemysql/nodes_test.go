package leasemysql

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/driver"
)

// OpenNodes' pool passes over a node that refuses connections and one
// that accepts them and answers nothing (a frozen server), within
// NodeConnectTimeout, then keeps to the node that served; with every node
// down, a call fails as not sent.
func TestOpenNodesPassesOverDeadAndSilentNodes(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	dbtest.Must(t, "listen", err)
	refused.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	dbtest.Must(t, "listen", err)
	t.Cleanup(func() { silent.Close() })
	go func() {
		var held []net.Conn // accepted, never answered
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	at := func(addr string) string { return harness.WithServerAddr(d.DSN, addr) }

	db := nodesPool(t, at(refused.Addr().String()), at(silent.Addr().String()), d.DSN)
	start := time.Now()
	var one int
	dbtest.Must(t, "query through the third node", db.QueryRow("SELECT 1").Scan(&one))
	if took := time.Since(start); took > 3*NodeConnectTimeout {
		t.Errorf("the first connection took %s, want about NodeConnectTimeout (%s)", took, NodeConnectTimeout)
	}
	db.SetMaxIdleConns(0) // the next query needs a new connection
	start = time.Now()
	dbtest.Must(t, "query again", db.QueryRow("SELECT 1").Scan(&one))
	if took := time.Since(start); took >= NodeConnectTimeout {
		t.Errorf("a new connection took %s: the pool went back to the dead nodes first", took)
	}

	down := nodesPool(t, at(refused.Addr().String()))
	err = down.QueryRow("SELECT 1").Scan(&one)
	if err == nil || New(down).ErrorKind(err) != driver.KindNotSent {
		t.Errorf("with every node down: %v, want an error of kind KindNotSent", err)
	}
	if _, err := OpenNodes(); !errors.Is(err, ErrBadDSN) {
		t.Errorf("OpenNodes(): %v, want ErrBadDSN", err)
	}
}
