package driver

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/service-modules.txt")

// serviceModulesFile lists the module graph of a service on the runtime.
const serviceModulesFile = "testdata/service-modules.txt"

// A service that imports the runtime and its drivers gets exactly the
// module graph in testdata/service-modules.txt: adapters with libraries of
// their own (contrib/leaseotel) and the generator's and tests' tools stay
// out of it. A change to the list must be deliberate: run
// go test ./runtime/driver -run TestServiceModuleGraph -update and commit
// the file with the change that needs it.
func TestServiceModuleGraph(t *testing.T) {
	t.Parallel()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return string(out)
	}
	run("mod", "init", "example.com/service")
	run("mod", "edit", "-require=github.com/leasegen/leasegen@v0.0.0", "-replace=github.com/leasegen/leasegen="+repo)
	main := `package main

import (
	_ "github.com/leasegen/leasegen/metrics"
	_ "github.com/leasegen/leasegen/runtime"
	_ "github.com/leasegen/leasegen/runtime/driver/leasemysql"
	_ "github.com/leasegen/leasegen/runtime/driver/leasepostgres"
	_ "github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

func main() {}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	run("mod", "tidy")
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(run("list", "-m", "all")), "\n") {
		if !strings.HasPrefix(line, "example.com/service") {
			got = append(got, strings.Replace(line, " => "+repo, " => LEASEGEN", 1))
		}
	}
	if *update {
		if err := os.WriteFile(serviceModulesFile, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(serviceModulesFile)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a service's module graph changed (-%s +now):\n%s\nIf that is meant, run go test ./runtime/driver -run TestServiceModuleGraph -update", serviceModulesFile, diff)
	}
}
