package leasemysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// NodeConnectTimeout bounds how long OpenNodes' pool tries one node for a
// new connection (the dial, the handshake and the check that the node
// takes writes) before it tries the next: a frozen server still accepts
// TCP connections and then answers nothing.
const NodeConnectTimeout = 2 * time.Second

// OpenNodes opens a pool, as Open does, on one database served by several
// nodes: the members of a MariaDB Galera cluster, or of a MySQL Group
// Replication group in single-primary mode, each DSN naming the same
// database on one node. A new connection goes to the node that served
// the last one, or, when that node does not answer within
// NodeConnectTimeout, is read-only (a demoted primary, a replica), is a
// Group Replication member other than its group's ONLINE primary, or is
// not ready (a Galera node outside the primary component), to the next
// in order. A pooled connection that reports its node read-only or not
// ready, or that broke, is closed instead of reused, and the next
// connection is made elsewhere; a statement in flight on a node that froze
// ends with its context (a worker's statements all have deadlines). So a
// worker leaves a dead, frozen or demoted node within about
// NodeConnectTimeout of its next statement, instead of waiting for the
// node to come back.
func OpenNodes(dsns ...string) (*sql.DB, error) {
	if len(dsns) == 0 {
		return nil, fmt.Errorf("%w: OpenNodes needs at least one DSN", ErrBadDSN)
	}
	c := &nodesConnector{nodes: make([]node, len(dsns))}
	for i, dsn := range dsns {
		cfg, err := openConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i+1, err)
		}
		mc, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, fmt.Errorf("%w: node %d: %v", ErrBadDSN, i+1, err)
		}
		c.nodes[i] = node{addr: cfg.Addr, connector: mc}
	}
	db := sql.OpenDB(c)
	db.SetMaxIdleConns(32)
	return db, nil
}

// node is one server of OpenNodes' pool.
type node struct {
	addr      string
	connector sqldriver.Connector
}

// nodesConnector makes each connection on the first usable node, starting
// with the one that served last.
type nodesConnector struct {
	nodes []node
	// current is the node that served the last connection; a connection
	// that finds its node unusable moves it on.
	current atomic.Int64
}

func (c *nodesConnector) Driver() sqldriver.Driver { return c.nodes[0].connector.Driver() }

func (c *nodesConnector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	start := int(c.current.Load())
	var errs nodeErrors
	for i := range c.nodes {
		n := (start + i) % len(c.nodes)
		conn, err := c.connectTo(ctx, n)
		if err == nil {
			c.current.Store(int64(n))
			return &nodeConn{Conn: conn, on: n, connector: c}, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", c.nodes[n].addr, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, notConnected{errs}
}

// nodeErrors are the errors of the nodes a connection was tried on, in
// order, on one line.
type nodeErrors []error

func (e nodeErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return "no node takes writes: " + strings.Join(msgs, "; ")
}

func (e nodeErrors) Unwrap() []error { return e }

// connectTo makes a connection on node n and checks that the node takes
// writes, all within NodeConnectTimeout.
func (c *nodesConnector) connectTo(ctx context.Context, n int) (sqldriver.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, NodeConnectTimeout)
	defer cancel()
	conn, err := c.nodes[n].connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := takesWrites(ctx, conn); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// errNodeReadOnly and errNodeNotReady say why a node that answered is
// passed over.
var (
	errNodeReadOnly = errors.New("the node is read-only")
	errNodeNotReady = errors.New("the Galera node is not ready (outside the primary component, or joining)")
	errNotPrimary   = errors.New("the node is not its replication group's ONLINE primary")
)

// noGroup reports a server that has no Group Replication to ask: its
// variable is unknown (1193: MariaDB, a MySQL without the plugin), or
// performance_schema is off (1146).
func noGroup(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == mysqlErrUnknownVariable || me.Number == mysqlErrNoSuchTable)
}

// takesWrites checks a new connection's node: writable (read_only off,
// which super_read_only implies), the ONLINE primary of its group when it
// is a Group Replication member, and ready when it is a Galera node.
func takesWrites(ctx context.Context, conn sqldriver.Conn) error {
	q, ok := conn.(sqldriver.QueryerContext)
	if !ok {
		return nil
	}
	var readOnly, ready sqldriver.Value
	if err := queryRow(ctx, q, "SELECT @@global.read_only", &readOnly); err != nil {
		return err
	}
	if fmt.Sprint(readOnly) != "0" {
		return errNodeReadOnly
	}
	if err := groupPrimary(ctx, q); err != nil {
		return err
	}
	var name, wsrep sqldriver.Value
	err := queryRow(ctx, q, "SHOW GLOBAL VARIABLES LIKE 'wsrep_on'", &name, &wsrep)
	if errors.Is(err, io.EOF) || (err == nil && fmt.Sprintf("%s", wsrep) != "ON") {
		return nil // not MariaDB, or no Galera
	}
	if err == nil {
		err = queryRow(ctx, q, "SHOW GLOBAL STATUS LIKE 'wsrep_ready'", &name, &ready)
	}
	switch {
	case err != nil:
		return err
	case fmt.Sprintf("%s", ready) != "ON":
		return errNodeNotReady
	}
	return nil
}

// groupPrimary checks, on a member of a Group Replication group (its
// group_replication_group_name is set), that it is the group's ONLINE
// primary: a member restarted outside its group may be writable, and
// stale. A server without Group Replication passes.
func groupPrimary(ctx context.Context, q sqldriver.QueryerContext) error {
	var group sqldriver.Value
	err := queryRow(ctx, q, "SELECT @@global.group_replication_group_name", &group)
	switch {
	case noGroup(err) || (err == nil && (group == nil || fmt.Sprintf("%s", group) == "")):
		return nil
	case err != nil:
		return err
	}
	var state, role sqldriver.Value
	err = queryRow(ctx, q, `SELECT MEMBER_STATE, MEMBER_ROLE FROM performance_schema.replication_group_members
		WHERE MEMBER_ID = @@server_uuid`, &state, &role)
	switch {
	case errors.Is(err, io.EOF):
		return errNotPrimary // not in the group at all
	case err != nil:
		return err
	case fmt.Sprintf("%s", state) != "ONLINE" || fmt.Sprintf("%s", role) != "PRIMARY":
		return errNotPrimary
	}
	return nil
}

// queryRow reads the first row of query into dest; io.EOF when it has none.
func queryRow(ctx context.Context, q sqldriver.QueryerContext, query string, dest ...*sqldriver.Value) error {
	rows, err := q.QueryContext(ctx, query, nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	row := make([]sqldriver.Value, len(rows.Columns()))
	if err := rows.Next(row); err != nil {
		return err
	}
	for i, d := range dest {
		*d = row[i]
	}
	return nil
}

// leave marks node n unusable for new connections: the next goes to the
// node after it, unless another connection moved on already.
func (c *nodesConnector) leave(n int) {
	c.current.CompareAndSwap(int64(n), int64((n+1)%len(c.nodes)))
}

// nodeUnusable reports an error that says the connection's node cannot
// take this pool's writes now: read-only (1290: a demoted primary, a
// replica; 1836: a replica in read-only mode), not ready (1047: a Galera
// node outside the primary component), shutting down (1053), or the
// connection broke.
func nodeUnusable(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case mysqlErrReadOnly, mysqlErrReplicaReadOnly, mysqlErrNotReady, mysqlErrShutdown:
			return true
		}
		return false
	}
	return errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sqldriver.ErrBadConn)
}
