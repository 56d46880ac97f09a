#!/usr/bin/env bash
# A three-node MariaDB Galera cluster on loopback for leasegen's tests, from
# Debian's MariaDB and galera-4 (installed when missing). Needs root: the
# nodes run as the mysql user, whose rsync state transfers fail as root.
#
#   scripts/galera.sh start   initialise the nodes when missing and start
#                             them (the first bootstraps the cluster, the
#                             others join); nodes already answering stay,
#                             unless one holds over 2 GiB (then all
#                             restart)
#   scripts/galera.sh env     start, then print the export line of
#                             LEASEGEN_GALERA_DSNS (the three nodes' server
#                             DSNs, comma-separated, node 1 first)
#   scripts/galera.sh stop    shut the nodes down
#   scripts/galera.sh kill N  SIGKILL node N (start brings it back: it rejoins)
#   scripts/galera.sh freeze N / thaw N   SIGSTOP / SIGCONT node N
#   scripts/galera.sh sql N   a mariadb client on node N (arguments passed on)
#
# Environment: LEASEGEN_GALERA_DIR (default /var/lib/leasegen-galera),
# LEASEGEN_GALERA_PORT (node 1's port, default 3321; nodes 2 and 3 take the
# next two), LEASEGEN_GALERA_MAX_RSS_MIB (default 2048). Every step is bounded in time and says what failed.
set -euo pipefail

DIR=${LEASEGEN_GALERA_DIR:-/var/lib/leasegen-galera}
PORT=${LEASEGEN_GALERA_PORT:-3321}
NODES=(1 2 3)

say() { echo "galera: $*" >&2; }
die() {
  say "$*"
  exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (the nodes run as the mysql user); run as root or skip the Galera tests"

port() { echo $((PORT + $1 - 1)); }
# shellcheck source=scripts/nodes-lib.sh
. "$(dirname "$0")/nodes-lib.sh"
gport() { echo $((PORT + 1250 + 10 * $1)); } # group communication, IST on +1, SST on +2
members() {
  local n list=""
  for n in "${NODES[@]}"; do list+="${list:+,}127.0.0.1:$(gport "$n")"; done
  echo "$list"
}

install() {
  [ -f /usr/lib/galera/libgalera_smm.so ] && command -v rsync >/dev/null && command -v mariadb-install-db >/dev/null && return
  say "installing galera-4, rsync and mariadb-server"
  timeout 300 apt-get update -qq >/dev/null || true
  DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends \
    galera-4 rsync mariadb-server >/dev/null || die "could not install galera-4"
}

ping() {
  timeout 5 mariadb-admin --no-defaults -uroot -h127.0.0.1 -P"$(port "$1")" --protocol=tcp \
    --connect-timeout=2 ping >/dev/null 2>&1
}

sql() {
  local n=$1
  shift
  timeout 60 mariadb --no-defaults -uroot -h127.0.0.1 -P"$(port "$n")" --protocol=tcp "$@"
}

# synced reports node $1 joined and in sync with the cluster of 3.
synced() {
  local state size
  state=$(sql "$1" -N -e "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null | awk '{print $2}') || return 1
  size=$(sql "$1" -N -e "SHOW STATUS LIKE 'wsrep_cluster_size'" 2>/dev/null | awk '{print $2}') || return 1
  [ "$state" = Synced ] && [ "$size" -ge "$2" ]
}

init() {
  local n=$1 d=$DIR/node$1
  [ -d "$d/data/mysql" ] && return
  rm -rf "$d"
  mkdir -p "$d/data" "$d/tmp"
  chown -R mysql:mysql "$d"
  timeout 120 mariadb-install-db --no-defaults --datadir="$d/data" --tmpdir="$d/tmp" --user=mysql \
    --auth-root-authentication-method=normal --skip-test-db >"$d/install.log" 2>&1 ||
    die "mariadb-install-db for node $n failed (see $d/install.log)"
}

# recovered prints the --wsrep-start-position option of a node that
# crashed (its grastate.dat says seqno -1), read from its InnoDB logs:
# with it the node rejoins by IST, sending only what it missed, instead
# of a full state transfer, whose rsync donor blocks its writes meanwhile.
recovered() {
  local d=$DIR/node$1 pos
  grep -q '^seqno: *-1' "$d/data/grastate.dat" 2>/dev/null || return 0
  timeout 120 /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$d/data" --tmpdir="$d/tmp" \
    --socket="$d/recover.sock" --skip-networking --log-error="$d/recover.log" --wsrep-recover \
    --wsrep-on=ON --wsrep-provider=/usr/lib/galera/libgalera_smm.so --wsrep-cluster-address=gcomm:// \
    --binlog-format=ROW --innodb-autoinc-lock-mode=2 >/dev/null 2>&1 || true
  pos=$(sed -n 's/.*WSREP: Recovered position: *//p' "$d/recover.log" | tail -1)
  rm -f "$d/recover.log"
  [ -n "$pos" ] && echo "--wsrep-start-position=$pos"
  return 0
}

launch() {
  local n=$1 d=$DIR/node$1 g
  g=$(gport "$n")
  shift
  say "starting node $n on 127.0.0.1:$(port "$n")"
  setsid nohup /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$d/data" --tmpdir="$d/tmp" \
    --port="$(port "$n")" --bind-address=127.0.0.1 --socket="$d/mysqld.sock" --pid-file="$d/mysqld.pid" \
    --log-error="$d/error.log" --innodb-buffer-pool-size=128M --max-connections=500 \
    --binlog-format=ROW --innodb-autoinc-lock-mode=2 --default-storage-engine=InnoDB \
    --wsrep-on=ON --wsrep-provider=/usr/lib/galera/libgalera_smm.so --wsrep-cluster-name=leasegen \
    --wsrep-cluster-address="gcomm://$(members)" --wsrep-node-name="node$n" \
    --wsrep-node-address="127.0.0.1:$g" --wsrep-sst-method=rsync \
    --wsrep-sst-receive-address="127.0.0.1:$((g + 2))" \
    --wsrep-provider-options="base_port=$g;ist.recv_addr=127.0.0.1:$((g + 1))" \
    "$@" </dev/null >/dev/null 2>&1 &
}

await() {
  local n=$1 want=$2
  for _ in $(seq 1 240); do
    synced "$n" "$want" && return
    sleep 0.5
  done
  tail -30 "$DIR/node$n/error.log" >&2 || true
  die "node $n did not join a cluster of $want within 120s (log: $DIR/node$n/error.log)"
}

# A node's resident memory, in MiB (0 when it does not run).
rss_mib() {
  local pid
  pid=$(cat "$DIR/node$1/mysqld.pid" 2>/dev/null) || { echo 0; return; }
  awk '/^VmRSS/ {print int($2 / 1024); found = 1} END {if (!found) print 0}' "/proc/$pid/status" 2>/dev/null || echo 0
}

# A node runs in about 300 MiB (a 128 MiB buffer pool); once, in a CI run
# right after a freeze under load, node 2 grew to 5.7 GiB, and such nodes
# pushed the 2-core machine into reclaiming its page cache for minutes.
# start then restarts the whole cluster (one node leaving alone can take
# the others' quorum with it when they leave in a row).
MAX_RSS_MIB=${LEASEGEN_GALERA_MAX_RSS_MIB:-2048}
shrink() {
  local n mib
  for n in "${NODES[@]}"; do
    mib=$(rss_mib "$n")
    [ "$mib" -gt "$MAX_RSS_MIB" ] || continue
    say "node $n holds $mib MiB (over $MAX_RSS_MIB): restarting the cluster"
    stop
    return
  done
}

start() {
  install
  local n up=0
  for n in "${NODES[@]}"; do init "$n"; done
  shrink
  for n in "${NODES[@]}"; do ping "$n" && up=$((up + 1)); done
  if [ "$up" = 0 ]; then
    # Nobody to join: node 1 bootstraps, after a clean or unclean stop.
    sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$DIR/node1/data/grastate.dat" 2>/dev/null || true
    launch 1 --wsrep-new-cluster
    await 1 1
    up=1
  fi
  for n in "${NODES[@]}"; do
    ping "$n" && continue
    # shellcheck disable=SC2046 # none or one option
    launch "$n" $(recovered "$n")
    up=$((up + 1))
    await "$n" "$up"
  done
  for n in "${NODES[@]}"; do await "$n" ${#NODES[@]}; done
}

stop() {
  local n pid
  for n in 3 2 1; do # node 1 last: it then shuts down with safe_to_bootstrap set
    ping "$n" || continue
    say "stopping node $n"
    pid=$(cat "$DIR/node$n/mysqld.pid" 2>/dev/null) || pid=
    timeout 60 mariadb-admin --no-defaults -uroot -h127.0.0.1 -P"$(port "$n")" --protocol=tcp shutdown ||
      die "shutdown of node $n failed"
    # mariadb-admin returns before the process is gone; a start right
    # after would fail on its ports.
    for _ in $(seq 1 600); do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
}

case "${1:-start}" in
start) start ;;
env)
  start
  echo "export LEASEGEN_GALERA_DSNS='$(server_dsns "${NODES[@]}")'"
  ;;
stop) stop ;;
kill) signal_pidfile "$DIR/node${2:?node}/mysqld.pid" "node $2" KILL ;;
freeze) signal_pidfile "$DIR/node${2:?node}/mysqld.pid" "node $2" STOP ;;
thaw) signal_pidfile "$DIR/node${2:?node}/mysqld.pid" "node $2" CONT ;;
sql)
  shift
  n=${1:-1}
  shift || true
  sql "$n" "$@"
  ;;
*) die "usage: $0 start|env|stop|kill N|freeze N|thaw N|sql [N] [args]" ;;
esac
