#!/usr/bin/env bash
# Fails when an sqlc output directory holds a file sqlc would not write
# (sqlc diff compares only the files it writes): db.go, models.go and one
# NAME.sql.go per queries/ENGINE/NAME.sql.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for pair in mysql:mysqldb sqlite:sqlitedb postgres:pgdb; do
  engine=${pair%%:*} out=runtime/driver/lease$engine/internal/${pair##*:}
  want=$( (echo db.go; echo models.go; for q in queries/"$engine"/*.sql; do echo "$(basename "$q" .sql).sql.go"; done) | sort)
  have=$(cd "$out" && ls | sort)
  extra=$(comm -13 <(echo "$want") <(echo "$have"))
  if [ -n "$extra" ]; then
    echo "sqlc-outputs: $out holds files sqlc does not write (delete them, or add their queries to queries/$engine):" >&2
    echo "$extra" | sed 's/^/  /' >&2
    status=1
  fi
done
# sqlc numbers an SQLite argument after a sqlc.slice as if the slice were
# one argument (?2 after a slice of three is the slice's second element):
# a query must put its slices last.
misnumbered=$(awk '/^const [a-zA-Z]+ = `/ { q = $2 } /SLICE:/ { slice = q } slice == q && /\?[0-9]/ && !/SLICE:[a-z_]*\*\/\?[^0-9]*$/ { print FILENAME ": " q }' \
  runtime/driver/leasesqlite/internal/sqlitedb/*.sql.go | sort -u)
if [ -n "$misnumbered" ]; then
  echo "sqlc-outputs: SQLite queries with a numbered argument after a sqlc.slice (put the slice last):" >&2
  echo "$misnumbered" | sed 's/^/  /' >&2
  status=1
fi
exit $status
