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
exit $status
