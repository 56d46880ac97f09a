package leasemysql

import (
	"errors"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// TiDB is refused by its version string, whatever its release; MySQL and
// MariaDB are not. (No TiDB server installs on the CI machine kind; these
// are versions TiDB reports.)
func TestRefuseTiDB(t *testing.T) {
	t.Parallel()
	for version, refused := range map[string]bool{
		"8.0.11-TiDB-v7.5.1":            true,
		"5.7.25-TiDB-v6.5.0":            true,
		"8.0.11-TiDB-v8.5.0-serverless": true,
		"10.11.6-MariaDB-0+deb12u1":     false,
		"9.7.0":                         false,
		"8.0.36-0ubuntu0.22.04.1":       false,
	} {
		err := refuse(version)
		if got := errors.Is(err, leasetype.ErrUnsupportedDatabase); got != refused {
			t.Errorf("%s: refused %v (%v), want %v", version, got, err, refused)
		}
		if refused && !strings.Contains(err.Error(), "SKIP LOCKED") {
			t.Errorf("%s: %v does not say why", version, err)
		}
	}
}

// A node of a Galera cluster is noted with its size; a plain server is not.
func TestGaleraNotes(t *testing.T) {
	plain := New(dbtest.New(t).DB)
	dbtest.Must(t, "check", plain.Check(bg))
	if notes := plain.Notes(); len(notes) != 0 {
		t.Errorf("a plain server is noted: %q", notes)
	}
	db, _ := galeraDB(t)
	node := New(db.DB)
	dbtest.Must(t, "check", node.Check(bg))
	if notes := node.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "Galera cluster of 3 nodes") {
		t.Errorf("a Galera node's notes: %q, want one naming a cluster of 3 nodes", notes)
	}
}
