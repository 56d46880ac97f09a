package ui

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
	"github.com/leasegen/leasegen/runtime/leasetest"
)

var bg = context.Background()

// fixture is a UI on a database with tasks in every status.
type fixture struct {
	client         *runtime.Client
	srv            *httptest.Server
	http           *http.Client
	failed, queued runtime.TaskID
	dsn            string
	drv            driver.Driver
}

func newFixture(t *testing.T, kind string, opts Options) *fixture {
	t.Helper()
	f := &fixture{}
	var drv driver.Driver
	drv, f.dsn = openDriver(t, kind)
	f.drv = drv
	engine := runtime.NewEngine(drv)
	dbtest.Must(t, "migrate", engine.Migrate(bg))
	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	f.client = client
	evil := `<script>alert("x")</script>`
	ok, _ := client.Enqueue(bg, "report", []byte(`{"n":1}`), runtime.WithOwner("alice"), runtime.WithIdempotencyKey("k-1"))
	f.failed, _ = client.Enqueue(bg, "report", []byte(`{"html":"`+strings.ReplaceAll(evil, `"`, `\"`)+`"}`), runtime.WithMaxAttempts(1),
		runtime.WithMetadata(map[string]string{"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}))
	f.queued, _ = client.Enqueue(bg, "later", []byte(`{}`), runtime.WithDelay(time.Hour))
	w, err := runtime.NewWorker(engine, runtime.Config{LeaseTimeout: time.Second, HeartbeatInterval: 200 * time.Millisecond, PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	dbtest.Must(t, "worker", err)
	dbtest.Must(t, "handle", w.Handle("report", func(_ context.Context, task *runtime.Task) error {
		if task.ID == f.failed { // with a stack line far wider than a screen
			return runtime.Permanent(errors.New(evil + "\n" + longStackLine))
		}
		return nil
	}, runtime.WithSchedule(runtime.Periodic{Name: "hourly-report", Cron: "@hourly", Zone: "Europe/Berlin"})))
	dbtest.Must(t, "start", w.Start(bg))
	t.Cleanup(func() { _ = w.Stop(bg) })
	for _, id := range []runtime.TaskID{ok, f.failed} {
		waitDone(t, client, id)
	}
	// Count the minute in progress, which workers count only once it ended.
	leasetest.CountThroughputNow(t, drv)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h, err := New(client, opts)
	dbtest.Must(t, "new ui", err)
	mux := http.NewServeMux()
	mux.Handle(opts.Prefix+"/", h)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	jar, _ := cookiejar.New(nil)
	f.http = &http.Client{Jar: jar}
	return f
}

// enqueueKeyed enqueues two tasks of one concurrency key with a limit of
// 1, due in an hour: one holds the key's slot, one waits; and three of a
// fair key (weight 3) with a rate of 2 an hour: two hold its starts, one
// waits.
func (f *fixture) enqueueKeyed(t *testing.T) {
	t.Helper()
	for range 2 {
		_, err := f.client.Enqueue(bg, "synced", []byte(`{}`), runtime.WithConcurrencyKey(`acct-<b>9</b>`, 1), runtime.WithDelay(time.Hour))
		dbtest.Must(t, "enqueue keyed", err)
	}
	for range 3 {
		_, err := f.client.Enqueue(bg, "called", []byte(`{}`), runtime.WithKeyRate("api", 2, time.Hour), runtime.WithFairnessKey("api", 3),
			runtime.WithDelay(time.Hour))
		dbtest.Must(t, "enqueue rated", err)
	}
}

// openDriver opens a new database of kind (mysql, postgres, sqlite) and
// returns its driver and the DSN it was opened with.
func openDriver(t testing.TB, kind string) (driver.Driver, string) {
	t.Helper()
	switch kind {
	case "mysql":
		db := dbtest.New(t)
		return leasemysql.New(db.DB), db.DSN
	case "postgres":
		dsn := pgtest.New(t)
		db, err := leasepostgres.Open(dsn)
		dbtest.Must(t, "open", err)
		t.Cleanup(func() { db.Close() })
		return leasepostgres.New(db), dsn
	}
	path := filepath.Join(t.TempDir(), "ui.db")
	db, err := leasesqlite.Open(path)
	dbtest.Must(t, "open", err)
	t.Cleanup(func() { db.Close() })
	return leasesqlite.New(db), path
}

// longStackLine is a frame of a stack trace with a long, unbroken path.
var longStackLine = "\tgithub.com/example/service/internal/" + strings.Repeat("deeply_nested_package_name/", 20) + "handler.go:42 +0x1d"

func waitDone(t *testing.T, c *runtime.Client, id runtime.TaskID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	_, err := c.Wait(ctx, id)
	dbtest.Must(t, "wait", err)
}

// get fetches path and returns its status and body.
func (f *fixture) get(t *testing.T, path string) (int, string, http.Header) {
	t.Helper()
	resp, err := f.http.Get(f.srv.URL + path)
	dbtest.Must(t, "GET "+path, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (f *fixture) post(t *testing.T, path string, form url.Values) (int, string) {
	t.Helper()
	resp, err := f.http.PostForm(f.srv.URL+path, form)
	dbtest.Must(t, "POST "+path, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSRF token in the page")
	}
	return m[1]
}

func forEngine(t *testing.T, test func(t *testing.T, kind string)) {
	t.Parallel()
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			test(t, kind)
		})
	}
}

// Every page renders what the database holds, escapes payloads and
// errors, sets the security headers, and never shows the DSN.
func TestPages(t *testing.T) {
	forEngine(t, func(t *testing.T, kind string) {
		f := newFixture(t, kind, Options{Prefix: "/ops/tasks", Authorize: AnyoneMayWrite})
		f.enqueueKeyed(t)
		wf, err := f.client.EnqueueWorkflow(context.Background(), runtime.Workflow{Name: "order", Steps: []runtime.Step{
			{Name: "charge", Request: runtime.Request{Type: "charge", Options: []runtime.EnqueueOption{runtime.WithDelay(time.Hour)}}}, // not due: the overview has none
			{Name: "<ship>", Request: runtime.Request{Type: "ship"}, After: []string{"charge"}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		wfPath := fmt.Sprintf("/ops/tasks/workflows/%d", wf.ID)
		pages := map[string][]string{
			"/ops/tasks/workflows": {fmt.Sprintf(`data-workflow="%d"`, wf.ID), ">order<", `class="state-running"`},
			wfPath: {`id="workflow-graph"`, `data-step="charge" data-status="QUEUED"`, `data-step="&lt;ship&gt;" data-status="WAITING"`,
				`class="edge" data-from="charge" data-to="&lt;ship&gt;"`, fmt.Sprintf(`href="/ops/tasks/tasks/%d"`, wf.Tasks["charge"]),
				"(waiting for its parents)", `id="cancel-workflow"`},
			"/ops/tasks/":                                 {`data-type="report"`, `data-type="later"`, "FAILED", "none due (next in ", "No task is due.", `id="throughput"`, `class="bar-success"`, "1 succeeded, <span class=\"status-failed\">1 failed</span>, 0 cancelled"},
			"/ops/tasks/tasks":                            {`data-status="FAILED"`, `data-status="SUCCESS"`, `data-status="QUEUED"`, "k-1", "alice"},
			"/ops/tasks/tasks?status=failed":              {`data-status="FAILED"`},
			"/ops/tasks/tasks?status=waiting&type=synced": {`data-status="WAITING"`},
			"/ops/tasks/tasks?key=k-1":                    {"alice"},
			"/ops/tasks/tasks/" + id(f.failed): {`id="task-status">FAILED`, "&lt;script&gt;", `id="retry"`, "outcome-error", "leasectl", " UTC / ",
				`<code>trace_id</code> 4bf92f3577b34da6a3ce929d0e0e4736`},
			"/ops/tasks/workers": {"data-worker=", "report"},
			"/ops/tasks/keys": {`data-key="acct-&lt;b&gt;9&lt;/b&gt;"`, `<td class="num">0</td><td class="num">1</td><td>at its limit</td>`, `tasks?status=waiting&type=synced">1</a>`,
				`<td class="num">none</td>`, `<td>at its rate</td>`, `<td>2 per 1h0m0s</td><td class="num">2</td><td class="num">300 queued</td>`},
			"/ops/tasks/types":                 {`data-type="report"`, "pause"},
			"/ops/tasks/schedules":             {`data-schedule="hourly-report"`, "cron @hourly Europe/Berlin", " UTC (", ", Europe/Berlin)", "active (1 workers)", ">pause<", ">trigger<"},
			"/ops/tasks/tasks?status=nonsense": {"unknown status"},
			"/ops/tasks/assets/app.css":        {"font:"},
		}
		for path, wants := range pages {
			code, body, hdr := f.get(t, path)
			if code != http.StatusOK {
				t.Errorf("GET %s: %d\n%s", path, code, body)
				continue
			}
			for _, w := range wants {
				if !strings.Contains(body, w) {
					t.Errorf("GET %s: no %q in\n%s", path, w, body)
				}
			}
			if strings.Contains(body, "<script>alert") {
				t.Errorf("GET %s: a payload or error reached the page unescaped", path)
			}
			if strings.Contains(body, f.dsn) {
				t.Errorf("GET %s shows the DSN", path)
			}
			if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
			}
		}
		if code, _, _ := f.get(t, "/ops/tasks/tasks/999999"); code != http.StatusNotFound {
			t.Errorf("an unknown task: %d, want 404", code)
		}
		if code, _, _ := f.get(t, "/ops/tasks/workflows/999999"); code != http.StatusNotFound {
			t.Errorf("an unknown workflow: %d, want 404", code)
		}
	})
}

// Retry and cancel go through the client, by POST with the page's CSRF
// token; without it, or read-only, or refused by Authorize, they are 403
// and change nothing; bulk actions are confirmed first.
func TestActions(t *testing.T) {
	forEngine(t, func(t *testing.T, kind string) {
		var logs strings.Builder
		f := newFixture(t, kind, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			Authorize: func(r *http.Request) (Access, error) { return Access{User: "ops-ann", Write: true}, nil }})
		_, page, _ := f.get(t, "/tasks/"+id(f.failed))
		token := csrfOf(t, page)
		if code, _ := f.post(t, "/tasks/"+id(f.failed)+"/retry", url.Values{}); code != http.StatusForbidden {
			t.Errorf("retry without a token: %d, want 403", code)
		}
		if code, _ := f.post(t, "/tasks/"+id(f.failed)+"/retry", url.Values{"csrf": {strings.Repeat("0", 64)}}); code != http.StatusForbidden {
			t.Errorf("retry with another token: %d, want 403", code)
		}
		if info, _ := f.client.Get(bg, f.failed); info.Status != runtime.StatusFailed {
			t.Fatalf("a refused retry changed the task: %s", info.Status)
		}
		code, body := f.post(t, "/tasks/"+id(f.failed)+"/retry", url.Values{"csrf": {token}})
		if code != http.StatusOK || !strings.Contains(body, "retry: task "+id(f.failed)) {
			t.Errorf("retry: %d\n%s", code, body)
		}
		waitDone(t, f.client, f.failed) // retried, and failed again
		if info, _ := f.client.Get(bg, f.failed); len(info.Attempts) != 2 {
			t.Errorf("after the retry the history holds %d attempts, want 2", len(info.Attempts))
		}
		if !strings.Contains(logs.String(), "user=ops-ann") || !strings.Contains(logs.String(), "retry") {
			t.Errorf("the retry was not logged with its user:\n%s", logs.String())
		}

		for _, forged := range []string{"/?flash=" + url.QueryEscape("Session expired: log in at evil.example"),
			"/?flash=x&flash_sig=" + strings.Repeat("0", 64)} {
			if _, page, _ := f.get(t, forged); strings.Contains(page, `class="flash"`) {
				t.Errorf("GET %s shows a status line the UI did not issue", forged)
			}
		}

		code, body = f.post(t, "/bulk", url.Values{"csrf": {token}, "action": {"cancel"}, "id": {id(f.queued)}})
		if code != http.StatusOK || !strings.Contains(body, `id="confirm"`) {
			t.Fatalf("bulk cancel without confirm: %d, want the confirmation page\n%s", code, body)
		}
		if info, _ := f.client.Get(bg, f.queued); info.Status != runtime.StatusQueued {
			t.Fatalf("an unconfirmed bulk cancel changed the task: %s", info.Status)
		}
		code, body = f.post(t, "/bulk", url.Values{"csrf": {token}, "action": {"cancel"}, "id": {id(f.queued)}, "confirm": {"yes"}})
		if code != http.StatusOK || !strings.Contains(body, "1 tasks done") {
			t.Errorf("bulk cancel: %d\n%s", code, body)
		}
		if info, _ := f.client.Get(bg, f.queued); info.Status != runtime.StatusCancelled {
			t.Errorf("after the bulk cancel the task is %s", info.Status)
		}
		code, body = f.post(t, "/schedules/hourly-report/pause", url.Values{"csrf": {token}})
		if code != http.StatusOK || !strings.Contains(body, "pause: schedule hourly-report") || !strings.Contains(body, ">resume<") {
			t.Errorf("pause a schedule: %d\n%s", code, body)
		}
		code, body = f.post(t, "/schedules/hourly-report/trigger", url.Values{"csrf": {token}})
		if code != http.StatusOK || !strings.Contains(body, "enqueued task") {
			t.Errorf("trigger a schedule: %d\n%s", code, body)
		}
		if code, body = f.post(t, "/schedules/nope/pause", url.Values{"csrf": {token}}); !strings.Contains(body, "schedule not found") {
			t.Errorf("pause an unknown schedule: %d\n%s", code, body)
		}
		many := url.Values{"csrf": {token}, "action": {"retry"}}
		for i := 1; i <= maxBulk+1; i++ {
			many.Add("id", id(runtime.TaskID(i)))
		}
		if _, body := f.post(t, "/bulk", many); !strings.Contains(body, "at most 100") {
			t.Errorf("a bulk action over the cap was not refused:\n%s", body)
		}

		// Every task a filter matches: counted and confirmed first.
		_, page, _ = f.get(t, "/tasks?status=FAILED&error=script")
		if !strings.Contains(page, `id="retry-matching"`) || !strings.Contains(page, `name="error" value="script"`) {
			t.Fatalf("the filtered tasks page lacks the action on every matching task:\n%s", page)
		}
		matching := url.Values{"csrf": {token}, "action": {"retry"}, "status": {"FAILED"}, "error": {"script"}}
		code, body = f.post(t, "/matching", matching)
		if code != http.StatusOK || !strings.Contains(body, `id="matching-count">retry 1 tasks matching`) {
			t.Fatalf("retry of every matching task without confirm: %d, want a page counting 1\n%s", code, body)
		}
		if info, _ := f.client.Get(bg, f.failed); info.Status != runtime.StatusFailed {
			t.Fatalf("an unconfirmed retry by filter changed the task: %s", info.Status)
		}
		matching.Set("confirm", "yes")
		if code, body = f.post(t, "/matching", matching); !strings.Contains(body, "retry: 1 tasks matching the filter") {
			t.Errorf("retry of every matching task: %d\n%s", code, body)
		}
		if info, _ := f.client.Get(bg, f.failed); info.Status == runtime.StatusFailed && len(info.Attempts) < 2 {
			t.Errorf("after the retry by filter the task is %s with %d attempts, not queued again", info.Status, len(info.Attempts))
		}
	})
}

// A UI is read-only unless Authorize grants writes (ReadOnly wins over
// it): a UI mounted on a public mux with Options{} exposes no action.
func TestReadOnlyAndAuthorize(t *testing.T) {
	forEngine(t, func(t *testing.T, kind string) {
		for name, opts := range map[string]Options{
			"by default":         {},
			"with ReadOnly":      {ReadOnly: true, Authorize: AnyoneMayWrite},
			"as Authorize tells": {Authorize: func(*http.Request) (Access, error) { return Access{User: "viewer"}, nil }},
		} {
			f := newFixture(t, kind, opts)
			_, page, _ := f.get(t, "/tasks/"+id(f.failed))
			if strings.Contains(page, `id="retry"`) || !strings.Contains(page, "read-only") {
				t.Errorf("a UI read-only %s shows the retry button:\n%s", name, page)
			}
			_, tasks, _ := f.get(t, "/tasks")
			token := csrfOf(t, tasks)
			if code, _ := f.post(t, "/tasks/"+id(f.failed)+"/retry", url.Values{"csrf": {token}}); code != http.StatusForbidden {
				t.Errorf("retry on a UI read-only %s: %d, want 403", name, code)
			}
		}
		writable := newFixture(t, kind, Options{Authorize: AnyoneMayWrite})
		if _, page, _ := writable.get(t, "/tasks/"+id(writable.failed)); !strings.Contains(page, `id="retry"`) {
			t.Errorf("a UI whose Authorize grants writes lacks the retry button:\n%s", page)
		}

		denied := newFixture(t, kind, Options{Authorize: func(*http.Request) (Access, error) { return Access{}, errors.New("no session") }})
		if code, _, _ := denied.get(t, "/"); code != http.StatusForbidden {
			t.Errorf("a request Authorize refuses: %d, want 403", code)
		}
	})
}

func TestNewNeedsAClient(t *testing.T) {
	if _, err := New(nil, Options{}); !errors.Is(err, ErrNoClient) {
		t.Errorf("New(nil) = %v, want ErrNoClient", err)
	}
}

func id(n runtime.TaskID) string { return strconv.FormatInt(int64(n), 10) }

// With more than countBound tasks of a status, the overview and the types
// page count countBound+1 of them live; they show the workers' count of
// every task, or the live count where that is more (tasks enqueued since),
// and say when the workers' count was read.
func TestCountsAreBounded(t *testing.T) {
	f := newFixture(t, "sqlite", Options{Authorize: AnyoneMayWrite})
	leasetest.CountTasksNow(t, f.drv) // as the fixture's worker may have
	reqs := make([]runtime.Request, 1000)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "bulk", Payload: []byte(`{}`), Options: []runtime.EnqueueOption{runtime.WithDelay(time.Hour)}}
	}
	batches := countBound/len(reqs) + 1
	for range batches {
		_, err := f.client.EnqueueMany(bg, reqs)
		dbtest.Must(t, "enqueue", err)
	}
	// The first countBound+1 queued tasks are counted live: the delayed
	// task of type later, queued before, and countBound of bulk, which
	// the stored count, read before, does not hold.
	for _, want := range []int{countBound, batches * len(reqs)} {
		for _, path := range []string{"/", "/types"} {
			_, body, _ := f.get(t, path)
			if !strings.Contains(body, ">≈"+strconv.Itoa(want)+"<") || !strings.Contains(body, "the workers' count of every task, read at") {
				t.Errorf("GET %s: no count ≈%d with its note in\n%s", path, want, body)
			}
		}
		leasetest.CountTasksNow(t, f.drv)
	}
}

// The tasks page pages through every match, each task once: newest first
// by id, or, for a final status, the latest finished first through the
// index of finished tasks (the page says so).
func TestTasksPages(t *testing.T) {
	f := newFixture(t, "sqlite", Options{})
	for range pageSize + 10 {
		id, err := f.client.Enqueue(bg, "doomed", []byte(`{}`), runtime.WithDelay(time.Hour))
		dbtest.Must(t, "enqueue", err)
		dbtest.Must(t, "cancel", f.client.Cancel(bg, id))
	}
	rowID := regexp.MustCompile(`<tr data-id="(\d+)" data-status="CANCELLED">`)
	for _, c := range []struct{ first, order, link string }{
		{"/tasks?type=doomed", "<th>created</th>", "older tasks"},
		{"/tasks?status=CANCELLED", "<th>finished (latest first)</th>", "finished earlier"},
	} {
		next := regexp.MustCompile(`<a id="next-page" href="([^"]+)">` + c.link)
		seen := map[string]bool{}
		for page, path := 1, c.first; path != ""; page++ {
			_, body, _ := f.get(t, path)
			if !strings.Contains(body, c.order) {
				t.Fatalf("%s: page %d does not say its order %s:\n%s", c.first, page, c.order, body)
			}
			for _, m := range rowID.FindAllStringSubmatch(body, -1) {
				if seen[m[1]] {
					t.Errorf("%s: task %s listed twice", c.first, m[1])
				}
				seen[m[1]] = true
			}
			path = ""
			if m := next.FindStringSubmatch(body); m != nil {
				path = html.UnescapeString(m[1])
			}
			if page > 3 {
				t.Fatalf("%s: more than 3 pages of %d tasks", c.first, pageSize+10)
			}
		}
		if len(seen) != pageSize+10 {
			t.Errorf("%s: %d tasks listed over the pages, want %d", c.first, len(seen), pageSize+10)
		}
	}
}

// A page shows an exact count as it is, a capped one as the workers'
// count (≈) or, with none stored, as a lower bound (+).
func TestBounded(t *testing.T) {
	for _, c := range []struct {
		capped    bool
		countedAt time.Time
		want      string
	}{{false, time.Time{}, "7"}, {true, time.Time{}, "7+"}, {true, time.Now(), "≈7"}} {
		if got := bounded(7, c.capped, c.countedAt); got != c.want {
			t.Errorf("bounded(7, %v, %v) = %q, want %q", c.capped, c.countedAt, got, c.want)
		}
	}
}

// With Redact set, error texts (which often quote the payload) are hidden
// too, on the task and tasks pages, until RedactError says what to show.
func TestRedactCoversErrors(t *testing.T) {
	t.Parallel()
	hidePayload := func(runtime.TaskInfo) []byte { return []byte(`{"redacted":true}`) }
	for _, c := range []struct {
		name string
		opts Options
		want string
	}{
		{"Redact alone", Options{Redact: hidePayload}, "Options.Redact is set"},
		{"RedactError", Options{Redact: hidePayload, RedactError: func(_ runtime.TaskInfo, text string) string {
			return fmt.Sprintf("[%d bytes]", len(text))
		}}, " bytes]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "sqlite", c.opts)
			for _, path := range []string{"/tasks/" + id(f.failed), "/tasks?status=FAILED"} {
				_, page, _ := f.get(t, path)
				if strings.Contains(page, "alert") || !strings.Contains(page, c.want) {
					t.Errorf("%s shows the error as stored, or not %q", path, c.want)
				}
			}
		})
	}
}

// On a database without the schema every page says what to do, not
// "internal error".
func TestUnmigratedDatabaseSaysWhatToDo(t *testing.T) {
	db, err := leasesqlite.Open(filepath.Join(t.TempDir(), "empty.db"))
	dbtest.Must(t, "open", err)
	t.Cleanup(func() { db.Close() })
	client, err := runtime.NewClient(runtime.NewEngine(leasesqlite.New(db)), runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	h, err := New(client, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	dbtest.Must(t, "ui", err)
	for _, path := range []string{"/", "/tasks", "/types", "/workers", "/keys", "/schedules", "/tasks/1"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "leasectl migrate up") {
			t.Errorf("GET %s on an unmigrated database: %d %q, want 503 saying to run leasectl migrate up", path, rec.Code, rec.Body.String())
		}
	}
}
