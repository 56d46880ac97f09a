package main

import (
	"github.com/leasegen/leasegen/internal/engines"
	"github.com/leasegen/leasegen/runtime"
)

// openEngine opens the demo's database: MySQL when a DSN is given, else the
// SQLite file (created when missing).
func openEngine(c config) (*runtime.Engine, string, error) {
	if c.dsn != "" {
		_, engine, err := engines.MySQL(c.dsn)
		return engine, "MySQL/MariaDB", err
	}
	_, engine, err := engines.SQLite(c.sqlite, true)
	return engine, "SQLite (" + c.sqlite + ")", err
}
