# Shared by scripts/galera.sh and scripts/group-replication.sh, which
# source it after defining say, die and port.

# signal_pidfile sends signal $3 to the server whose pid file is $1 ($2
# names it in messages), and with KILL waits until it is gone.
signal_pidfile() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || die "$2 has no pid file: is it running?"
  kill "-$3" "$pid" || die "could not signal $2 (pid $pid)"
  [ "$3" = KILL ] || return 0
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  die "$2 (pid $pid) did not die"
}

# server_dsns prints the root server DSNs of the nodes numbered by its
# arguments, comma-separated.
server_dsns() {
  local n list=""
  for n in "$@"; do list+="${list:+,}root@tcp(127.0.0.1:$(port "$n"))/"; done
  echo "$list"
}
