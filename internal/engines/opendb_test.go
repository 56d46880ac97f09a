package engines

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// A pasted DSN without parseTime or a time zone still gives a working
// engine: MySQL adds what the runtime needs.
func TestMySQLAddsTheRuntimeSettings(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	bare := strings.Split(d.DSN, "?")[0]
	db, engine, err := MySQL(bare)
	dbtest.Must(t, "open", err)
	defer db.Close()
	dbtest.Must(t, "migrate through a DSN without parseTime", engine.Migrate(context.Background()))
	if _, _, err := MySQL("not a dsn"); !errors.Is(err, ErrBadDSN) {
		t.Errorf("a DSN that does not parse: %v, want ErrBadDSN", err)
	}
}

// A SQLite path that does not exist is refused unless it may be created.
func TestSQLiteRefusesAMissingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	if _, _, err := SQLite(path, false); !errors.Is(err, ErrNoFile) {
		t.Fatalf("a missing file: %v, want ErrNoFile", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the refused open created the file")
	}
	db, engine, err := SQLite(path, true)
	dbtest.Must(t, "create", err)
	defer db.Close()
	dbtest.Must(t, "migrate", engine.Migrate(context.Background()))
	if _, _, err := SQLite(path, false); err != nil {
		t.Errorf("an existing file: %v", err)
	}
}
