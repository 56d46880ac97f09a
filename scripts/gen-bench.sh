#!/usr/bin/env bash
# Times leasegen on the example package and on a synthetic package with 100
# annotated payloads, cold (empty build cache) and warm (median of 5), next
# to stringer on a package of 100 types, in the same run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/leasegen" "$root/cmd/leasegen"
(cd "$root" && go build -o "$work/stringer" golang.org/x/tools/cmd/stringer)

# 100 payloads in one package of its own module.
mkdir -p "$work/synth" "$work/enums"
printf 'module example.com/synth\n\ngo 1.26\n' > "$work/synth/go.mod"
{
  echo 'package synth'
  echo
  echo 'import "time"'
  for i in $(seq 0 99); do
    printf '\n// P%dPayload is task %d.\n//\n//leasegen:task priority=%d max_attempts=3 timeout=1m\n' "$i" "$i" "$((i % 7))"
    printf 'type P%dPayload struct {\n\tID    string    `json:"id"`\n\tAt    time.Time `json:"at"`\n\tItems []int     `json:"items"`\n}\n' "$i"
  done
} > "$work/synth/payloads.go"

# 100 enum types for stringer.
printf 'module example.com/enums\n\ngo 1.26\n' > "$work/enums/go.mod"
types=""
{
  echo 'package enums'
  echo
  echo 'import "time"'
  echo
  echo '// Timeout uses the same import as the payloads, so both generators load it.'
  echo 'var Timeout = time.Minute'
  for i in $(seq 0 99); do
    printf '\n// T%d is enum %d.\ntype T%d int\n\nconst (\n\tT%dA T%d = iota\n\tT%dB\n\tT%dC\n)\n' "$i" "$i" "$i" "$i" "$i" "$i" "$i"
    types="$types,T$i"
  done
} > "$work/enums/enums.go"
types=${types#,}

ms() { date +%s%N; }
# time_cmd DIR CMD...: prints milliseconds of one run.
time_cmd() {
  local dir=$1; shift
  local start end
  start=$(ms)
  (cd "$dir" && "$@" >/dev/null)
  end=$(ms)
  echo $(((end - start) / 1000000))
}
cold() {
  local dir=$1; shift
  GOCACHE=$(mktemp -d -p "$work") time_cmd "$dir" "$@"
}
warm() {
  local dir=$1; shift
  time_cmd "$dir" "$@" >/dev/null # fill the cache
  local runs=()
  for _ in 1 2 3 4 5; do runs+=("$(time_cmd "$dir" "$@")"); done
  printf '%s\n' "${runs[@]}" | sort -n | sed -n 3p
}

printf '%-44s %10s %10s\n' "generator, package" "cold ms" "warm ms"
row() {
  local name=$1 dir=$2; shift 2
  printf '%-44s %10s %10s\n' "$name" "$(cold "$dir" "$@")" "$(warm "$dir" "$@")"
}
row "leasegen, example (3 tasks)" "$root/testdata/example/billing" "$work/leasegen" -output "$work/example_gen.go"
row "leasegen, synthetic (100 tasks)" "$work/synth" "$work/leasegen"
row "stringer, synthetic (100 types)" "$work/enums" "$work/stringer" "-type=$types"
