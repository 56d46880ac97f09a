package runtime

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// migration is one versioned schema step.
type migration struct {
	Version    int
	Name       string
	Statements []string
}

// loadMigrations reads NNNN_name.sql files from dir of fsys, in version order.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		name := e.Name()
		prefix, _, ok := strings.Cut(name, "_")
		version, err := strconv.Atoi(prefix)
		if !ok || err != nil || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("migration file %s: want NNNN_name.sql", name)
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{Version: version, Name: name, Statements: splitStatements(string(body))})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.Version - b.Version })
	return out, nil
}

// splitStatements splits a migration file on semicolons that end a line,
// dropping comment lines. Our migrations keep semicolons out of strings.
func splitStatements(body string) []string {
	var stmts []string
	var cur strings.Builder
	for line := range strings.Lines(body) {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		if strings.HasSuffix(trimmed, ";") {
			stmts = append(stmts, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		stmts = append(stmts, s)
	}
	return stmts
}

// applyMigrations runs, on conn, every step not yet recorded in
// leasegen_schema_migrations, recording each after its statements. The
// caller serializes concurrent migrators (a named lock, a write transaction).
// When every step is applied it runs no DDL at all, so a service whose
// database user may only read and write rows can call Migrate at start.
func applyMigrations(ctx context.Context, conn *sql.Conn, steps []migration, d migrationDialect) error {
	applied, err := appliedVersions(ctx, conn)
	if err != nil {
		if _, cerr := conn.ExecContext(ctx, d.createTable); cerr != nil {
			return d.explain("create leasegen_schema_migrations", cerr)
		}
		if applied, err = appliedVersions(ctx, conn); err != nil {
			return fmt.Errorf("leasegen: migrate: %w", err)
		}
	}
	for _, m := range steps {
		if applied[m.Version] {
			continue
		}
		for _, stmt := range m.Statements {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return d.explain("migration "+m.Name, err)
			}
		}
		if _, err := conn.ExecContext(ctx, d.recordVersion, m.Version, m.Name); err != nil {
			return d.explain("record migration "+m.Name, err)
		}
	}
	return nil
}

func appliedVersions(ctx context.Context, conn *sql.Conn) (map[int]bool, error) {
	rows, err := conn.QueryContext(ctx, "SELECT version FROM leasegen_schema_migrations")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}

// migrationDialect is what applyMigrations needs of an engine besides
// its steps.
type migrationDialect struct {
	createTable   string // creates leasegen_schema_migrations if missing
	recordVersion string // records (version, name) as applied
	// denied reports a statement the user's grants refuse; nil for an
	// engine without grants.
	denied func(error) bool
}

// explain wraps a failed migration statement; a refused one says which
// privileges migrating needs: the runtime's least-privilege user may not
// change the schema.
func (d migrationDialect) explain(what string, err error) error {
	if d.denied != nil && d.denied(err) {
		return fmt.Errorf("leasegen: %s: %w: run Migrate (or apply runtime/migrations) as a user with CREATE, ALTER, INDEX and DROP on the database; workers and clients need only SELECT, INSERT, UPDATE, DELETE", what, err)
	}
	return fmt.Errorf("leasegen: %s: %w", what, err)
}
