// Package leasectl is the operator command for leasegen's task table: it
// migrates the schema, lists, shows, cancels, retries and purges tasks,
// pauses and resumes task types, manages periodic schedules, and prints
// statistics, on MySQL/MariaDB, PostgreSQL or SQLite.
package leasectl

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/leasegen/leasegen/internal/engines"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres"
)

const usage = `usage: leasectl [-mysql DSN | -postgres URL | -sqlite FILE [-create]] COMMAND [flags] [args]

Commands:
  migrate up|status|sql     apply the schema, show its versions, or print its SQL
  list [flags]              list tasks, newest first (-status, -type, -owner, -key, -error TEXT,
                            -older-than, -limit, -before ID for the next page, -json); of one
                            final status alone (and -type), the latest finished first (the next
                            page: -before ID -before-finished TIME, the last row's)
  show [-json] ID           one task with its last error
  cancel ID                 cancel a queued task, or ask a running one to stop
  retry ID                  queue a failed or cancelled task again, with all its attempts (a
                            workflow step: with the steps its failure cancelled)
  discard ID                delete a task no worker holds (queued or finished)
  retry|cancel|discard -all [filter flags] [-max N] (-dry-run | -yes)
                            the same for every task the flags match (list's, and -error TEXT for
                            the last error), newest first, up to -max (10000); it counts them
                            first and acts only with -yes
  purge -older-than DUR -yes
                            delete finished tasks that finished longer ago (-batch N); without
                            -yes it counts them and stops, -dry-run only counts
  stats [-json]             tasks by type and status, oldest queued, running by worker, paused types
  workers [-json]           live workers: host, pid, start, slots and limits
  keys [-json] [-limit N]   concurrency keys with tasks in flight: limit, running, holding a slot,
                            waiting, whether every slot is held
  pause [-force] TYPE       stop every worker from claiming tasks of TYPE (running ones finish);
                            a TYPE no stored task has and no live worker handles needs -force
  resume TYPE               let workers claim tasks of TYPE again
  schedules [-json]         periodic schedules: spec, next run, last tick, counts, which workers fire them
  schedules pause|resume|trigger|delete NAME
                            pause or resume a schedule, enqueue its task now, or delete its row
  workflows [-json] [-limit N]
                            the latest workflows: steps, how many succeeded, failed or were
                            cancelled, state
  workflows show|cancel ID  a workflow's steps (task, status, parents), or cancel the steps that
                            have not ended
  ui [-addr 127.0.0.1:8080] [-read-only] [-basic-auth-file FILE]
                            serve the web UI until interrupted; an address that is not loopback
                            needs FILE (lines of user:password)

The database: -mysql DSN, -postgres URL or -sqlite FILE; or -mysql-file and
-postgres-file, a file whose first line is the DSN; or, with none of these,
the environment's LEASEGEN_MYSQL_DSN or LEASEGEN_POSTGRES_DSN (a DSN with a
password then stays out of ps and the shell's history).

-create makes a new SQLite file; without it a FILE that does not exist is an
error. Flags may come before or after a command's arguments. -json prints
snake_case keys, and a task's payload as JSON when it is JSON (else
"payload_base64").

migrate up changes the schema: it needs a user with CREATE, ALTER, INDEX and
DROP; every other command needs only SELECT, INSERT, UPDATE and DELETE.
`

// errUsage marks a command line that cannot be run.
var errUsage = errors.New("bad usage")

// Main runs leasectl with args (without the program name) and returns its
// exit code: 0 on success, 1 when the operation failed, 2 for bad usage.
func Main(args []string, stdout, stderr io.Writer) int {
	err := run(args, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "leasectl: %v\n\n%s", err, usage)
		return 2
	default:
		fmt.Fprintln(stderr, "leasectl:", err)
		return 1
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	global := flag.NewFlagSet("leasectl", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	mysqlDSN := global.String("mysql", "", "")
	postgresDSN := global.String("postgres", "", "")
	mysqlFile := global.String("mysql-file", "", "")
	postgresFile := global.String("postgres-file", "", "")
	sqlitePath := global.String("sqlite", "", "")
	create := global.Bool("create", false, "")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return nil
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	rest := global.Args()
	if len(rest) == 0 {
		return fmt.Errorf("%w: no command", errUsage)
	}
	if err := pickDatabase(mysqlDSN, postgresDSN, *mysqlFile, *postgresFile, *sqlitePath); err != nil {
		return err
	}
	cmd, ok := commands[rest[0]]
	if !ok {
		return fmt.Errorf("%w: unknown command %q", errUsage, rest[0])
	}
	if *create && *sqlitePath == "" {
		return fmt.Errorf("%w: -create applies to -sqlite FILE only", errUsage)
	}
	engine, closeDB, err := open(*mysqlDSN, *postgresDSN, *sqlitePath, *create)
	if err != nil {
		return err
	}
	defer closeDB()
	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return cmd(ctx, &env{engine: engine, client: client, stdout: stdout, stderr: stderr}, rest[1:])
}

// env is what a command works with.
type env struct {
	engine *runtime.Engine
	client *runtime.Client
	stdout io.Writer
	stderr io.Writer // the UI's action log
}

// The environment variables that give a DSN when no flag does.
const (
	envMySQL    = "LEASEGEN_MYSQL_DSN"
	envPostgres = "LEASEGEN_POSTGRES_DSN"
)

// pickDatabase checks that exactly one database is given, and reads a
// -mysql-file or -postgres-file, or the environment, into mysqlDSN or
// postgresDSN.
func pickDatabase(mysqlDSN, postgresDSN *string, mysqlFile, postgresFile, sqlitePath string) error {
	switch countSet(*mysqlDSN, *postgresDSN, mysqlFile, postgresFile, sqlitePath) {
	case 0:
		fromEnv := map[string]*string{envMySQL: mysqlDSN, envPostgres: postgresDSN}
		var set []string
		for name, dsn := range fromEnv {
			if *dsn = os.Getenv(name); *dsn != "" {
				set = append(set, name)
			}
		}
		switch len(set) {
		case 0:
			return fmt.Errorf("%w: no database: give -mysql DSN, -postgres URL or -sqlite FILE (or set %s or %s)", errUsage, envMySQL, envPostgres)
		case 2:
			return fmt.Errorf("%w: both %s and %s are set: unset one, or name the database with a flag", errUsage, envMySQL, envPostgres)
		}
		return nil
	case 1:
	default:
		return fmt.Errorf("%w: give one database: -mysql, -mysql-file, -postgres, -postgres-file or -sqlite", errUsage)
	}
	var err error
	switch {
	case mysqlFile != "":
		*mysqlDSN, err = readDSN(mysqlFile)
	case postgresFile != "":
		*postgresDSN, err = readDSN(postgresFile)
	}
	return err
}

// readDSN returns the first line of file.
func readDSN(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read the DSN: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return "", fmt.Errorf("%w: %s: its first line is empty, want the DSN", errUsage, file)
	}
	return line, nil
}

// countSet counts the non-empty values.
func countSet(values ...string) int {
	n := 0
	for _, v := range values {
		if v != "" {
			n++
		}
	}
	return n
}

// open connects to the database.
func open(mysqlDSN, postgresDSN, sqlitePath string, create bool) (*runtime.Engine, func(), error) {
	var db *sql.DB
	var engine *runtime.Engine
	var err error
	switch {
	case sqlitePath != "":
		db, engine, err = engines.SQLite(sqlitePath, create)
	case postgresDSN != "":
		db, engine, err = engines.Postgres(postgresDSN)
	default:
		db, engine, err = engines.MySQL(mysqlDSN)
	}
	switch {
	case errors.Is(err, engines.ErrNoFile):
		return nil, nil, fmt.Errorf("-sqlite %s: no such file: check the path, or add -create to make a new database (then run migrate up)", sqlitePath)
	case errors.Is(err, engines.ErrBadDSN):
		return nil, nil, fmt.Errorf("%w: -mysql: %v", errUsage, err)
	case errors.Is(err, leasepostgres.ErrBadDSN):
		return nil, nil, fmt.Errorf("%w: -postgres: %v", errUsage, err)
	case err != nil:
		return nil, nil, err
	}
	return engine, func() { db.Close() }, nil
}
