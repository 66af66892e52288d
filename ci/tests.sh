#!/usr/bin/env bash
# Runs the tests of `cargo test --workspace --release` several at a time (TEST_JOBS, default
# 2), the longest first, instead of one after another: most slow tests are one chain of
# nvdisasm/ptxas runs that keeps one core busy, so one at a time leaves the other core
# idle (docs/testing.md, Times). Every test `cargo test` runs is run: the library's and the
# program's unit tests, each module of the integration suite (harness/tests/suite, one
# binary: `--test suite -- MODULE::`), the doc tests.
#
#   bash ci/tests.sh                      # the fast set (what `cargo test` runs)
#   bash ci/tests.sh --include-ignored    # the fast and the slow set, in one pass
#   bash ci/tests.sh --ignored            # the slow set
#
# Arguments go to every test run. Each run's output is printed whole when it ends; the
# script fails when one fails (after all ran), naming it. One module's tests alone:
# `cargo test --release --test suite -- discover::` (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
# Build every test target once (examples too, as `cargo test` does), then only run.
cargo test --workspace --release --no-run -q
# The longest first (wall seconds in .ci/run, docs/testing.md; `lib` is the library's
# unit tests), then the rest of the suite's modules alphabetically, each of which must be
# declared in main.rs: with two at a time, a long one started last would run alone.
first=(validate crosscheck offline discover lib reliability exec precision relations fill)
# Modules whose tests mostly wait on chains of nvdisasm runs that share processes (their
# oracle merges the requests of threads side by side: oracle/merge.rs): all their tests
# run at once, not one per core (docs/testing.md, Times).
export WIDE_MODULES="discover"
suite=harness/tests/suite
modules=()
for m in "${first[@]}"; do
    if [ "$m" = lib ] || [ -f "$suite/$m.rs" ]; then modules+=("$m"); fi
done
for f in "$suite"/*.rs; do
    m=$(basename "$f" .rs)
    [ "$m" = main ] && continue
    grep -qx "mod $m;" "$suite/main.rs" || { echo "ci/tests.sh: $f is not a module of $suite/main.rs: its tests would never run" >&2; exit 1; }
    [[ " ${first[*]} " == *" $m "* ]] || modules+=("$m")
done
targets=()
for m in "${modules[@]}"; do
    if [ "$m" = lib ]; then targets+=(--lib); else targets+=("--test suite -- $m::"); fi
done
targets+=("--bin sass-harness" --doc)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
export TESTS_LOGS=$logs
# One target: its output kept, then printed whole under a lock (no interleaving).
run_one() {
    local sel=$1 log status=0
    shift
    log="$TESTS_LOGS/$(echo "$sel" | tr -c 'a-z0-9\n' _).log"
    # Wall and CPU seconds (user + system, child processes such as nvdisasm included).
    local TIMEFORMAT="%0R s, CPU %0U + %0S s" took
    # A module's selection already holds the `--` (`--test suite -- NAME::`).
    local sep=--
    [[ "$sel" == *" -- "* ]] && sep=
    local m=${sel##* -- }
    [[ " $WIDE_MODULES " == *" ${m%::} "* ]] && export RUST_TEST_THREADS=${RUST_TEST_THREADS:-64}
    # shellcheck disable=SC2086 # $sel is "--test suite -- NAME::": several words.
    took=$({ time cargo test --release -q -p sass-harness $sel $sep "$@" >"$log" 2>&1 || echo "status $?" >"$log.status"; } 2>&1)
    [ -e "$log.status" ] && status=$(cut -d' ' -f2 "$log.status")
    {
        flock 9
        echo "== ci/tests.sh: $sel: $([ "$status" = 0 ] && echo ok || echo "FAILED (exit $status)") in $took"
        cat "$log"
        [ "$status" = 0 ] || echo "$sel" >>"$TESTS_LOGS/failed"
    } 9>"$TESTS_LOGS/lock"
}
export -f run_one
printf '%s\n' "${targets[@]}" | xargs -P "${TEST_JOBS:-2}" -I{} bash -c 'run_one "$@"' _ {} "$@"
if [ -s "$logs/failed" ]; then
    echo "ci/tests.sh: failed: $(tr '\n' ' ' <"$logs/failed")" >&2
    exit 1
fi
