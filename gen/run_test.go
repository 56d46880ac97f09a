package gen

import (
	"testing"
)

// The committed example code must match what the generator writes now.
func TestExampleIsFresh(t *testing.T) {
	t.Parallel()
	err := Run(Config{Dir: "../testdata/example/billing", Schema: "schema.sql", Alerts: "alerts.yml",
		Dashboard: "dashboard.json", Check: true, Stderr: tWriter{t}})
	if err != nil {
		t.Fatalf("%v: run `make generate`", err)
	}
}

// tWriter sends a diff to the test log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
