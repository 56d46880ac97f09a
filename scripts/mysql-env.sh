#!/usr/bin/env bash
# Prepares a local MariaDB/MySQL for leasegen's tests and prints
#   export LEASEGEN_MYSQL_DSN=...
# for the caller to eval: creates the test user and grants it the
# leasegen_test_* databases. With CI=true (or LEASEGEN_START_MYSQL=1) it
# first starts MariaDB when it is installed but down (as root), and fails
# when it cannot. Otherwise, without a server it prints nothing and the MySQL
# tests skip, saying how to enable them. Respects a set LEASEGEN_MYSQL_DSN.
set -euo pipefail

if [ -n "${LEASEGEN_MYSQL_DSN:-}" ]; then
  printf 'export LEASEGEN_MYSQL_DSN=%q\n' "$LEASEGEN_MYSQL_DSN"
  exit 0
fi

fail() {
  echo "mysql-env: $*" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  echo "mysql-env: MySQL tests will be skipped; install MariaDB or set LEASEGEN_MYSQL_DSN to run them" >&2
  exit 0
}

command -v mariadb-admin >/dev/null 2>&1 || command -v mysqladmin >/dev/null 2>&1 ||
  fail "no MariaDB/MySQL client found"
admin=$(command -v mariadb-admin || command -v mysqladmin)
client=$(command -v mariadb || command -v mysql)

if ! "$admin" -uroot --protocol=tcp -h127.0.0.1 ping >/dev/null 2>&1; then
  if [ "${CI:-}" != "true" ] && [ "${LEASEGEN_START_MYSQL:-}" != "1" ]; then
    fail "no MariaDB/MySQL at 127.0.0.1:3306 (start it, or run with LEASEGEN_START_MYSQL=1 to let this script start it)"
  fi
  server=$(command -v mariadbd || true)
  [ -n "$server" ] || server=/usr/sbin/mariadbd
  [ -x "$server" ] || fail "MariaDB is down and mariadbd is not installed"
  [ "$(id -u)" = 0 ] || fail "MariaDB is down; start it (as root: see scripts/mysql-env.sh)"
  echo "mysql-env: starting MariaDB" >&2
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
  start-stop-daemon --start --oknodo --background --exec "$server" -- --user=mysql
  for _ in $(seq 1 60); do
    "$admin" -uroot --protocol=tcp -h127.0.0.1 ping >/dev/null 2>&1 && break
    sleep 0.5
  done
  "$admin" -uroot --protocol=tcp -h127.0.0.1 ping >/dev/null 2>&1 || fail "MariaDB did not start within 30s"
fi

if [ "$("$client" -uroot --protocol=tcp -h127.0.0.1 -N -e "SELECT COUNT(*) FROM mysql.user WHERE user = 'leasegen'" 2>/dev/null)" != 2 ]; then
  echo "mysql-env: creating the test users leasegen@localhost and leasegen@127.0.0.1 (password leasegen; rights on leasegen_test_* databases only)" >&2
fi
"$client" -uroot --protocol=tcp -h127.0.0.1 <<'SQL' || fail "could not create the test user (root without password expected)"
CREATE USER IF NOT EXISTS 'leasegen'@'localhost' IDENTIFIED BY 'leasegen';
CREATE USER IF NOT EXISTS 'leasegen'@'127.0.0.1' IDENTIFIED BY 'leasegen';
GRANT ALL PRIVILEGES ON `leasegen\_test\_%`.* TO 'leasegen'@'localhost';
GRANT ALL PRIVILEGES ON `leasegen\_test\_%`.* TO 'leasegen'@'127.0.0.1';
SQL
echo "export LEASEGEN_MYSQL_DSN='leasegen:leasegen@tcp(127.0.0.1:3306)/'"
