package migrations

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

func TestSplit(t *testing.T) {
	got := Split("-- comment\nCREATE TABLE a (\n  x INT\n);\n\nCREATE TABLE b (y INT);\n")
	if len(got) != 2 || !strings.HasPrefix(got[0], "CREATE TABLE a") || got[1] != "CREATE TABLE b (y INT)" {
		t.Errorf("Split = %q", got)
	}
	fn := "CREATE FUNCTION f() RETURNS INT\nLANGUAGE plpgsql AS $$\nBEGIN\n  -- kept\n  RETURN 1;\nEND\n$$;\nSELECT f();\n"
	if got := Split(fn); len(got) != 2 || !strings.Contains(got[0], "RETURN 1;\nEND\n$$") || !strings.Contains(got[0], "-- kept") || got[1] != "SELECT f()" {
		t.Errorf("Split of a $$ body = %q", got)
	}
}

// Load orders the steps by version, whatever the file order, and refuses a
// file that does not say its version.
func TestLoad(t *testing.T) {
	steps, err := Load(fstest.MapFS{
		"0010_late.sql": {Data: []byte("SELECT 10;")},
		"0002_b.sql":    {Data: []byte("SELECT 2;\nSELECT 3;")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].Version != 2 || steps[1].Name != "0010_late.sql" || len(steps[0].Statements) != 2 {
		t.Errorf("Load = %+v", steps)
	}
	if _, err := Load(fstest.MapFS{"tasks.sql": {}}); err == nil || !strings.Contains(err.Error(), "NNNN_name.sql") {
		t.Errorf("Load(tasks.sql) = %v, want the naming rule", err)
	}
}

// Every engine folder loads, up to the same newest version (PostgreSQL
// skips the reshaping steps 3 and 4 of the others).
func TestEngineFolders(t *testing.T) {
	var versions []int
	for _, dir := range []string{"mysql", "postgres", "sqlite"} {
		sub, err := fs.Sub(map[string]fs.FS{"mysql": MySQL, "postgres": Postgres, "sqlite": SQLite}[dir], dir)
		if err != nil {
			t.Fatal(err)
		}
		steps, err := Load(sub)
		if err != nil || len(steps) == 0 {
			t.Fatalf("%s: %d steps, %v", dir, len(steps), err)
		}
		if versions == nil {
			for _, s := range steps {
				versions = append(versions, s.Version)
			}
		} else if steps[len(steps)-1].Version != versions[len(versions)-1] {
			t.Errorf("%s has versions up to %d, mysql up to %d", dir, steps[len(steps)-1].Version, versions[len(versions)-1])
		}
	}
}
