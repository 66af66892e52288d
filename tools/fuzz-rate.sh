#!/usr/bin/env bash
# Execs per CPU-second of a built fuzz target, set-up left out (docs/testing.md, Speed).
#
#   bash tools/fuzz-rate.sh BIN RUNS [LIBFUZZER_ARGS...]
#   bash tools/fuzz-rate.sh fuzz/target/x86_64-unknown-linux-gnu/release/roundtrip 300000
#
# Runs BIN twice from a fresh, empty corpus folder with the committed seeds
# (corpus/fuzz/<BIN's name>) as a second one: with -runs=0 (loading the spec and running
# the seeds: the set-up) and with -runs=RUNS. The rate is the runs the second makes past
# the first over the CPU seconds (user + system, /usr/bin/time) it takes past the first:
# a loaded machine stretches wall time, not CPU time. -seed=1: both take the same inputs.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ $# -lt 2 ]]; then
    echo "usage: $0 BIN RUNS [LIBFUZZER_ARGS...]" >&2
    exit 2
fi
bin=$1
runs=$2
shift 2
seeds=corpus/fuzz/$(basename "$bin")
[[ -d $seeds ]] || { echo "no seed folder $seeds" >&2; exit 2; }

# One run: prints "RUNS CPU_SECONDS".
one() {
    local dir log
    dir=$(mktemp -d)
    log=$(mktemp)
    /usr/bin/time -f '%U %S' -o "$log.time" "$bin" -seed=1 -runs="$1" "${@:2}" "$dir" "$seeds" >"$log" 2>&1 || {
        tail -20 "$log" >&2
        exit 1
    }
    local done_runs
    done_runs=$(grep -o 'Done [0-9]* runs' "$log" | grep -o '[0-9]*' || true)
    [[ -n $done_runs ]] || done_runs=$(grep -o '#[0-9]*' "$log" | tail -1 | tr -d '#')
    echo "$done_runs $(awk '{print $1 + $2}' "$log.time")"
    rm -rf "$dir" "$log" "$log.time"
}

read -r r0 c0 < <(one 0 "$@")
read -r r1 c1 < <(one "$runs" "$@")
awk -v r0="$r0" -v c0="$c0" -v r1="$r1" -v c1="$c1" 'BEGIN {
    printf "set-up: %d runs, %.2f CPU s; measured: %d runs, %.2f CPU s; %.0f execs per CPU-second\n", r0, c0, r1 - r0, c1 - c0, (r1 - r0) / (c1 - c0)
}'
