package leasemysql

import (
	"context"
	sqldriver "database/sql/driver"
	"sync/atomic"
)

// nodeConn is a connection of OpenNodes' pool. It passes every call to
// the MySQL driver's connection and watches the errors: once one says its
// node is unusable (nodeUnusable), the pool closes the connection instead
// of reusing it, and the next connection is made on another node.
type nodeConn struct {
	sqldriver.Conn
	on        int // the node
	connector *nodesConnector
	bad       atomic.Bool
}

// check notes err and returns it.
func (c *nodeConn) check(err error) error {
	if err != nil && nodeUnusable(err) && !c.bad.Swap(true) {
		c.connector.leave(c.on)
	}
	return err
}

func (c *nodeConn) PrepareContext(ctx context.Context, query string) (sqldriver.Stmt, error) {
	s, err := c.Conn.(sqldriver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, c.check(err)
	}
	return &nodeStmt{Stmt: s, conn: c}, nil
}

func (c *nodeConn) BeginTx(ctx context.Context, opts sqldriver.TxOptions) (sqldriver.Tx, error) {
	tx, err := c.Conn.(sqldriver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, c.check(err)
	}
	return nodeTx{Tx: tx, conn: c}, nil
}

func (c *nodeConn) ExecContext(ctx context.Context, query string, args []sqldriver.NamedValue) (sqldriver.Result, error) {
	r, err := c.Conn.(sqldriver.ExecerContext).ExecContext(ctx, query, args)
	return r, c.check(err)
}

func (c *nodeConn) QueryContext(ctx context.Context, query string, args []sqldriver.NamedValue) (sqldriver.Rows, error) {
	r, err := c.Conn.(sqldriver.QueryerContext).QueryContext(ctx, query, args)
	return r, c.check(err)
}

func (c *nodeConn) Ping(ctx context.Context) error {
	return c.check(c.Conn.(sqldriver.Pinger).Ping(ctx))
}

func (c *nodeConn) CheckNamedValue(nv *sqldriver.NamedValue) error {
	return c.Conn.(sqldriver.NamedValueChecker).CheckNamedValue(nv)
}

// ResetSession refuses a connection whose node was found unusable, so
// that the pool closes it.
func (c *nodeConn) ResetSession(ctx context.Context) error {
	if c.bad.Load() {
		return sqldriver.ErrBadConn
	}
	return c.Conn.(sqldriver.SessionResetter).ResetSession(ctx)
}

func (c *nodeConn) IsValid() bool {
	return !c.bad.Load() && c.Conn.(sqldriver.Validator).IsValid()
}

// nodeStmt is a prepared statement of a nodeConn.
type nodeStmt struct {
	sqldriver.Stmt
	conn *nodeConn
}

func (s *nodeStmt) ExecContext(ctx context.Context, args []sqldriver.NamedValue) (sqldriver.Result, error) {
	r, err := s.Stmt.(sqldriver.StmtExecContext).ExecContext(ctx, args)
	return r, s.conn.check(err)
}

func (s *nodeStmt) QueryContext(ctx context.Context, args []sqldriver.NamedValue) (sqldriver.Rows, error) {
	r, err := s.Stmt.(sqldriver.StmtQueryContext).QueryContext(ctx, args)
	return r, s.conn.check(err)
}

func (s *nodeStmt) CheckNamedValue(nv *sqldriver.NamedValue) error {
	return s.Stmt.(sqldriver.NamedValueChecker).CheckNamedValue(nv)
}

// nodeTx is a transaction of a nodeConn: a COMMIT is where Galera reports
// a node that left the primary component.
type nodeTx struct {
	sqldriver.Tx
	conn *nodeConn
}

func (t nodeTx) Commit() error   { return t.conn.check(t.Tx.Commit()) }
func (t nodeTx) Rollback() error { return t.conn.check(t.Tx.Rollback()) }
