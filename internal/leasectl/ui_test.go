package leasectl

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
	"github.com/leasegen/leasegen/ui"
)

// leasectl ui is closed by default: it will not serve an address that is
// not loopback without credentials, and with them it asks a browser to
// sign in and admits only the file's users.
func TestUIIsClosedByDefault(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	var tg = target{flags: []string{"-sqlite", db, "-create"}}
	code, out, _ := tg.ctl(t, "migrate", "up")
	expect(t, "migrate", code, 0, out, "schema at version")
	tg.flags = []string{"-sqlite", db}
	code, _, stderr := tg.ctl(t, "ui", "-addr", "0.0.0.0:0")
	expect(t, "ui on all interfaces", code, 2, stderr, "not a loopback address", "-basic-auth-file")
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = tg.ctl(t, "ui", "-addr", "0.0.0.0:0", "-basic-auth-file", bad)
	expect(t, "a bad auth file", code, 2, stderr, "want user:password")

	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "localhost:1": true, "[::1]:80": true, "0.0.0.0:80": false, ":8080": false, "10.0.0.5:80": false} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q) = %v, want %v", addr, got, want)
		}
	}

	sdb, err := leasesqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	client, _ := runtime.NewClient(runtime.NewEngine(leasesqlite.New(sdb)), runtime.ClientConfig{})
	h, err := ui.New(client, ui.Options{Authorize: basicAuth(map[string]string{"alice": "s3cret"})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(challenge(h))
	defer srv.Close()
	for _, c := range []struct {
		user, pass string
		want       int
	}{{"", "", http.StatusUnauthorized}, {"alice", "wrong", http.StatusForbidden}, {"bob", "s3cret", http.StatusForbidden}, {"alice", "s3cret", http.StatusOK}} {
		req, _ := http.NewRequest("GET", srv.URL+"/", nil)
		if c.user != "" {
			req.SetBasicAuth(c.user, c.pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET / as %q/%q: %d, want %d", c.user, c.pass, resp.StatusCode, c.want)
		}
	}
}

// leasectl ui counts the schema versions a database lacks, to say so at
// start-up.
func TestPendingMigrations(t *testing.T) {
	db, err := leasesqlite.Open(filepath.Join(t.TempDir(), "empty.db"))
	dbtest.Must(t, "open", err)
	t.Cleanup(func() { db.Close() })
	engine := runtime.NewEngine(leasesqlite.New(db))
	if n, err := pendingMigrations(context.Background(), engine); err != nil || n == 0 {
		t.Errorf("pending on an empty database: %d, %v; want every version", n, err)
	}
	dbtest.Must(t, "migrate", engine.Migrate(context.Background()))
	if n, err := pendingMigrations(context.Background(), engine); err != nil || n != 0 {
		t.Errorf("pending after Migrate: %d, %v; want 0", n, err)
	}
}
