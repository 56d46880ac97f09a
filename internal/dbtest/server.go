package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Server is a private MariaDB instance for fault tests: they stop, kill and
// freeze it without disturbing the shared server other tests use. It needs
// mariadbd and mariadb-install-db, and root (the server runs as mysql).
type Server struct {
	t    testing.TB
	dir  string
	port int
	cmd  *exec.Cmd
	// DSN reaches the server as root, without a database.
	DSN string
}

// StartServer installs and starts a private server, removed when t ends.
// Without the binaries or root it skips (fails under CI=true).
func StartServer(t testing.TB) *Server {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("fault test needs a private MariaDB: %s", why)
		}
		t.Skipf("fault test skipped: %s", why)
	}
	if _, err := exec.LookPath("mariadb-install-db"); err != nil {
		skip("mariadb-install-db not installed (apt-get install mariadb-server)")
	}
	if os.Geteuid() != 0 {
		skip("needs root to run mariadbd as the mysql user")
	}
	dir, err := os.MkdirTemp("", "leasegen-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	// Its own tmpdir: a server killed with SIGKILL leaves its temporary
	// tables behind, and a later server whose pid matches would fail on
	// them in a shared /tmp ("Could not remove temporary table").
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	run("chmod", "755", dir)
	run("chown", "-R", "mysql:mysql", dir)
	run("mariadb-install-db", "--no-defaults", "--datadir="+filepath.Join(dir, "data"), "--tmpdir="+filepath.Join(dir, "tmp"),
		"--user=mysql", "--auth-root-authentication-method=normal", "--skip-test-db")
	s := &Server{t: t, dir: dir, port: FreePort(t)}
	s.DSN = fmt.Sprintf("root@tcp(127.0.0.1:%d)/", s.port)
	t.Cleanup(func() {
		s.Kill()
		os.RemoveAll(dir)
	})
	s.Start()
	return s
}

// FreePort returns a loopback port nothing listens on, for a private
// server.
func FreePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start runs the server on its data directory and waits until it answers.
func (s *Server) Start() {
	s.t.Helper()
	mariadbd, err := exec.LookPath("mariadbd")
	if err != nil {
		mariadbd = "/usr/sbin/mariadbd"
	}
	s.cmd = exec.Command(mariadbd, "--no-defaults", "--datadir="+filepath.Join(s.dir, "data"), "--tmpdir="+filepath.Join(s.dir, "tmp"), "--user=mysql",
		fmt.Sprintf("--port=%d", s.port), "--bind-address=127.0.0.1", "--socket="+filepath.Join(s.dir, "mysqld.sock"),
		"--pid-file="+filepath.Join(s.dir, "mysqld.pid"), "--log-error="+filepath.Join(s.dir, "error.log"),
		"--innodb-buffer-pool-size=64M", "--max-connections=500")
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start mariadbd: %v", err)
	}
	db, err := sql.Open("mysql", s.DSN)
	if err != nil {
		s.t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		var datadir string
		err := db.QueryRowContext(ctx, "SELECT @@datadir").Scan(&datadir)
		cancel()
		if err == nil {
			// Another test's server may have taken the port while this one
			// was down: tests must never work on it by mistake.
			if want := filepath.Join(s.dir, "data"); filepath.Clean(datadir) != want {
				s.t.Fatalf("port %d answers with the server of %s, not this test's %s: it took the port while this one was down", s.port, datadir, want)
			}
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			s.t.Fatalf("private MariaDB did not start: %v\n%s", err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill stops the server with SIGKILL, as a crash would.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a frozen server cannot die
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Freeze stops the server's process (SIGSTOP): connections stay open and
// every statement hangs.
func (s *Server) Freeze() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT).
func (s *Server) Thaw() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

// NewDatabase creates a database on the server and returns its DSN with
// DSNParams.
func (s *Server) NewDatabase(name string) string {
	s.t.Helper()
	db, err := sql.Open("mysql", s.DSN)
	if err != nil {
		s.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		s.t.Fatalf("create database: %v", err)
	}
	return WithDatabase(s.t, s.DSN, name)
}
