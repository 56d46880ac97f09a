package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// clockTick is the unit of /proc's CPU times: USER_HZ, 100 on Linux.
const clockTick = 10 * time.Millisecond

// cpuMeter reads the CPU time a database server has used, from /proc:
// user and system time of the server's process and of its children,
// counting children that ended (PostgreSQL's backends) through the
// parent's cumulative times. The server must run on this machine.
type cpuMeter struct{ pid int }

// newCPUMeter finds s's server process: PostgreSQL's postmaster (the
// parent of this connection's backend), or the process listening on the
// MySQL DSN's port. ok is false for SQLite, which runs in the benchmark's
// own processes, and for a server this machine does not run.
func newCPUMeter(ctx context.Context, s *scratch) (m cpuMeter, ok bool, err error) {
	switch s.kind {
	case kindPostgres:
		var backend int
		if err := s.db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
			return m, false, err
		}
		ppid, err := strconv.Atoi(procField(fmt.Sprintf("/proc/%d/status", backend), "PPid"))
		if err != nil {
			return m, false, nil // not on this machine
		}
		return cpuMeter{pid: ppid}, true, nil
	case kindMySQL:
		cfg, err := mysql.ParseDSN(s.target)
		if err != nil {
			return m, false, err
		}
		_, port, err := net.SplitHostPort(cfg.Addr)
		if err != nil {
			return m, false, nil
		}
		pid, found := listener(port)
		return cpuMeter{pid: pid}, found, nil
	}
	return m, false, nil
}

// read returns the CPU time the server has used so far.
func (m cpuMeter) read() (time.Duration, error) {
	own, err := procTimes(m.pid)
	if err != nil {
		return 0, fmt.Errorf("server CPU: %w", err)
	}
	total := own.user + own.system + own.children
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(dir))
		if t, err := procTimes(pid); err == nil && t.parent == m.pid {
			total += t.user + t.system
		}
	}
	return total, nil
}

// times are a process's CPU times from /proc/PID/stat.
type times struct {
	parent                 int
	user, system, children time.Duration
}

func procTimes(pid int) (times, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return times{}, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	end := strings.LastIndexByte(string(b), ')')
	if end < 0 {
		return times{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[end+1:])) // f[0] is field 3, the state
	if len(f) < 15 {
		return times{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	n := func(i int) time.Duration { // field i (1-based) of the stat line
		v, _ := strconv.ParseInt(f[i-3], 10, 64)
		return time.Duration(v) * clockTick
	}
	parent, _ := strconv.Atoi(f[1])
	return times{parent: parent, user: n(14), system: n(15), children: n(16) + n(17)}, nil
}

// listener returns the process listening on TCP port, from /proc/net/tcp
// and each process's open sockets.
func listener(port string) (int, bool) {
	p, err := strconv.Atoi(port)
	if err != nil {
		return 0, false
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// local_address is HEX_IP:HEX_PORT; state 0A is LISTEN.
			if len(f) > 9 && f[3] == "0A" && strings.HasSuffix(f[1], fmt.Sprintf(":%04X", p)) {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && inodes[target] {
			pid, err := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid, err == nil
		}
	}
	return 0, false
}
