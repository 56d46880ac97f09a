#!/usr/bin/env bash
# Prepares a local PostgreSQL for leasegen's tests and prints
#   export LEASEGEN_POSTGRES_DSN=...
# for the caller to eval: creates the test role leasegen (password
# leasegen, CREATEDB: each test makes and drops its own leasegen_test_*
# database). With CI=true (or LEASEGEN_START_POSTGRES=1) it first starts
# the cluster when it is installed but down (as root), and fails when it
# cannot. Otherwise, without a server it prints nothing and the PostgreSQL
# tests skip, saying how to enable them. Respects a set LEASEGEN_POSTGRES_DSN.
set -euo pipefail

if [ -n "${LEASEGEN_POSTGRES_DSN:-}" ]; then
  printf 'export LEASEGEN_POSTGRES_DSN=%q\n' "$LEASEGEN_POSTGRES_DSN"
  exit 0
fi

fail() {
  echo "postgres-env: $*" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  echo "postgres-env: PostgreSQL tests will be skipped; install PostgreSQL or set LEASEGEN_POSTGRES_DSN to run them" >&2
  exit 0
}

command -v pg_isready >/dev/null 2>&1 || fail "no PostgreSQL client found (apt-get install postgresql)"

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  if [ "${CI:-}" != "true" ] && [ "${LEASEGEN_START_POSTGRES:-}" != "1" ]; then
    fail "no PostgreSQL at 127.0.0.1:5432 (start it, or run with LEASEGEN_START_POSTGRES=1 to let this script start it)"
  fi
  [ "$(id -u)" = 0 ] || fail "PostgreSQL is down; start it (as root: see scripts/postgres-env.sh)"
  command -v pg_ctlcluster >/dev/null 2>&1 || fail "PostgreSQL is down and pg_ctlcluster is not installed"
  cluster=$(pg_lsclusters -h 2>/dev/null | awk 'NR==1 {print $1" "$2}')
  [ -n "$cluster" ] || fail "PostgreSQL is installed but has no cluster"
  echo "postgres-env: starting PostgreSQL $cluster" >&2
  # shellcheck disable=SC2086 # "version name"
  pg_ctlcluster --skip-systemctl-redirect $cluster start || fail "pg_ctlcluster $cluster start failed"
  for _ in $(seq 1 60); do
    pg_isready -q -h 127.0.0.1 -p 5432 && break
    sleep 0.5
  done
  pg_isready -q -h 127.0.0.1 -p 5432 || fail "PostgreSQL did not start within 30s"
fi

psql_admin() {
  if [ "$(id -u)" = 0 ]; then su postgres -c "psql -X -q -v ON_ERROR_STOP=1 $*"; else psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -U postgres "$@"; fi
}
if ! psql_admin "-At -c \"SELECT 1 FROM pg_roles WHERE rolname = 'leasegen'\"" | grep -q 1; then
  echo "postgres-env: creating the test role leasegen (password leasegen, CREATEDB)" >&2
  psql_admin "-c \"CREATE ROLE leasegen LOGIN PASSWORD 'leasegen' CREATEDB\"" || fail "could not create the test role (run as root, or as a user that may)"
fi
echo "export LEASEGEN_POSTGRES_DSN='postgres://leasegen:leasegen@127.0.0.1:5432/postgres?sslmode=disable'"
