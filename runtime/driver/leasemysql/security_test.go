package leasemysql

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// leastPrivilegeGrants are the grants a service's database user needs to
// enqueue and work (docs/security.md); Migrate needs more.
var leastPrivilegeGrants = []string{
	"GRANT SELECT, INSERT, UPDATE, DELETE ON %s.leasegen_tasks TO %s",
	"GRANT SELECT, INSERT, UPDATE ON %s.leasegen_limits TO %s",
	"GRANT SELECT, INSERT ON %s.leasegen_idempotency_keys TO %s",
	"GRANT SELECT, INSERT, UPDATE, DELETE ON %s.leasegen_workers TO %s",
	"GRANT SELECT, INSERT, DELETE ON %s.leasegen_paused_types TO %s",
	"GRANT SELECT, INSERT, UPDATE, DELETE ON %s.leasegen_schedules TO %s",
	"GRANT SELECT, INSERT, DELETE ON %s.leasegen_attempts TO %s",
	"GRANT SELECT, INSERT, DELETE ON %s.leasegen_throughput TO %s",
	"GRANT SELECT, INSERT, DELETE ON %s.leasegen_counts TO %s",
	"GRANT SELECT, UPDATE ON %s.leasegen_count_turn TO %s",
	"GRANT SELECT, INSERT, UPDATE, DELETE ON %s.leasegen_flow_keys TO %s",
	"GRANT SELECT, INSERT, UPDATE, DELETE ON %s.leasegen_flow_slots TO %s",
	"GRANT SELECT, INSERT, UPDATE, DELETE ON %s.leasegen_workflows TO %s",
	"GRANT SELECT, INSERT, UPDATE, DELETE ON %s.leasegen_workflow_steps TO %s",
	"GRANT SELECT, INSERT, DELETE ON %s.leasegen_task_deps TO %s",
	"GRANT SELECT, INSERT ON %s.leasegen_parent_types TO %s",
	"GRANT SELECT ON %s.leasegen_schema_migrations TO %s",
}

// A user with only the documented grants can run workers and clients,
// including Migrate on a current schema; a pending migration fails saying
// which privileges it needs.
func TestLeastPrivilegeUser(t *testing.T) {
	t.Parallel()
	server := dbtest.StartServer(t)
	adminDSN := server.NewDatabase("app")
	admin := harness.OpenPool(t, adminDSN)
	dbtest.Must(t, "migrate as admin", engineOn(admin).Migrate(bg))
	user := "'worker'@'127.0.0.1'"
	for _, stmt := range append([]string{"CREATE USER " + user + " IDENTIFIED BY 'w0rker-pw'"}, leastPrivilegeGrants...) {
		if strings.Contains(stmt, "%s") {
			stmt = fmt.Sprintf(stmt, "app", user)
		}
		_, err := admin.Exec(stmt)
		dbtest.Must(t, stmt, err)
	}
	cfg, _ := mysql.ParseDSN(adminDSN)
	cfg.User, cfg.Passwd = "worker", "w0rker-pw"
	db := harness.OpenPool(t, cfg.FormatDSN())
	b := systemtest.SetupOn(t, &harness, &drivertest.DB{DB: db, DSN: cfg.FormatDSN()}) // Migrate on a current schema
	cfgW := systemtest.Config()
	cfgW.GlobalLimit = 4
	var logs systemtest.LogBook
	cfgW.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	b.StartWorker(t, cfgW, map[string]runtime.HandlerFunc{
		"pay": func(ctx context.Context, task *runtime.Task) error {
			return runtime.RunIdempotent(ctx, task, strings.Trim(string(task.Payload), `"`), func(context.Context, *sql.Tx) error { return nil })
		},
	}, runtime.WithSchedule(runtime.Periodic{Every: time.Second, Payload: []byte(`"tick"`)}))
	id, err := b.Client.Enqueue(bg, "pay", []byte(`"order-1"`))
	dbtest.Must(t, "enqueue", err)
	b.WaitStatus(t, id, runtime.StatusSuccess)
	dbtest.Must(t, "pause as the worker user", b.Client.Pause(bg, "pay"))
	dbtest.Must(t, "resume as the worker user", b.Client.Resume(bg, "pay"))
	var list []runtime.ScheduleInfo
	b.Signals.Await(t, testwait.Bound, func() bool {
		var err error
		list, err = b.Client.Schedules(bg)
		dbtest.Must(t, "list schedules as the worker user", err)
		return len(list) == 1 && list[0].Ticks > 0
	}, func() string { return fmt.Sprintf("the worker user's schedule fired no tick: %+v", list) })
	dbtest.Must(t, "pause a schedule as the worker user", b.Client.PauseSchedule(bg, "pay"))
	cfgW.WorkerID = "steps"
	b.StartWorker(t, cfgW, map[string]runtime.HandlerFunc{"step": func(context.Context, *runtime.Task) error { return nil }})
	run, err := b.Client.EnqueueWorkflow(bg, runtime.Workflow{Name: "pair", Steps: []runtime.Step{
		{Name: "a", Request: runtime.Request{Type: "step"}},
		{Name: "b", Request: runtime.Request{Type: "step"}, After: []string{"a"}},
	}})
	dbtest.Must(t, "enqueue a workflow as the worker user", err)
	b.WaitStatus(t, run.Tasks["b"], runtime.StatusSuccess)
	_, err = b.Client.Stats(bg)
	dbtest.Must(t, "read the counts as the worker user", err)
	if strings.Contains(logs.String(), "denied") {
		t.Errorf("the worker user was denied something:\n%s", logs.String())
	}

	// A pending migration needs schema privileges, and says so.
	_, err = admin.Exec("DELETE FROM leasegen_schema_migrations WHERE version = 2")
	dbtest.Must(t, "forget a migration", err)
	err = engineOn(db).Migrate(bg)
	if err == nil || !strings.Contains(err.Error(), "as a user with CREATE, ALTER, INDEX and DROP") {
		t.Errorf("pending migration as the worker user: err = %v, want the privileges it needs", err)
	}
}

// Passwords in DSNs never reach errors or logs.
func TestPasswordsStayOutOfErrorsAndLogs(t *testing.T) {
	t.Parallel()
	dsn := dbtest.ServerDSN(t)
	cfg, err := mysql.ParseDSN(dsn)
	dbtest.Must(t, "dsn", err)
	cfg.User, cfg.Passwd, cfg.DBName = "nobody", "s3cret-pw-417", "nothing"
	cfg.Params = map[string]string{"parseTime": "true"}
	db := harness.OpenPool(t, cfg.FormatDSN())
	var logs systemtest.LogBook
	engine := engineOn(db)
	var errs []error
	errs = append(errs, engine.Migrate(bg))
	client, _ := runtime.NewClient(engine, runtime.ClientConfig{})
	_, err = client.Enqueue(bg, "x", nil)
	errs = append(errs, err)
	wcfg := systemtest.Config()
	wcfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	w, err := runtime.NewWorker(engine, wcfg)
	dbtest.Must(t, "worker", err)
	dbtest.Must(t, "handle", w.Handle("x", func(context.Context, *runtime.Task) error { return nil }))
	errs = append(errs, w.Start(bg))
	for _, err := range errs {
		if err == nil {
			t.Fatal("a bad login succeeded")
		}
		if strings.Contains(err.Error(), cfg.Passwd) {
			t.Errorf("error shows the password: %v", err)
		}
	}
	if strings.Contains(logs.String(), cfg.Passwd) {
		t.Errorf("logs show the password:\n%s", logs.String())
	}
}
