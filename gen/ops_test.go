package gen

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The example's rendered alert rules pass Prometheus's own checks and unit
// tests, and its dashboard is valid JSON with one option per task type.
func TestRenderedOpsFiles(t *testing.T) {
	t.Parallel()
	const dir = "../testdata/example/billing"
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is missing: .ci/run installs Debian's prometheus package")
		}
		t.Skip("promtool not installed (apt-get install prometheus): alert rules not checked")
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	raw, err := os.ReadFile(dir + "/dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels     []json.RawMessage
		Templating struct {
			List []struct {
				Name    string
				Options []struct{ Value string }
			}
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var options []string
	for _, v := range dash.Templating.List {
		if v.Name == "type" {
			for _, o := range v.Options {
				options = append(options, o.Value)
			}
		}
	}
	if len(dash.Panels) < 8 || strings.Join(options, ",") != "import,export,notify,reconcile,invoice_run" {
		t.Errorf("dashboard: %d panels, type options %v", len(dash.Panels), options)
	}
}
