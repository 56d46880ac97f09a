package leasectl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

// target is a fresh database of one engine, as leasectl flags and as an
// engine for the test's own setup.
type target struct {
	flags  []string
	engine func() *runtime.Engine
}

func targets(t *testing.T) map[string]func(t *testing.T) target {
	return map[string]func(t *testing.T) target{
		"mysql": func(t *testing.T) target {
			d := dbtest.New(t)
			return target{flags: []string{"-mysql", d.DSN}, engine: func() *runtime.Engine { return runtime.NewEngine(leasemysql.New(d.DB)) }}
		},
		"postgres": func(t *testing.T) target {
			dsn := pgtest.New(t)
			db, err := leasepostgres.Open(dsn)
			dbtest.Must(t, "open", err)
			t.Cleanup(func() { db.Close() })
			return target{flags: []string{"-postgres", dsn}, engine: func() *runtime.Engine { return runtime.NewEngine(leasepostgres.New(db)) }}
		},
		"sqlite": func(t *testing.T) target {
			path := filepath.Join(t.TempDir(), "ops.db")
			db, err := leasesqlite.Open(path)
			dbtest.Must(t, "open", err)
			t.Cleanup(func() { db.Close() })
			dbtest.Must(t, "create the file", db.Ping())
			return target{flags: []string{"-sqlite", path}, engine: func() *runtime.Engine { return runtime.NewEngine(leasesqlite.New(db)) }}
		},
	}
}

// ctl runs leasectl in-process and logs the transcript.
func (tg target) ctl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(append(append([]string{}, tg.flags...), args...), &out, &errOut)
	t.Logf("$ leasectl %s\n%s%s(exit %d)", strings.Join(args, " "), out.String(), errOut.String(), code)
	return code, out.String(), errOut.String()
}

func expect(t *testing.T, what string, code, wantCode int, output string, wants ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: exit %d, want %d\n%s", what, code, wantCode, output)
	}
	for _, want := range wants {
		if !strings.Contains(output, want) {
			t.Errorf("%s: output lacks %q:\n%s", what, want, output)
		}
	}
}

func TestCommands(t *testing.T) {
	t.Parallel()
	for kind, newTarget := range targets(t) {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			tg := newTarget(t)
			ctx := context.Background()

			code, _, stderr := tg.ctl(t, "stats")
			expect(t, "stats without a schema", code, 1, stderr, "lacks leasegen's schema", "leasectl migrate up")
			code, out, _ := tg.ctl(t, "migrate", "status")
			expect(t, "status before", code, 0, out, "0001_tasks.sql", "pending")
			states, err := tg.engine().MigrationStatus(ctx)
			dbtest.Must(t, "migration status", err)
			latest := states[len(states)-1]
			code, out, _ = tg.ctl(t, "migrate", "up")
			expect(t, "migrate up", code, 0, out, fmt.Sprintf("schema at version %d", latest.Version))
			code, out, _ = tg.ctl(t, "migrate", "status")
			expect(t, "status after", code, 0, out, latest.Name)
			if strings.Contains(out, "pending") {
				t.Errorf("migrations still pending after up:\n%s", out)
			}
			code, out, _ = tg.ctl(t, "migrate", "sql")
			expect(t, "migrate sql", code, 0, out, "CREATE TABLE IF NOT EXISTS leasegen_tasks")

			// Some history: a success, a permanent failure, a delayed task.
			engine := tg.engine()
			client, err := runtime.NewClient(engine, runtime.ClientConfig{})
			dbtest.Must(t, "client", err)
			ok, _ := client.Enqueue(ctx, "ok", []byte(`{"n":1}`), runtime.WithOwner("alice"), runtime.WithMetadata(map[string]string{"req": "r-7", "a": "b"}))
			bad, _ := client.Enqueue(ctx, "bad", nil, runtime.WithMaxAttempts(1))
			later, _ := client.Enqueue(ctx, "ok", nil, runtime.WithDelay(time.Hour))
			w, err := runtime.NewWorker(engine, runtime.Config{LeaseTimeout: time.Second, HeartbeatInterval: 200 * time.Millisecond, PollInterval: 50 * time.Millisecond})
			dbtest.Must(t, "worker", err)
			dbtest.Must(t, "handle", w.Handle("ok", func(context.Context, *runtime.Task) error { return nil }))
			dbtest.Must(t, "handle", w.Handle("bad", func(context.Context, *runtime.Task) error { return errors.New("disk full") }))
			dbtest.Must(t, "start", w.Start(ctx))
			waitFor(t, client, ok, runtime.StatusSuccess)
			waitFor(t, client, bad, runtime.StatusFailed)
			code, out, _ = tg.ctl(t, "workers")
			expect(t, "workers", code, 0, out, "WORKER", "HOST", "bad (none), ok (none)")
			var held []runtime.TaskID
			for range 3 { // no worker handles "held": one holds the key's slot, two wait
				id, err := client.Enqueue(ctx, "held", nil, runtime.WithConcurrencyKey("acct-1", 1))
				dbtest.Must(t, "enqueue keyed", err)
				held = append(held, id)
			}
			for range 2 { // one holds the rate's one start an hour, one waits
				id, err := client.Enqueue(ctx, "held", nil, runtime.WithKeyRate("api", 1, time.Hour))
				dbtest.Must(t, "enqueue rated", err)
				held = append(held, id)
			}
			code, out, _ = tg.ctl(t, "keys")
			expect(t, "keys", code, 0, out, "TYPE", "WAITING", "held  acct-1  1      0        1        2        yes       none",
				"held  api     none   0        1        1        no        1/1h0m0s  1          yes      none")
			code, out, _ = tg.ctl(t, "keys", "-json")
			expect(t, "keys -json", code, 0, out, `"key": "acct-1"`, `"waiting": 2`, `"at_limit": true`, `"rate_window": "1h0m0s"`, `"at_rate": true`)
			for _, id := range held {
				dbtest.Must(t, "discard keyed", client.Discard(ctx, id))
			}
			code, out, _ = tg.ctl(t, "keys")
			if code != 0 || strings.Count(out, "\n") != 1 {
				t.Errorf("keys after their tasks were discarded (exit %d):\n%s", code, out)
			}
			code, out, _ = tg.ctl(t, "pause", "ok")
			expect(t, "pause a handled type", code, 0, out, "paused ok", "leasectl resume ok")
			if strings.Contains(out, "note:") {
				t.Errorf("pause of a type a live worker handles warned:\n%s", out)
			}
			code, _, stderr = tg.ctl(t, "pause", "okk")
			expect(t, "pause an unknown type", code, 1, stderr, "no task of type okk is stored", "-force")
			code, out, _ = tg.ctl(t, "pause", "okk", "-force")
			expect(t, "pause an unknown type with -force", code, 0, out, "paused okk", "note: none of the 1 live workers handles okk")
			// A claim that read the paused types before the pause may still
			// take a task enqueued after it (as documented): let the claims
			// that began before it end first. The worker claims one batch
			// at a time, so a task enqueued now and finished came with a
			// later claim.
			sentinel, _ := client.Enqueue(ctx, "bad", nil, runtime.WithMaxAttempts(1))
			waitFor(t, client, sentinel, runtime.StatusFailed)
			dbtest.Must(t, "discard the sentinel", client.Discard(ctx, sentinel))
			paused, _ := client.Enqueue(ctx, "ok", nil)
			future, _ := client.Enqueue(ctx, "future", nil, runtime.WithDelay(time.Hour))
			code, out, _ = tg.ctl(t, "stats")
			expect(t, "stats while paused", code, 0, out, "PAUSED TYPE", "okk")
			if line := lineWith(out, "future"); !strings.Contains(line, "(in ") || strings.Contains(line, "ago") {
				t.Errorf("stats: the oldest queued task of a type due in an hour reads %q, want it due in about an hour", line)
			}
			dbtest.Must(t, "cancel the future task", client.Cancel(ctx, future))
			code, out, _ = tg.ctl(t, "stats", "-json")
			var st map[string]any
			if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || len(st["paused"].(map[string]any)) != 2 {
				t.Errorf("stats -json while ok and okk are paused: exit %d, %v, %+v", code, err, st["paused"])
			}
			time.Sleep(300 * time.Millisecond) // six polls
			if info, _ := client.Get(ctx, paused); info.Status != runtime.StatusQueued {
				t.Errorf("a task of a paused type is %s, want QUEUED", info.Status)
			}
			for _, typ := range []string{"ok", "okk"} {
				code, out, _ = tg.ctl(t, "resume", typ)
				expect(t, "resume", code, 0, out, "resumed "+typ)
				code, out, _ = tg.ctl(t, "resume", typ)
				expect(t, "resume again", code, 0, out, typ+" was not paused: nothing changed")
			}
			waitFor(t, client, paused, runtime.StatusSuccess)
			code, _, stderr = tg.ctl(t, "pause", "a b")
			expect(t, "pause a bad type", code, 1, stderr, "printable ASCII")
			code, out, _ = tg.ctl(t, "workers", "-json")
			var live []map[string]any
			if err := json.Unmarshal([]byte(out), &live); code != 0 || err != nil || len(live) != 1 || live[0]["max_concurrency"] != 100.0 {
				t.Errorf("workers -json: exit %d, %v, %+v; want the one live worker", code, err, live)
			}
			dbtest.Must(t, "stop", w.Stop(ctx))
			if code, out, _ := tg.ctl(t, "workers"); code != 0 || strings.Count(out, "\n") != 1 {
				t.Errorf("workers after Stop: exit %d\n%s; want only the header", code, out)
			}

			id := func(n runtime.TaskID) string { return strconv.FormatInt(int64(n), 10) }
			code, out, _ = tg.ctl(t, "list")
			expect(t, "list", code, 0, out, "ID", "TYPE", "SUCCESS", "FAILED", "QUEUED", "disk full")
			code, out, _ = tg.ctl(t, "list", "-status", "failed", "-json")
			var listed []map[string]any
			if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil || len(listed) != 1 || listed[0]["id"] != float64(bad) ||
				listed[0]["status"] != "FAILED" || listed[0]["last_error"] != "disk full" || listed[0]["attempts_used"] != 1.0 {
				t.Errorf("list -status failed -json: exit %d, %v, %+v; want the failed task, snake_case keys", code, err, listed)
			}
			code, out, _ = tg.ctl(t, "show", id(ok), "-json")
			var shown map[string]any
			if err := json.Unmarshal([]byte(out), &shown); code != 0 || err != nil || !cmp.Equal(shown["payload"], map[string]any{"n": 1.0}) || shown["owner_id"] != "alice" ||
				!cmp.Equal(shown["metadata"], map[string]any{"req": "r-7", "a": "b"}) {
				t.Errorf("show ID -json: exit %d, %v, %+v; want the payload as JSON and snake_case keys", code, err, shown)
			}
			code, out, _ = tg.ctl(t, "list", "-status", "failed")
			expect(t, "list -status failed, the latest finished first", code, 0, out, "FINISHED", "disk full")
			code, out, _ = tg.ctl(t, "list", "-status", "failed", "-before-finished", "2000-01-01T00:00:00Z")
			expect(t, "list -status failed, finished before 2000", code, 0, out, "FINISHED")
			if strings.Contains(out, "disk full") {
				t.Errorf("list -status failed -before-finished 2000: lists a task that failed today:\n%s", out)
			}
			code, out, _ = tg.ctl(t, "list", "-owner", "alice", "-type", "ok")
			expect(t, "list by owner", code, 0, out, "alice")
			code, out, _ = tg.ctl(t, "list", "-before", id(later), "-json")
			listed = nil
			if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil || len(listed) != 2 || listed[0]["id"] != float64(bad) {
				t.Errorf("list -before %d -json: exit %d, %v, %+v; want the two older tasks", later, code, err, listed)
			}
			code, out, _ = tg.ctl(t, "show", id(ok))
			expect(t, "show metadata", code, 0, out, "metadata:", "a=b req=r-7")
			code, out, _ = tg.ctl(t, "show", id(bad))
			expect(t, "show", code, 0, out, "status:", "FAILED", "last error:", "disk full", "attempts:", "OUTCOME", "1  error")
			code, _, stderr = tg.ctl(t, "show", "999999")
			expect(t, "show unknown", code, 1, stderr, "task not found")
			code, out, _ = tg.ctl(t, "retry", id(bad))
			expect(t, "retry", code, 0, out, "QUEUED again")
			code, out, _ = tg.ctl(t, "show", id(bad))
			expect(t, "show after retry", code, 0, out, "attempts used:  0 of 1", "lease owner:    -", "fencing token:  1",
				"attempts:", "1  error", "disk full")
			code, _, stderr = tg.ctl(t, "retry", id(ok))
			expect(t, "retry a success", code, 1, stderr, "only FAILED and CANCELLED tasks can be retried")
			code, out, _ = tg.ctl(t, "cancel", id(later))
			expect(t, "cancel", code, 0, out, "CANCELLED")
			code, out, _ = tg.ctl(t, "stats")
			expect(t, "stats", code, 0, out, "TYPE", "STATUS", "bad", "QUEUED", "OLDEST QUEUED", "WORKER")
			code, out, _ = tg.ctl(t, "purge", "-older-than", "1h")
			expect(t, "purge of nothing", code, 0, out, "nothing to purge")
			code, out, _ = tg.ctl(t, "purge", "-older-than", "0s", "-dry-run")
			expect(t, "purge -dry-run", code, 0, out, "would purge 4 finished tasks", "nothing deleted")
			code, _, stderr = tg.ctl(t, "purge", "-older-than", "0s")
			expect(t, "purge without -yes", code, 1, stderr, "4 finished tasks finished more than 0s ago: add -yes")
			code, out, _ = tg.ctl(t, "purge", "-older-than", "0s", "-yes")
			expect(t, "purge -yes", code, 0, out, "purged 4 finished tasks")
			if left, _ := client.List(ctx, runtime.Filter{}); len(left) != 1 || left[0].ID != bad {
				t.Errorf("after purge: %d tasks left, want the requeued one", len(left))
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.db")
	dbtest.Must(t, "create the file", os.WriteFile(path, nil, 0o600))
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"-sqlite", path}, "no command"},
		{[]string{"-postgres", "postgres://h/db", "-mysql", "u@/db", "stats"}, "give one database"},
		{[]string{"-postgres", "::not a url", "stats"}, "-postgres: leasegen: bad PostgreSQL DSN"},
		{[]string{"-sqlite", path, "-mysql", "u@/db", "stats"}, "give one database"},
		{[]string{"-sqlite", path, "frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"-sqlite", path, "show", "abc"}, `"abc" is not a task id`},
		{[]string{"-sqlite", path, "show"}, "show takes 1 argument(s), got 0"},
		{[]string{"-sqlite", path, "purge"}, "purge needs -older-than"},
		{[]string{"-sqlite", path, "list", "-status", "DONE"}, `-status "DONE"`},
		{[]string{"-sqlite", path, "list", "-limit", "-1"}, "-limit must be above 0, got -1"},
		{[]string{"-sqlite", path, "list", "-status", "failed", "-before-finished", "yesterday"}, `-before-finished "yesterday": want a time`},
		{[]string{"-sqlite", path, "list", "-before-finished", "2026-12-07T00:00:00Z"}, "-before-finished pages a list of one final status"},
		{[]string{"-sqlite", path, "show", "5", "6"}, "show takes 1 argument(s), got 2"},
		{[]string{"-mysql", "u@/db", "-create", "stats"}, "-create applies to -sqlite FILE only"},
		{[]string{"-sqlite", path, "migrate", "down"}, "migrate up|status|sql"},
		{[]string{"-mysql", "not a dsn", "stats"}, "-mysql: leasegen: the MySQL DSN does not parse"},
	} {
		var out, errOut bytes.Buffer
		if code := Main(c.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, errOut.String(), c.want)
		}
	}
}

// An unreachable server and a bad password give clear errors that never
// show the password.
func TestConnectionErrors(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := Main([]string{"-mysql", "app:hunter2-secret@tcp(127.0.0.1:1)/app", "stats"}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "database unavailable") || strings.Contains(errOut.String(), "hunter2") {
		t.Errorf("unreachable server: exit %d, stderr %q", code, errOut.String())
	}
}

// The command works as a process.
func TestProcess(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "leasectl")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/leasectl").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	path := filepath.Join(t.TempDir(), "p.db")
	out, err := exec.Command(bin, "-sqlite", path, "stats").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no such file: check the path, or add -create") {
		t.Errorf("leasectl on a missing SQLite file: %v\n%s; want it refused", err, out)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("leasectl created the missing SQLite file without -create")
	}
	out, err = exec.Command(bin, "-sqlite", path, "-create", "migrate", "up").CombinedOutput()
	if err != nil || !regexp.MustCompile(`schema at version \d+`).Match(out) {
		t.Errorf("leasectl migrate up: %v\n%s", err, out)
	}
	if err := exec.Command(bin).Run(); err == nil {
		t.Error("leasectl without arguments succeeded")
	} else if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
		t.Errorf("leasectl without arguments: %v, want exit 2", err)
	}
}

func waitFor(t *testing.T, c *runtime.Client, id runtime.TaskID, want runtime.Status) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := c.Get(context.Background(), id)
		dbtest.Must(t, "get", err)
		if info.Status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %d: %s, want %s", id, info.Status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSchedulesCommand(t *testing.T) {
	t.Parallel()
	for kind, newTarget := range targets(t) {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			tg := newTarget(t)
			ctx := context.Background()
			code, out, _ := tg.ctl(t, "migrate", "up")
			expect(t, "migrate up", code, 0, out, "schema at version")
			engine := tg.engine()
			client, err := runtime.NewClient(engine, runtime.ClientConfig{})
			dbtest.Must(t, "client", err)
			w, err := runtime.NewWorker(engine, runtime.Config{LeaseTimeout: time.Second, HeartbeatInterval: 200 * time.Millisecond, PollInterval: 50 * time.Millisecond})
			dbtest.Must(t, "worker", err)
			dbtest.Must(t, "handle", w.Handle("ok", func(context.Context, *runtime.Task) error { return nil },
				runtime.WithSchedule(runtime.Periodic{Name: "beat", Every: time.Second, Misfire: "backfill:3"})))
			dbtest.Must(t, "start", w.Start(ctx))
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if list, _ := client.Schedules(ctx); len(list) == 1 && list[0].Ticks > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no tick within 5 s")
				}
			}
			code, out, _ = tg.ctl(t, "schedules")
			expect(t, "schedules", code, 0, out, "SCHEDULE", "beat", "every 1s", "backfill:3", "active (1 workers)")
			code, out, _ = tg.ctl(t, "schedules", "list", "-json")
			var listed []map[string]any
			if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil || len(listed) != 1 || listed[0]["task_type"] != "ok" ||
				listed[0]["ticks"].(float64) < 1 || len(listed[0]["workers"].([]any)) != 1 {
				t.Errorf("schedules -json: exit %d, %v, %+v", code, err, listed)
			}
			code, out, _ = tg.ctl(t, "schedules", "pause", "beat")
			expect(t, "pause", code, 0, out, "paused schedule beat")
			code, out, _ = tg.ctl(t, "schedules")
			expect(t, "schedules while paused", code, 0, out, "paused")
			code, out, _ = tg.ctl(t, "schedules", "trigger", "beat")
			expect(t, "trigger", code, 0, out, "enqueued task", "next run is unchanged")
			code, out, _ = tg.ctl(t, "schedules", "resume", "beat")
			expect(t, "resume", code, 0, out, "resumed schedule beat")
			code, out, _ = tg.ctl(t, "workers")
			expect(t, "workers list their schedules", code, 0, out, "ok (none)")
			dbtest.Must(t, "stop", w.Stop(ctx))
			code, out, _ = tg.ctl(t, "schedules")
			expect(t, "schedules without a worker", code, 0, out, "NOT REGISTERED", "leasectl schedules delete beat")
			code, out, _ = tg.ctl(t, "schedules", "delete", "beat")
			expect(t, "delete", code, 0, out, "deleted schedule beat")
			code, _, stderr := tg.ctl(t, "schedules", "delete", "beat")
			expect(t, "delete again", code, 1, stderr, "schedule not found")
			code, _, stderr = tg.ctl(t, "schedules", "frob", "beat")
			expect(t, "unknown subcommand", code, 2, stderr, "pause|resume|trigger|delete NAME")
		})
	}
}

// lineWith returns the last line of out that holds s below the line
// "TYPE\tOLDEST QUEUED", or "".
func lineWith(out, s string) string {
	_, section, _ := strings.Cut(out, "OLDEST QUEUED")
	section, _, _ = strings.Cut(section, "\n\n")
	last := ""
	for line := range strings.Lines(section) {
		if strings.Contains(line, s) {
			last = strings.TrimSpace(line)
		}
	}
	return last
}

// A DSN comes from a flag, from a file (-mysql-file, -postgres-file) or
// from the environment, never from two places at once.
func TestDatabaseFromFileOrEnvironment(t *testing.T) {
	for _, kind := range []string{"mysql", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			tg := targets(t)[kind](t)
			flag, dsn := tg.flags[0], tg.flags[1]
			file := filepath.Join(t.TempDir(), "dsn")
			dbtest.Must(t, "write the DSN", os.WriteFile(file, []byte(dsn+"\n# the first line counts\n"), 0o600))
			run := func(args ...string) (int, string) {
				var out, errOut bytes.Buffer
				code := Main(args, &out, &errOut)
				return code, out.String() + errOut.String()
			}
			code, out := run(flag+"-file", file, "migrate", "status")
			expect(t, flag+"-file", code, 0, out, "VERSION")
			code, out = run(flag+"-file", file, flag, dsn, "migrate", "status")
			expect(t, "a file and a flag", code, 2, out, "give one database")
			empty := filepath.Join(t.TempDir(), "empty")
			dbtest.Must(t, "write an empty file", os.WriteFile(empty, nil, 0o600))
			code, out = run(flag+"-file", empty, "migrate", "status")
			expect(t, "an empty file", code, 2, out, "first line is empty")

			mine, other := envMySQL, envPostgres
			if kind == "postgres" {
				mine, other = other, mine
			}
			t.Setenv(mine, dsn)
			t.Setenv(other, "")
			code, out = run("migrate", "status")
			expect(t, "the DSN from "+mine, code, 0, out, "VERSION")
			t.Setenv(other, "elsewhere")
			code, out = run("migrate", "status")
			expect(t, "both variables set", code, 2, out, "unset one")
			t.Setenv(mine, "")
			t.Setenv(other, "")
			code, out = run("migrate", "status")
			expect(t, "no database", code, 2, out, "no database", envMySQL)
		})
	}
}

// retry and cancel -all count first, act only with -yes, up to -max.
func TestBulkRetryAndCancel(t *testing.T) {
	t.Parallel()
	tg := targets(t)["sqlite"](t)
	client, err := runtime.NewClient(tg.engine(), runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	dbtest.Must(t, "migrate", tg.engine().Migrate(context.Background()))
	for range 5 {
		_, err := client.Enqueue(context.Background(), "x", nil, runtime.WithDelay(time.Hour))
		dbtest.Must(t, "enqueue", err)
	}
	code, out, _ := tg.ctl(t, "cancel", "-all", "-type", "x", "-dry-run")
	expect(t, "cancel -all -dry-run", code, 0, out, "5 tasks match", "nothing changed")
	code, _, stderr := tg.ctl(t, "cancel", "-all", "-type", "x")
	expect(t, "cancel -all without -yes", code, 1, stderr, "5 tasks match: add -yes to cancel them")
	code, out, _ = tg.ctl(t, "cancel", "-all", "-type", "x", "-max", "3", "-yes")
	expect(t, "cancel -all -max 3", code, 0, out, "cancel: 3 tasks")
	code, out, _ = tg.ctl(t, "retry", "-all", "-type", "x", "-yes")
	expect(t, "retry -all", code, 0, out, "retry: 3 tasks; 2 matching were passed over")
	code, out, _ = tg.ctl(t, "discard", "-all", "-type", "x", "-max", "2", "-yes")
	expect(t, "discard -all", code, 0, out, "discard: 2 tasks")
	code, _, stderr = tg.ctl(t, "discard", "999999")
	expect(t, "discard an unknown task", code, 1, stderr, "task not found")
	code, out, _ = tg.ctl(t, "retry", "-all", "-type", "nothing-of-this-type", "-yes")
	expect(t, "retry -all of nothing", code, 0, out, "no task matches")
	code, _, stderr = tg.ctl(t, "retry", "-all", "5")
	expect(t, "retry -all with an id", code, 2, stderr, "retry takes 0 argument(s), got 1")
}

// workflows lists the workflows with their steps counted, shows one's
// steps with their parents, and cancels what has not ended.
func TestWorkflowsCommand(t *testing.T) {
	t.Parallel()
	for kind, newTarget := range targets(t) {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			tg := newTarget(t)
			ctx := context.Background()
			code, out, _ := tg.ctl(t, "migrate", "up")
			expect(t, "migrate up", code, 0, out, "schema at version")
			client, err := runtime.NewClient(tg.engine(), runtime.ClientConfig{})
			dbtest.Must(t, "client", err)
			run, err := client.EnqueueWorkflow(ctx, runtime.Workflow{Name: "order", Steps: []runtime.Step{
				{Name: "charge", Request: runtime.Request{Type: "charge"}},
				{Name: "ship", Request: runtime.Request{Type: "ship"}, After: []string{"charge"}},
				{Name: "notify", Request: runtime.Request{Type: "notify"}, After: []string{"charge"}, RunOnParentFailure: true},
			}})
			dbtest.Must(t, "enqueue", err)
			id := strconv.FormatInt(int64(run.ID), 10)
			code, out, _ = tg.ctl(t, "workflows")
			expect(t, "workflows", code, 0, out, "ID", "order", "running")
			code, out, _ = tg.ctl(t, "workflows", "show", id)
			expect(t, "workflows show", code, 0, out, "workflow "+id+" order", "charge", "QUEUED", "ship", "WAITING (waiting for its parents)", "cancelled", "runs")
			code, out, _ = tg.ctl(t, "workflows", "show", "-json", id)
			var shown struct {
				Steps []struct {
					Name  string   `json:"name"`
					After []string `json:"after"`
				} `json:"steps"`
			}
			if err := json.Unmarshal([]byte(out), &shown); code != 0 || err != nil || len(shown.Steps) != 3 || shown.Steps[2].Name != "ship" || len(shown.Steps[2].After) != 1 {
				t.Errorf("workflows show -json: exit %d, %v, %+v", code, err, shown)
			}
			code, out, _ = tg.ctl(t, "workflows", "cancel", id)
			expect(t, "workflows cancel", code, 0, out, "cancelled 2 steps") // charge, and notify, which its cancel queued
			code, out, _ = tg.ctl(t, "workflows", "-json")
			var listed []map[string]any
			if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil || len(listed) != 1 || listed[0]["state"] != "failed" {
				t.Errorf("workflows -json after the cancel: exit %d, %v, %+v", code, err, listed)
			}
			code, _, stderr := tg.ctl(t, "workflows", "show", "999999")
			expect(t, "unknown workflow", code, 1, stderr, "workflow not found")
			code, _, stderr = tg.ctl(t, "workflows", "frob", "1")
			expect(t, "unknown subcommand", code, 2, stderr, "show|cancel ID")
		})
	}
}
