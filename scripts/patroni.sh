#!/usr/bin/env bash
# PostgreSQL 15 under Patroni, a leader and a synchronous standby on
# loopback, with etcd as the distributed configuration store, for
# leasegen's failover tests. Debian's patroni, python3-etcd and etcd-server
# are installed when missing. Needs root: Patroni and PostgreSQL run as the
# postgres user.
#
#   scripts/patroni.sh start    start etcd and both nodes when they are
#                               down, and wait for a leader and a
#                               synchronous standby
#   scripts/patroni.sh env      start, then print the export line of
#                               LEASEGEN_PATRONI_URL: both nodes, with
#                               target_session_attrs=read-write
#   scripts/patroni.sh kill N   SIGKILL node N's Patroni and PostgreSQL, as
#                               a machine's crash would (start brings it
#                               back, as a standby of the new leader)
#   scripts/patroni.sh freeze N / thaw N   SIGSTOP / SIGCONT node N's
#                               Patroni and PostgreSQL, as a stalled machine
#   scripts/patroni.sh stop     stop both nodes and etcd
#   scripts/patroni.sh leader   print the leader's node number
#   scripts/patroni.sh leader-url   print a URL of the leader alone
#
# Environment: LEASEGEN_PATRONI_DIR (default /var/lib/leasegen-patroni),
# LEASEGEN_PATRONI_PORT (node 1's PostgreSQL port, default 5441; node 2
# takes the next; their REST APIs listen on the port + 2600, etcd on 23790).
set -euo pipefail

DIR=${LEASEGEN_PATRONI_DIR:-/var/lib/leasegen-patroni}
PORT=${LEASEGEN_PATRONI_PORT:-5441}
ETCD=127.0.0.1:23790
NODES=(1 2)
BIN=/usr/lib/postgresql/15/bin

say() { echo "patroni: $*" >&2; }
die() {
  say "$*"
  exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (Patroni runs as the postgres user); run as root or skip the Patroni tests"

port() { echo $((PORT + $1 - 1)); }
rest() { echo $((PORT + 2600 + $1 - 1)); }

install() {
  command -v patroni >/dev/null && command -v etcd >/dev/null && /usr/bin/python3 -c 'import etcd' 2>/dev/null && return
  say "installing patroni, python3-etcd and etcd-server"
  timeout 300 apt-get update -qq >/dev/null || true
  DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends \
    patroni python3-etcd etcd-server etcd-client >/dev/null || die "could not install Patroni and etcd"
}

etcd_up() { curl -sf "http://$ETCD/health" >/dev/null 2>&1; }

start_etcd() {
  etcd_up && return
  mkdir -p "$DIR"
  say "starting etcd on $ETCD"
  (cd / && exec setsid nohup etcd --name leasegen --data-dir "$DIR/etcd" --enable-v2=true \
    --listen-client-urls "http://$ETCD" --advertise-client-urls "http://$ETCD" \
    --listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
    --initial-cluster leasegen=http://127.0.0.1:23800 </dev/null >"$DIR/etcd.log" 2>&1) &
  for _ in $(seq 1 60); do
    etcd_up && return
    sleep 0.5
  done
  die "etcd did not answer within 30s (log: $DIR/etcd.log)"
}

config() {
  local n=$1
  cat <<EOF
scope: leasegen
name: node$n
restapi:
  listen: 127.0.0.1:$(rest "$n")
  connect_address: 127.0.0.1:$(rest "$n")
etcd:
  host: $ETCD
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        max_connections: 300
        wal_log_hints: 'on'
  initdb:
    - encoding: UTF8
  pg_hba:
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$(port "$n")
  connect_address: 127.0.0.1:$(port "$n")
  data_dir: $DIR/node$n/data
  bin_dir: $BIN
  pgpass: $DIR/node$n/pgpass
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
    rewind:
      username: postgres
      password: postgres
  parameters:
    unix_socket_directories: $DIR/node$n
EOF
}

node_up() { curl -s -o /dev/null "http://127.0.0.1:$(rest "$1")/health" 2>/dev/null; }

start_node() {
  local n=$1
  node_up "$n" && return
  mkdir -p "$DIR/node$n"
  config "$n" >"$DIR/node$n.yml"
  chown -R postgres:postgres "$DIR/node$n" "$DIR/node$n.yml"
  say "starting node $n (PostgreSQL on 127.0.0.1:$(port "$n"))"
  # From /: Patroni's PostgreSQL inherits its directory, and a checkout
  # this was started from may be deleted while the cluster runs on.
  # exec: the subshell becomes Patroni, and no process of this script
  # keeps a caller's $(...) pipe open.
  (cd / && exec setsid nohup runuser -u postgres -- patroni "$DIR/node$n.yml" </dev/null >"$DIR/node$n.log" 2>&1) &
}

# drop_stale stops the Patroni daemons started from a directory deleted
# since (an older checkout's): they can no longer start PostgreSQL
# ("could not identify current directory"), so start_node starts them
# anew.
drop_stale() {
  local pid
  for pid in $(pgrep -f "patroni $DIR/node" || true); do
    case "$(readlink "/proc/$pid/cwd" 2>/dev/null)" in
    *" (deleted)")
      say "restarting Patroni $pid: the directory it was started from is gone"
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      ;;
    esac
  done
}

# role prints what node $1's REST API says it is: primary, sync (a
# synchronous standby), replica, or nothing while it does not answer.
role() {
  local r
  for r in primary sync replica; do
    if curl -sf -o /dev/null "http://127.0.0.1:$(rest "$1")/$r" 2>/dev/null; then
      echo "$r"
      return
    fi
  done
}

leader() {
  local n
  for n in "${NODES[@]}"; do
    if [ "$(role "$n")" = primary ]; then
      echo "$n"
      return
    fi
  done
  die "no node is the leader"
}

start() {
  install
  start_etcd
  drop_stale
  local n
  for n in "${NODES[@]}"; do start_node "$n"; done
  for _ in $(seq 1 240); do
    local roles=""
    for n in "${NODES[@]}"; do roles+="$(role "$n") "; done
    case "$roles" in *primary*sync* | *sync*primary*) return ;; esac
    sleep 0.5
  done
  for n in "${NODES[@]}"; do tail -5 "$DIR/node$n.log" >&2 || true; done
  die "no leader with a synchronous standby within 120s (logs: $DIR/node*.log)"
}

kill_node() {
  local n=$1 pids
  pids=$(pgrep -f "$DIR/node$n" || true)
  [ -n "$pids" ] || die "node $n is not running"
  # shellcheck disable=SC2086 # a list of pids
  kill -KILL $pids
  for _ in $(seq 1 100); do
    pgrep -f "$DIR/node$n" >/dev/null || return 0
    sleep 0.1
  done
  die "node $n did not die"
}

# signal_node sends signal $2 to every process of node $1: Patroni, the
# postmaster and its children (the backends, whose command lines do not
# name the node), the postmaster first so that it starts none meanwhile.
signal_node() {
  local pm
  pm=$(head -1 "$DIR/node$1/data/postmaster.pid" 2>/dev/null) || die "node $1 has no postmaster.pid"
  kill "-$2" "$pm" || die "node $1's postmaster (pid $pm) is not running"
  pkill "-$2" -P "$pm" || true
  pkill "-$2" -f "patroni $DIR/node$1.yml" || die "node $1's Patroni is not running"
}

stop() {
  local n
  for n in "${NODES[@]}"; do pkill -TERM -f "patroni $DIR/node$n.yml" || true; done
  for _ in $(seq 1 120); do
    pgrep -f "$DIR/node" >/dev/null || break
    sleep 0.5
  done
  pkill -TERM -f "etcd --name leasegen" || true
}

url() {
  echo "postgres://postgres:postgres@127.0.0.1:$(port 1),127.0.0.1:$(port 2)/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2"
}

case "${1:-start}" in
start) start ;;
env)
  start
  echo "export LEASEGEN_PATRONI_URL='$(url)'"
  ;;
kill) kill_node "${2:?node}" ;;
freeze) signal_node "${2:?node}" STOP ;;
thaw) signal_node "${2:?node}" CONT ;;
leader) leader ;;
leader-url) echo "postgres://postgres:postgres@127.0.0.1:$(port "$(leader)")/postgres?sslmode=disable" ;;
stop) stop ;;
*) die "usage: $0 start|env|kill N|freeze N|thaw N|leader|leader-url|stop" ;;
esac
