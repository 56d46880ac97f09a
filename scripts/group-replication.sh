#!/usr/bin/env bash
# A three-member MySQL 9.7 Group Replication group (single-primary) on
# loopback for leasegen's tests, from the binaries of the Debian sid chroot
# that scripts/mysql97.sh builds (it builds it when missing). Needs root.
#
#   scripts/group-replication.sh start    initialise the members when
#                                         missing, start them, bootstrap
#                                         the group on member 1 when no
#                                         member is in it, join the others
#   scripts/group-replication.sh env      start, then print the export line
#                                         of LEASEGEN_GR_DSNS (the members'
#                                         server DSNs, comma-separated)
#   scripts/group-replication.sh stop     shut the members down
#   scripts/group-replication.sh primary  print the primary's number
#   scripts/group-replication.sh kill N   SIGKILL member N (start brings it
#                                         back into the group)
#   scripts/group-replication.sh freeze N / thaw N   SIGSTOP / SIGCONT
#                                         member N
#   scripts/group-replication.sh sql N    a mysql client on member N
#
# Environment: LEASEGEN_MYSQL97_ROOT (the chroot, as for mysql97.sh),
# LEASEGEN_GR_PORT (member 1's port, default 3331; the others take the next
# two; group communication on the port + 10). Every step is bounded in time
# and says what failed.
set -euo pipefail

ROOT=${LEASEGEN_MYSQL97_ROOT:-/var/cache/leasegen/mysql97-sid}
PORT=${LEASEGEN_GR_PORT:-3331}
MEMBERS=(1 2 3)
GROUP=6c656173-6567-656e-2d67-726f75702d31 # "leasegen-group-1"

say() { echo "group-replication: $*" >&2; }
die() {
  say "$*"
  exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (a chroot); run as root or skip the Group Replication tests"

port() { echo $((PORT + $1 - 1)); }
# shellcheck source=scripts/nodes-lib.sh
. "$(dirname "$0")/nodes-lib.sh"
gcs() { echo $((PORT + 9 + $1)); }
seeds() {
  local n list=""
  for n in "${MEMBERS[@]}"; do list+="${list:+,}127.0.0.1:$(gcs "$n")"; done
  echo "$list"
}
data() { echo "/srv/gr/member$1"; } # inside the chroot

sql() {
  local n=$1
  shift
  timeout 60 chroot "$ROOT" mysql --no-defaults -uroot -h127.0.0.1 -P"$(port "$n")" --protocol=tcp "$@"
}

ping() {
  timeout 5 chroot "$ROOT" mysqladmin --no-defaults -uroot -h127.0.0.1 -P"$(port "$1")" --protocol=tcp \
    --connect-timeout=2 ping >/dev/null 2>&1
}

# state prints member $1's state in its own view of the group.
state() {
  sql "$1" -N -e "SELECT MEMBER_STATE FROM performance_schema.replication_group_members
    WHERE MEMBER_ID = @@server_uuid" 2>/dev/null || true
}

# primary prints the number of the member that is the group's primary.
primary() {
  local n port
  for n in "${MEMBERS[@]}"; do
    port=$(sql "$n" -N -e "SELECT MEMBER_PORT FROM performance_schema.replication_group_members
      WHERE MEMBER_ROLE = 'PRIMARY' AND MEMBER_STATE = 'ONLINE'" 2>/dev/null) || continue
    if [ -n "$port" ]; then
      echo $((port - PORT + 1))
      return
    fi
  done
  die "no member is the primary"
}

online() {
  sql "$1" -N -e "SELECT COUNT(*) FROM performance_schema.replication_group_members WHERE MEMBER_STATE = 'ONLINE'" 2>/dev/null || echo 0
}

init() {
  local n=$1
  [ -d "$ROOT$(data "$n")/mysql" ] && return
  rm -rf "${ROOT:?}$(data "$n")"
  mkdir -p "$ROOT/srv/gr" "$ROOT/run/mysqld"
  timeout 300 chroot "$ROOT" mysqld --no-defaults --initialize-insecure --user=root --datadir="$(data "$n")" \
    >"$ROOT/srv/gr/member$n.init.log" 2>&1 || die "initialising member $n failed (see $ROOT/srv/gr/member$n.init.log)"
}

launch() {
  local n=$1
  say "starting member $n on 127.0.0.1:$(port "$n")"
  setsid nohup chroot "$ROOT" mysqld --no-defaults --user=root --datadir="$(data "$n")" --port="$(port "$n")" \
    --bind-address=127.0.0.1 --socket="/run/mysqld/gr$n.sock" --pid-file="/srv/gr/member$n.pid" --mysqlx=OFF --secure-file-priv= \
    --log-error="/srv/gr/member$n.log" --max-connections=500 --innodb-buffer-pool-size=128M \
    --server-id="$n" --gtid-mode=ON --enforce-gtid-consistency=ON --log-bin=binlog \
    --plugin-load-add=group_replication.so --group-replication-group-name="$GROUP" \
    --group-replication-start-on-boot=OFF --group-replication-local-address="127.0.0.1:$(gcs "$n")" \
    --group-replication-group-seeds="$(seeds)" --group-replication-recovery-get-public-key=ON \
    --report-host=127.0.0.1 --report-port="$(port "$n")" </dev/null >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 120); do
    ping "$n" && return
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  tail -20 "$ROOT/srv/gr/member$n.log" >&2 || true
  die "member $n did not answer within 60s (log: $ROOT/srv/gr/member$n.log)"
}

# join starts Group Replication on member $1, bootstrapping the group when
# $2 is "bootstrap", and waits until it is ONLINE.
join() {
  local n=$1 how=${2:-}
  # A member expelled while it was frozen or cut off stays in ERROR, read
  # only, until Group Replication is restarted on it.
  case "$(state "$n")" in ERROR | RECOVERING) sql "$n" -e "STOP GROUP_REPLICATION" || true ;; esac
  # The recovery channel's user, once per member (a read-only member
  # refuses even CREATE USER IF NOT EXISTS).
  if [ "$(sql "$n" -N -e "SELECT COUNT(*) FROM mysql.user WHERE user = 'rpl'")" = 0 ]; then
    sql "$n" -e "SET SQL_LOG_BIN = 0;
      CREATE USER rpl@'%' IDENTIFIED BY 'rpl';
      GRANT REPLICATION SLAVE, CONNECTION_ADMIN, BACKUP_ADMIN, GROUP_REPLICATION_STREAM ON *.* TO rpl@'%';
      SET SQL_LOG_BIN = 1;
      CHANGE REPLICATION SOURCE TO SOURCE_USER = 'rpl', SOURCE_PASSWORD = 'rpl' FOR CHANNEL 'group_replication_recovery';" ||
      die "preparing member $n failed"
  fi
  if [ "$how" = bootstrap ]; then
    sql "$n" -e "SET GLOBAL group_replication_bootstrap_group = ON; START GROUP_REPLICATION;
      SET GLOBAL group_replication_bootstrap_group = OFF;" || die "bootstrapping the group on member $n failed"
  else
    sql "$n" -e "START GROUP_REPLICATION" || die "member $n could not join the group"
  fi
  for _ in $(seq 1 240); do
    [ "$(state "$n")" = ONLINE ] && return
    sleep 0.5
  done
  tail -20 "$ROOT/srv/gr/member$n.log" >&2 || true
  die "member $n did not come ONLINE within 120s"
}

start() {
  "$(dirname "$0")/mysql97.sh" build
  mountpoint -q "$ROOT/proc" || mount --bind /proc "$ROOT/proc"
  local n grouped=0
  for n in "${MEMBERS[@]}"; do
    init "$n"
    ping "$n" || launch "$n"
  done
  for n in "${MEMBERS[@]}"; do [ "$(state "$n")" = ONLINE ] && grouped=1; done
  for n in "${MEMBERS[@]}"; do
    [ "$(state "$n")" = ONLINE ] && continue
    if [ "$grouped" = 0 ]; then
      join "$n" bootstrap
      grouped=1
    else
      join "$n"
    fi
  done
  # A thawed member still believes in its old view for a moment, then finds
  # itself expelled: it rejoins by itself, or is joined again here.
  for _ in $(seq 1 240); do
    [ "$(online 1)" = "${#MEMBERS[@]}" ] && return
    for n in "${MEMBERS[@]}"; do
      case "$(state "$n")" in ERROR | OFFLINE) join "$n" ;; esac
    done
    sleep 0.5
  done
  die "the group has $(online 1) members ONLINE, want ${#MEMBERS[@]}"
}

stop() {
  local n
  for n in 3 2 1; do
    ping "$n" || continue
    say "stopping member $n"
    timeout 60 chroot "$ROOT" mysqladmin --no-defaults -uroot -h127.0.0.1 -P"$(port "$n")" --protocol=tcp shutdown ||
      die "shutdown of member $n failed"
  done
}

case "${1:-start}" in
start) start ;;
env)
  start
  echo "export LEASEGEN_GR_DSNS='$(server_dsns "${MEMBERS[@]}")'"
  ;;
stop) stop ;;
primary) primary ;;
kill) signal_pidfile "$ROOT/srv/gr/member${2:?member}.pid" "member $2" KILL ;;
freeze) signal_pidfile "$ROOT/srv/gr/member${2:?member}.pid" "member $2" STOP ;;
thaw) signal_pidfile "$ROOT/srv/gr/member${2:?member}.pid" "member $2" CONT ;;
sql)
  shift
  n=${1:-1}
  shift || true
  sql "$n" "$@"
  ;;
*) die "usage: $0 start|env|stop|primary|kill N|freeze N|thaw N|sql [N] [args]" ;;
esac
