package pgtest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// Server is a private PostgreSQL cluster for fault tests: they kill and
// freeze it without disturbing the shared server other tests use. It needs
// PostgreSQL's binaries and root (the server runs as the postgres user).
// A kill or a freeze reaches the postmaster and every process it started
// (each backend leads a process group of its own), as a machine's crash or
// stall would.
type Server struct {
	t    testing.TB
	dir  string
	port int
	cmd  *exec.Cmd
	cred *syscall.Credential
	// URL reaches the server as the superuser postgres, in its database
	// postgres.
	URL string
}

// binDir holds Debian's PostgreSQL 15 binaries.
const binDir = "/usr/lib/postgresql/15/bin"

// StartServer creates and starts a private cluster, removed when t ends.
// Without the binaries or root it skips (fails under CI=true).
func StartServer(t testing.TB) *Server {
	t.Helper()
	s := newServer(t)
	initdb := exec.Command(filepath.Join(binDir, "initdb"), "-D", s.data(), "-U", "postgres", "-A", "trust", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s.Start()
	return s
}

// StartStandby creates a streaming standby of primary (pg_basebackup -R),
// starts it, and has primary wait for it at each commit (synchronous
// replication), so that the standby, once promoted, holds every commit the
// primary acknowledged. It is removed when t ends.
func StartStandby(t testing.TB, primary *Server) *Server {
	t.Helper()
	s := newServer(t)
	backup := exec.Command(filepath.Join(binDir, "pg_basebackup"), "-h", "127.0.0.1", "-p", strconv.Itoa(primary.port),
		"-U", "postgres", "-D", s.data(), "-R", "-X", "stream", "-c", "fast", "--no-sync")
	backup.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := backup.CombinedOutput(); err != nil {
		t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	s.Start()
	p := primary.pool()
	defer p.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		var streaming int
		err := p.QueryRow("SELECT COUNT(*) FROM pg_stat_replication WHERE state = 'streaming'").Scan(&streaming)
		if err == nil && streaming > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not stream from the primary within a minute (%v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Set only once the standby streams: until then every commit would wait.
	for _, q := range []string{"ALTER SYSTEM SET synchronous_standby_names = '*'", "SELECT pg_reload_conf()"} {
		if _, err := p.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return s
}

// newServer prepares a private server's directory and port, removed when t
// ends; it skips t (fails it under CI=true) without the binaries or root.
func newServer(t testing.TB) *Server {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("fault test needs a private PostgreSQL: %s", why)
		}
		t.Skipf("fault test skipped: %s", why)
	}
	if _, err := os.Stat(filepath.Join(binDir, "initdb")); err != nil {
		skip("PostgreSQL 15's initdb is not installed (apt-get install postgresql-15)")
	}
	if os.Geteuid() != 0 {
		skip("needs root to run the server as the postgres user")
	}
	pg, err := user.Lookup("postgres")
	if err != nil {
		skip("no postgres user")
	}
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)
	dir, err := os.MkdirTemp("", "leasegen-postgres-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, dir: dir, port: dbtest.FreePort(t), cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
	t.Cleanup(func() {
		s.Kill()
		os.RemoveAll(dir)
	})
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// pool opens a pool on the server's postgres database as the superuser.
func (s *Server) pool() *sql.DB {
	db, err := sql.Open("pgx", s.URL)
	if err != nil {
		s.t.Fatal(err)
	}
	return db
}

// Promote ends a standby's recovery: it takes writes from then on.
func (s *Server) Promote() {
	s.t.Helper()
	db := s.pool()
	defer db.Close()
	if _, err := db.Exec("SELECT pg_promote(true, 60)"); err != nil {
		s.t.Fatalf("promote: %v", err)
	}
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// Start runs the server on its data directory and waits until it answers.
func (s *Server) Start() {
	s.t.Helper()
	s.cmd = exec.Command(filepath.Join(binDir, "postgres"), "-D", s.data(), "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", "-c", "shared_buffers=32MB",
		"-c", "logging_collector=off")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	log, err := os.Create(filepath.Join(s.dir, "server.log"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer log.Close()
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start postgres: %v", err)
	}
	db := s.pool()
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		// A connection forks a backend: on a loaded machine it can take
		// seconds, and a shorter bound would never let one through.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var dataDir string
		err := db.QueryRowContext(ctx, "SHOW data_directory").Scan(&dataDir)
		cancel()
		if err == nil {
			// Another test's server may have taken the port while this one
			// was down: tests must never work on it by mistake.
			if filepath.Clean(dataDir) != s.data() {
				s.t.Fatalf("port %d answers with the server of %s, not this test's %s", s.port, dataDir, s.data())
			}
			return
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			s.t.Fatalf("private PostgreSQL did not start: %v\n%s", err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// signal sends sig to the postmaster and to every process whose parent it
// is.
func (s *Server) signal(sig syscall.Signal) {
	pid := s.cmd.Process.Pid
	// Stopped, the postmaster starts no backend while its children are
	// signalled, and a dead one's children would belong to init.
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	for _, child := range children(pid) {
		_ = syscall.Kill(child, sig)
	}
	_ = syscall.Kill(pid, sig)
}

// children lists the processes whose parent is pid, from /proc.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after
		// its closing parenthesis.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// Kill stops every process of the server with SIGKILL, as a crash would.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	s.signal(syscall.SIGCONT) // a frozen server cannot die
	s.signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Freeze stops every process of the server (SIGSTOP): connections stay
// open and every statement hangs.
func (s *Server) Freeze() { s.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT).
func (s *Server) Thaw() { s.signal(syscall.SIGCONT) }

// NewDatabase creates a database on the server and returns its URL.
func (s *Server) NewDatabase(name string) string {
	s.t.Helper()
	db := s.pool()
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		s.t.Fatalf("create database: %v", err)
	}
	return WithDatabase(s.t, s.URL, name)
}
