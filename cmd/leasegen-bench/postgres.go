package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql
)

// createPostgresDatabase creates a scratch database on the server of
// serverURL and returns its URL, and a function that drops it.
func createPostgresDatabase(ctx context.Context, serverURL, prefix string) (string, func(), error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", nil, fmt.Errorf("-postgres: want a postgres:// URL: %w", err)
	}
	admin, err := sql.Open("pgx", serverURL)
	if err != nil {
		return "", nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create scratch database: %w", err)
	}
	u.Path = "/" + name
	drop := func() {
		_, _ = admin.Exec("DROP DATABASE " + name + " WITH (FORCE)")
		admin.Close()
	}
	return u.String(), drop, nil
}

// describePostgres prints the server's version and durability settings.
func describePostgres(ctx context.Context, w io.Writer, db *sql.DB) error {
	var version, fsync, syncCommit, fullPages, buffers string
	err := db.QueryRowContext(ctx, `SELECT version(), current_setting('fsync'), current_setting('synchronous_commit'),
		current_setting('full_page_writes'), current_setting('shared_buffers')`).Scan(&version, &fsync, &syncCommit, &fullPages, &buffers)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "server: %s, fsync=%s, synchronous_commit=%s, full_page_writes=%s, shared_buffers=%s\n",
		version, fsync, syncCommit, fullPages, buffers)
	return nil
}

// The PostgreSQL statements of the yardsticks: ids come as one array.
const (
	pgCeilingClaim = `UPDATE leasegen_tasks SET status = 'RUNNING', attempt = attempt + 1, lease_owner = 'ceiling',
		lease_until = now() + interval '60 seconds', started_at = now(), updated_at = now() WHERE id = ANY($1)`
	pgCeilingComplete = `UPDATE leasegen_tasks SET status = 'SUCCESS', result = NULL, finished_at = now(), updated_at = now() WHERE id = ANY($1)`
	pgCeilingFlip     = `UPDATE leasegen_tasks SET status = CASE WHEN status = 'SUCCESS' THEN 'QUEUED' ELSE 'SUCCESS' END,
		updated_at = now(), attempt = attempt + 1 WHERE id = ANY($1)`
	pgNaiveClaim = `SELECT id FROM leasegen_tasks WHERE status = 'QUEUED' ORDER BY priority DESC, available_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`
	pgNaiveMark  = `UPDATE leasegen_tasks SET status = 'RUNNING', attempt = attempt + 1, lease_owner = $1,
		lease_until = now() + interval '60 seconds', started_at = now(), updated_at = now() WHERE id = $2`
	pgNaiveRenew    = `UPDATE leasegen_tasks SET lease_until = now() + interval '60 seconds', updated_at = now() WHERE id = $1 AND lease_owner = $2`
	pgNaiveComplete = `UPDATE leasegen_tasks SET status = 'SUCCESS', finished_at = now() WHERE id = $1 AND lease_owner = $2`
	pgSuccessSpan   = `SELECT COUNT(*), COALESCE(CAST(EXTRACT(EPOCH FROM MAX(finished_at) - MIN(started_at)) * 1000000 AS BIGINT), 0)
		FROM leasegen_tasks WHERE status = 'SUCCESS'`
)
