package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

// envMillion turns TestInBrowserAtAMillion on, with its number of tasks.
const envMillion = "LEASEGEN_UI_MILLION"

// On a database of a million tasks (LEASEGEN_UI_MILLION=1000000; see
// fill: 12,500 failed, 187,500 succeeded, the rest queued), on each
// engine, headless Chromium reads the overview's counts (the workers'
// count, with when it was read, in UTC), retries 10,000 failed tasks by
// filter (the cap of an action on every matching task) and finds them
// queued again. Screenshots go to LEASEGEN_UI_SCREENSHOTS as
// million-<engine>-<page>.png:
//
//	LEASEGEN_UI_MILLION=1000000 LEASEGEN_UI_SCREENSHOTS=$PWD/docs/ui go test -run AtAMillion -timeout 30m ./ui/
func TestInBrowserAtAMillion(t *testing.T) {
	s := os.Getenv(envMillion)
	if s == "" {
		t.Skipf("set %s=1000000 to run the UI in Chromium on a million tasks (a few minutes an engine)", envMillion)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 100_000 {
		t.Fatalf("%s=%q: want a number of tasks, at least 100000", envMillion, s)
	}
	browser := chromium(t)
	shots := os.Getenv(envScreenshots)
	if shots == "" {
		shots = t.TempDir()
	}
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			client, _ := fill(t, kind, n)
			h, err := New(client, Options{Authorize: AnyoneMayWrite, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			dbtest.Must(t, "ui", err)
			srv := httptest.NewServer(h)
			defer srv.Close()
			shoot := func(page string) {
				t.Helper()
				png, err := browser.screenshot()
				dbtest.Must(t, "screenshot", err)
				dbtest.Must(t, "save a screenshot", os.WriteFile(filepath.Join(shots, "million-"+kind+"-"+page+".png"), png, 0o644))
			}

			// Every type's counts, from the workers' count, and when it was read.
			dbtest.Must(t, "overview", browser.navigate(srv.URL+"/"))
			exact, err := client.Stats(bg)
			dbtest.Must(t, "stats", err)
			totals := map[runtime.Status]int{}
			for _, c := range exact.Counts {
				totals[c.Status] += c.Tasks
			}
			for _, c := range exact.Counts {
				if c.Type != "type-0" {
					continue
				}
				want := strconv.Itoa(c.Tasks)
				if totals[c.Status] > countBound {
					want = "≈" + want
				}
				var got string
				js, err := browser.eval(`document.querySelector('#counts tr[data-type="type-0"] a[href$="status=` + string(c.Status) + `"]').textContent`)
				if err == nil {
					err = json.Unmarshal(js, &got)
				}
				if got != want {
					t.Errorf("type-0's %s count reads %q (%v), want %q", c.Status, got, err, want)
				}
			}
			if note, _ := browser.eval(`document.getElementById('capped').textContent`); !strings.Contains(string(note), "the workers' count of every task, read at") ||
				!strings.Contains(string(note), " UTC (") {
				t.Errorf("the overview's note on its counts reads %s", note)
			}
			shoot("overview")

			// A retry of every failed type-0 task: at a million 12,500
			// match, and the cap, 10,000, are retried.
			failed := n / 80
			retried := min(failed, maxMatching)
			dbtest.Must(t, "tasks", browser.navigate(srv.URL+"/tasks?type=type-0&status=FAILED"))
			if at, _ := browser.eval(`document.querySelector('#task-list tr[data-id]').textContent`); !strings.Contains(string(at), "UTC") {
				t.Errorf("a failed task's row reads %s, want its times in UTC", at)
			}
			dbtest.Must(t, "retry matching", browser.clickAndLoad("#retry-matching"))
			confirm, _ := browser.eval(`document.getElementById('matching-count').textContent`)
			want := fmt.Sprintf("retry %d tasks matching", failed)
			if failed > maxMatching {
				want = fmt.Sprintf("retry the newest %d of more than %d tasks matching", maxMatching, maxMatching)
			}
			if !strings.Contains(string(confirm), want) {
				t.Errorf("the confirmation of a retry by filter reads %s, want %q", confirm, want)
			}
			shoot("confirm")
			dbtest.Must(t, "confirm", browser.clickAndLoad("#confirm button"))
			if flash, _ := browser.eval(`document.querySelector('.flash') && document.querySelector('.flash').textContent`); !strings.Contains(string(flash), fmt.Sprintf("retry: %d tasks matching the filter", retried)) {
				t.Errorf("after confirming the retry by filter the page says %s", flash)
			}
			shoot("retried")
			left, err := client.CountMatching(bg, runtime.Filter{Type: "type-0", Status: runtime.StatusFailed}, n)
			dbtest.Must(t, "count the failed", err)
			if left != failed-retried {
				t.Errorf("%d type-0 tasks still failed after a retry of %d of %d by filter", left, retried, failed)
			}
		})
	}
}
