#!/usr/bin/env bash
# Oracle MySQL 9.7 for leasegen's tests and benchmarks, next to the local
# MariaDB. Debian 12 has no MySQL server; Debian sid has mysql-server-core
# 9.7, which needs sid's glibc, so it runs in a sid chroot built once with
# debootstrap and cached outside the checkout (CI on the same machine reuses
# it). Needs root.
#
#   scripts/mysql97.sh build   build the chroot when missing (about 1 min,
#                              1.2 GB), nothing more
#   scripts/mysql97.sh start   build the chroot when missing (about 1 min,
#                              1.2 GB), initialise the data directory, start
#                              mysqld on 127.0.0.1:$PORT unless it answers
#   scripts/mysql97.sh env     start, then print the export lines for
#                              LEASEGEN_MYSQL_DSN (for the caller to eval)
#   scripts/mysql97.sh stop    shut the server down
#   scripts/mysql97.sh sql     a mysql client on it (arguments passed on)
#
# Environment: LEASEGEN_MYSQL97_ROOT (the chroot, default
# /var/cache/leasegen/mysql97-sid), LEASEGEN_MYSQL97_PORT (default 3307),
# LEASEGEN_MYSQL97_ARGS (extra mysqld options, e.g.
# --binlog-row-image=MINIMAL; a running server is restarted when they
# change). Every step is bounded in time and says what failed.
set -euo pipefail

ROOT=${LEASEGEN_MYSQL97_ROOT:-/var/cache/leasegen/mysql97-sid}
PORT=${LEASEGEN_MYSQL97_PORT:-3307}
ARGS=${LEASEGEN_MYSQL97_ARGS:-}
DATA=/srv/mysql/data # inside the chroot
LOG=$ROOT/srv/mysql/error.log
APT=(-o Acquire::Check-Valid-Until=false -o Acquire::Retries=3)

say() { echo "mysql97: $*" >&2; }
die() {
  say "$*"
  exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (debootstrap and chroot); run as root or skip the MySQL 9.7 tests"

# mirror is the Debian archive this machine's apt sources already use.
mirror() {
  local m
  m=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$m" ] || m=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$m" ] || m=http://deb.debian.org/debian
  echo "$m"
}

mount_proc() {
  mountpoint -q "$1/proc" || mount --bind /proc "$1/proc"
}

build() {
  [ -x "$ROOT/usr/sbin/mysqld" ] && [ -f "$ROOT/.leasegen-ready" ] && return
  command -v debootstrap >/dev/null 2>&1 || {
    say "installing debootstrap"
    timeout 300 apt-get update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq debootstrap >/dev/null ||
      die "could not install debootstrap"
  }
  local tmp=$ROOT.building
  if mountpoint -q "$tmp/proc" 2>/dev/null; then umount "$tmp/proc"; fi
  rm -rf "$tmp"
  mkdir -p "$(dirname "$ROOT")"
  say "building a Debian sid chroot in $ROOT (once; about a minute)"
  timeout 900 debootstrap --variant=minbase sid "$tmp" "$(mirror)" >"$tmp.log" 2>&1 ||
    die "debootstrap failed (see $tmp.log)"
  cp /etc/resolv.conf "$tmp/etc/resolv.conf"
  mount_proc "$tmp"
  timeout 600 chroot "$tmp" apt-get "${APT[@]}" update -qq >>"$tmp.log" 2>&1 ||
    die "apt-get update in the chroot failed (see $tmp.log)"
  DEBIAN_FRONTEND=noninteractive timeout 900 chroot "$tmp" apt-get "${APT[@]}" install -y -qq \
    --no-install-recommends mysql-server-core mysql-client-core >>"$tmp.log" 2>&1 ||
    die "installing mysql-server-core in the chroot failed (see $tmp.log)"
  umount "$tmp/proc"
  touch "$tmp/.leasegen-ready"
  rm -rf "$ROOT"
  mv "$tmp" "$ROOT"
  rm -f "$tmp.log"
}

ping() {
  timeout 5 chroot "$ROOT" mysqladmin --no-defaults -uroot -h127.0.0.1 -P"$PORT" --protocol=tcp \
    --connect-timeout=2 ping >/dev/null 2>&1
}

sql() {
  timeout 60 chroot "$ROOT" mysql --no-defaults -uroot -h127.0.0.1 -P"$PORT" --protocol=tcp "$@"
}

stop() {
  [ -f "$ROOT/.leasegen-ready" ] || return 0
  ping || return 0
  say "stopping MySQL 9.7 on port $PORT"
  timeout 60 chroot "$ROOT" mysqladmin --no-defaults -uroot -h127.0.0.1 -P"$PORT" --protocol=tcp shutdown ||
    die "shutdown failed"
  for _ in $(seq 1 60); do ping || return 0; sleep 0.5; done
  die "MySQL 9.7 did not stop within 30s"
}

start() {
  build
  mount_proc "$ROOT"
  if ping; then
    if [ "$(cat "$ROOT/srv/mysql/args" 2>/dev/null)" = "$ARGS" ]; then return; fi
    stop
  fi
  mkdir -p "$ROOT/run/mysqld" "$ROOT/srv/mysql"
  if [ ! -d "$ROOT$DATA/mysql" ]; then
    say "initialising the data directory"
    rm -rf "${ROOT:?}$DATA"
    timeout 300 chroot "$ROOT" mysqld --no-defaults --initialize-insecure --user=root --datadir="$DATA" \
      >"$LOG" 2>&1 || die "mysqld --initialize-insecure failed (see $LOG)"
  fi
  say "starting MySQL 9.7 on 127.0.0.1:$PORT"
  echo "$ARGS" >"$ROOT/srv/mysql/args"
  # shellcheck disable=SC2086 # ARGS is a list of options
  setsid nohup chroot "$ROOT" mysqld --no-defaults --user=root --datadir="$DATA" --port="$PORT" \
    --bind-address=127.0.0.1 --socket=/run/mysqld/mysqld.sock --mysqlx=OFF --secure-file-priv= \
    --max-connections=500 --log-error=/srv/mysql/error.log $ARGS </dev/null >/dev/null 2>&1 &
  for _ in $(seq 1 120); do
    ping && return
    sleep 0.5
  done
  tail -20 "$LOG" >&2 || true
  die "MySQL 9.7 did not answer on port $PORT within 60s (log: $LOG)"
}

case "${1:-start}" in
build) build ;;
start) start ;;
env)
  start
  echo "export LEASEGEN_MYSQL_DSN='root@tcp(127.0.0.1:$PORT)/'"
  ;;
stop) stop ;;
sql)
  shift
  sql "$@"
  ;;
*) die "usage: $0 build|start|env|stop|sql [args]" ;;
esac
