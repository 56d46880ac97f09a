package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// describeMachine prints the cores, memory and CPU this run had.
func describeMachine(w io.Writer) {
	memory := "unknown"
	if kb, err := strconv.ParseInt(strings.TrimSuffix(procField("/proc/meminfo", "MemTotal"), " kB"), 10, 64); err == nil {
		memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
	}
	fmt.Fprintf(w, "machine: %d cores (%s), %s memory, %s/%s, Go %s\n", runtime.NumCPU(),
		procField("/proc/cpuinfo", "model name"), memory, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// procField returns the value of the first "name: value" line of a /proc
// file, or "unknown".
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == name {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

// describeServer prints the server's version and durability settings.
func describeServer(ctx context.Context, w io.Writer, s *scratch) error {
	if s.kind == kindSQLite {
		var version, journal string
		var sync int
		err := s.db.QueryRowContext(ctx, `SELECT sqlite_version(),
			(SELECT journal_mode FROM pragma_journal_mode), (SELECT synchronous FROM pragma_synchronous)`).
			Scan(&version, &journal, &sync)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "server: SQLite %s (modernc.org/sqlite, in process), journal_mode=%s, synchronous=%d (2 = FULL)\n", version, journal, sync)
		return nil
	}
	if s.kind == kindPostgres {
		return describePostgres(ctx, w, s.db)
	}
	var version, flush, syncBinlog, logBin, doublewrite, pool string
	err := s.db.QueryRowContext(ctx, `SELECT VERSION(), @@innodb_flush_log_at_trx_commit, @@sync_binlog,
		@@log_bin, @@innodb_doublewrite, @@innodb_buffer_pool_size DIV 1048576`).
		Scan(&version, &flush, &syncBinlog, &logBin, &doublewrite, &pool)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "server: %s, innodb_flush_log_at_trx_commit=%s, sync_binlog=%s, log_bin=%s, innodb_doublewrite=%s, buffer pool %s MiB\n",
		version, flush, syncBinlog, logBin, doublewrite, pool)
	return nil
}

// questions reads the server's count of statements received from clients.
// Reading it is one statement too.
func questions(ctx context.Context, db *sql.DB) (int64, error) {
	var name string
	var n int64
	err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Questions'").Scan(&name, &n)
	return n, err
}

// binlogBytes sums the sizes of the server's binary logs, and reports
// whether it writes one (MySQL does by default, Debian's MariaDB does not).
func binlogBytes(ctx context.Context, s *scratch) (int64, bool, error) {
	if s.kind != kindMySQL {
		return 0, false, nil
	}
	var on int
	if err := s.db.QueryRowContext(ctx, "SELECT @@log_bin").Scan(&on); err != nil || on == 0 {
		return 0, false, err
	}
	rows, err := s.db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return 0, false, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, false, err
	}
	var total int64
	for rows.Next() {
		// Log_name, File_size, and on MySQL Encrypted.
		var name string
		var size int64
		dest := []any{&name, &size}
		for range cols[2:] {
			dest = append(dest, new(sql.RawBytes))
		}
		if err := rows.Scan(dest...); err != nil {
			return 0, false, err
		}
		total += size
	}
	return total, true, rows.Err()
}
