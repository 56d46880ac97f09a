package ui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
)

// envScreenshots names the folder the browser test writes each page's
// screenshot to (make ui-screenshots sets it); unset, a temporary one.
const envScreenshots = "LEASEGEN_UI_SCREENSHOTS"

// chromium starts a headless Chromium and returns a DevTools connection to
// its page. Without Chromium the test skips, or fails under CI=true.
func chromium(t *testing.T) *cdp {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is missing: .ci/run installs Debian's chromium package")
		}
		t.Skip("chromium is not installed (apt-get install chromium): the UI is not checked in a browser")
	}
	// Not t.TempDir: Chromium's helper processes may still write its
	// profile while the test's cleanup would remove it.
	profile, err := os.MkdirTemp("", "leasegen-ui-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
		"--user-data-dir="+profile, "--window-size=1280,900", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers die with it
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		for range 10 { // helpers that outlive the group's kill by a moment
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	lines := bufio.NewScanner(stderr)
	var browserWS string
	for lines.Scan() {
		if _, ws, ok := strings.Cut(lines.Text(), "DevTools listening on "); ok {
			browserWS = ws
			break
		}
	}
	if browserWS == "" {
		t.Fatal("chromium did not say where DevTools listens")
	}
	go func() { // keep draining its log
		for lines.Scan() {
		}
	}()
	host := strings.Split(strings.TrimPrefix(browserWS, "ws://"), "/")[0]
	var targets []struct {
		Type string `json:"type"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	resp, err := http.Get("http://" + host + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if tg.Type == "page" {
			c, err := dialCDP(tg.WS)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.close)
			return c
		}
	}
	t.Fatal("chromium has no page target")
	return nil
}

// In a real browser every page renders the database's tasks, with the
// script and styles the content security policy allows; clicking retry on
// a failed task queues it again; each page is saved as a screenshot.
func TestInBrowser(t *testing.T) {
	f := newFixture(t, "sqlite", Options{Prefix: "/ops", Authorize: AnyoneMayWrite})
	f.enqueueKeyed(t)
	wf, err := f.client.EnqueueWorkflow(bg, runtime.Workflow{Name: "order", Steps: []runtime.Step{
		{Name: "charge", Request: runtime.Request{Type: "charge", Options: []runtime.EnqueueOption{runtime.WithDelay(time.Hour)}}},
		{Name: "reserve", Request: runtime.Request{Type: "reserve", Options: []runtime.EnqueueOption{runtime.WithDelay(time.Hour)}}},
		{Name: "ship", Request: runtime.Request{Type: "ship"}, After: []string{"charge", "reserve"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	browser := chromium(t)
	shots := os.Getenv(envScreenshots)
	if shots == "" {
		shots = t.TempDir()
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	pages := []struct {
		name, path, check string
	}{
		{"overview", "/ops/", `document.querySelectorAll('#counts tr[data-type]').length`},
		{"tasks", "/ops/tasks", `document.querySelectorAll('#task-list tr[data-id]').length`},
		{"task", "/ops/tasks/" + id(f.failed), `document.querySelectorAll('#attempts tr').length - 1`},
		{"workers", "/ops/workers", `document.querySelectorAll('#workers tr[data-worker]').length`},
		{"types", "/ops/types", `document.querySelectorAll('#types tr[data-type]').length`},
		{"keys", "/ops/keys", `document.querySelectorAll('#keys tr[data-key]').length`},
		{"schedules", "/ops/schedules", `document.querySelectorAll('#schedules tr').length`},
		{"workflows", "/ops/workflows", `document.querySelectorAll('#workflows tr[data-workflow]').length`},
		{"workflow", fmt.Sprintf("/ops/workflows/%d", wf.ID), `document.querySelectorAll('#workflow-graph g.step').length`},
	}
	for _, p := range pages {
		if err := browser.navigate(f.srv.URL + p.path); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		n, err := browser.eval(p.check)
		if err != nil || string(n) == "0" {
			t.Errorf("%s: %s = %s (%v), want rows", p.name, p.check, n, err)
		}
		styled, _ := browser.eval(`getComputedStyle(document.querySelector('header')).display`)
		if string(styled) != `"flex"` {
			t.Errorf("%s: the stylesheet did not apply (header display %s)", p.name, styled)
		}
		if v, _ := browser.eval(`document.body.innerHTML.includes('<script>alert')`); string(v) != "false" {
			t.Errorf("%s: an unescaped script is in the DOM", p.name)
		}
		png, err := browser.screenshot()
		if err != nil {
			t.Fatalf("%s: screenshot: %v", p.name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, p.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The workflow's graph: three steps drawn, two edges into ship, which
	// stands right of its parents, styled by status.
	if err := browser.navigate(f.srv.URL + fmt.Sprintf("/ops/workflows/%d", wf.ID)); err != nil {
		t.Fatal(err)
	}
	graph, _ := browser.eval(`(() => {
		const box = s => document.querySelector('#workflow-graph g[data-step="' + s + '"] rect').getBBox();
		const edges = document.querySelectorAll('#workflow-graph line.edge[data-to="ship"]').length;
		const waiting = getComputedStyle(document.querySelector('#workflow-graph g[data-step="ship"] rect')).strokeDasharray;
		return [document.querySelectorAll('#workflow-graph g.step').length, edges, box('ship').x > box('charge').x, waiting !== 'none'].join('/');
	})()`)
	if string(graph) != `"3/2/true/true"` {
		t.Errorf("the workflow graph reads %s (steps/edges into ship/ship right of charge/ship dashed as waiting), want 3/2/true/true", graph)
	}
	// The refresh script runs (the CSP allows it): its button says so.
	if err := browser.navigate(f.srv.URL + "/ops/"); err != nil {
		t.Fatal(err)
	}
	if v, _ := browser.eval(`document.getElementById('refresh-toggle').textContent`); !strings.Contains(string(v), "pause refresh") {
		t.Errorf("the refresh button reads %s: the script did not run", v)
	}
	// The chart draws this minute's success and failure, styled, 60 bars.
	bars, _ := browser.eval(`[...document.querySelectorAll('#throughput rect.bar-success, #throughput rect.bar-failed')]
		.filter(r => r.getBBox().height > 0 && getComputedStyle(r).fill !== 'rgba(0, 0, 0, 0)').length + '/' +
		document.querySelectorAll('#throughput rect.bar-hit').length`)
	if string(bars) != `"2/60"` {
		t.Errorf("the chart has %s drawn bars out of minutes, want 2/60", bars)
	}

	if err := browser.navigate(f.srv.URL + "/ops/tasks/" + id(f.failed)); err != nil {
		t.Fatal(err)
	}
	// A stack line far wider than the window wraps: the page does not
	// scroll sideways. The task's metadata is on its page.
	if wide, _ := browser.eval(`document.documentElement.scrollWidth + '/' + window.innerWidth`); !fitsWindow(string(wide)) {
		t.Errorf("the task page with a long stack line is %s px wide (page/window): it does not wrap", wide)
	}
	if md, _ := browser.eval(`document.getElementById('metadata').textContent`); !strings.Contains(string(md), "trace_id") {
		t.Errorf("the task page's metadata reads %s, want its trace_id", md)
	}
	if err := browser.clickAndLoad("#retry"); err != nil {
		t.Fatal(err)
	}
	flash, _ := browser.eval(`document.querySelector('.flash') && document.querySelector('.flash').textContent`)
	if !strings.Contains(string(flash), "retry: task "+id(f.failed)) {
		t.Errorf("after clicking retry the page says %s", flash)
	}
	var attempts int
	testwait.Until(t, func() bool {
		info, err := f.client.Get(bg, f.failed)
		if err != nil {
			t.Fatal(err)
		}
		attempts = len(info.Attempts)
		return info.Status != runtime.StatusFailed || attempts == 2 // queued again (and run again by the worker)
	}, func() string {
		return fmt.Sprintf("the task is still FAILED with %d attempts after the click", attempts)
	})

	// Every task a filter matches: the button counts them, the
	// confirmation acts.
	if err := browser.navigate(f.srv.URL + "/ops/tasks?type=later"); err != nil {
		t.Fatal(err)
	}
	if err := browser.clickAndLoad("#cancel-matching"); err != nil {
		t.Fatal(err)
	}
	if count, _ := browser.eval(`document.getElementById('matching-count').textContent`); !strings.Contains(string(count), "cancel 1 tasks matching type=later") {
		t.Fatalf("the confirmation of a cancel by filter reads %s", count)
	}
	if err := browser.clickAndLoad("#confirm button"); err != nil {
		t.Fatal(err)
	}
	if flash, _ := browser.eval(`document.querySelector('.flash') && document.querySelector('.flash').textContent`); !strings.Contains(string(flash), "cancel: 1 tasks matching the filter") {
		t.Errorf("after confirming the cancel by filter the page says %s", flash)
	}
	if info, _ := f.client.Get(bg, f.queued); info.Status != runtime.StatusCancelled {
		t.Errorf("the task the filter matched is %s, want CANCELLED", info.Status)
	}
	fmt.Fprintf(os.Stderr, "ui screenshots in %s\n", shots)
}

// fitsWindow reads "scrollWidth/innerWidth", as JSON, and reports whether
// the page fits the window's width.
func fitsWindow(js string) bool {
	page, window, ok := strings.Cut(strings.Trim(js, `"`), "/")
	p, err1 := strconv.Atoi(page)
	w, err2 := strconv.Atoi(window)
	return ok && err1 == nil && err2 == nil && p <= w
}
