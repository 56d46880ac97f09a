package main

import (
	"database/sql"
	"fmt"

	_ "github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite"

	"github.com/leasegen/leasegen/runtime"
)

// openEngine opens the demo's database: MySQL when a DSN is given, else the
// SQLite file.
func openEngine(c config) (*runtime.Engine, string, error) {
	if c.dsn != "" {
		db, err := sql.Open("mysql", c.dsn)
		if err != nil {
			return nil, "", fmt.Errorf("open MySQL: %w", err)
		}
		return runtime.MySQL(db), "MySQL/MariaDB", nil
	}
	db, err := sql.Open("sqlite", runtime.SQLiteDSN(c.sqlite))
	if err != nil {
		return nil, "", fmt.Errorf("open SQLite: %w", err)
	}
	return runtime.SQLite(db), "SQLite (" + c.sqlite + ")", nil
}
