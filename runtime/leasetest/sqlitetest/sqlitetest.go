// Package sqlitetest gives a service's tests a migrated leasegen engine on
// a temporary SQLite file, in one line, for the assertions of package
// leasetest:
//
//	engine, client := sqlitetest.NewEngine(t)
package sqlitetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

// NewEngine returns a migrated engine on a SQLite file in t's temporary
// folder, closed when t ends, and a client on it.
func NewEngine(t testing.TB) (*runtime.Engine, *runtime.Client) {
	t.Helper()
	db, err := leasesqlite.Open(filepath.Join(t.TempDir(), "tasks.db"))
	if err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	engine := runtime.NewEngine(leasesqlite.New(db))
	if err := engine.Migrate(context.Background()); err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
	return engine, client
}
