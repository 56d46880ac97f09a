package main

import (
	"github.com/leasegen/leasegen/internal/engines"
	"github.com/leasegen/leasegen/internal/placeholder"
	"github.com/leasegen/leasegen/runtime"
)

// openEngine opens the demo's database: PostgreSQL for a postgres:// or
// postgresql:// URL, MySQL for another DSN, else the SQLite file (created
// when missing).
func openEngine(c config) (*runtime.Engine, string, error) {
	if engines.IsPostgres(c.dsn) {
		_, engine, err := engines.Postgres(c.dsn)
		return engine, "PostgreSQL", err
	}
	if c.dsn != "" {
		_, engine, err := engines.MySQL(c.dsn)
		return engine, "MySQL/MariaDB", err
	}
	_, engine, err := engines.SQLite(c.sqlite, true)
	return engine, "SQLite (" + c.sqlite + ")", err
}

// sqlFor returns the demo's own statements, written with ? placeholders,
// in the placeholders of c's engine.
func sqlFor(c config) func(string) string {
	if engines.IsPostgres(c.dsn) {
		return func(q string) string { return placeholder.Rewrite(q, placeholder.Dollar) }
	}
	return func(q string) string { return q }
}
