#!/usr/bin/env bash
# Runs the test binaries of `cargo test --workspace --release` several at a time (TEST_JOBS,
# default 2), the longest first, instead of one after another: most slow tests are one
# chain of nvdisasm/ptxas runs that keeps one core busy, so one binary at a time leaves
# the other core idle (docs/testing.md, Times). Every target `cargo test` runs is run:
# the library's and the program's unit tests, each file of harness/tests, the doc tests.
#
#   bash ci/tests.sh                      # the fast set (what `cargo test` runs)
#   bash ci/tests.sh --include-ignored    # the fast and the slow set, in one pass
#   bash ci/tests.sh --ignored            # the slow set
#
# Arguments go to every test binary. Each binary's output is printed whole when it ends;
# the script fails when one fails (after all ran), naming it. One file's tests alone:
# `cargo test --release --test NAME` (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
# Build every test target once (examples too, as `cargo test` does), then only run.
cargo test --workspace --release --no-run -q
# Longest first (CPU seconds measured with this script; docs/testing.md), then the rest
# alphabetically.
first=(discover validate crosscheck reliability exec precision offline relations)
targets=()
for t in "${first[@]}"; do
    if [ -f "harness/tests/$t.rs" ]; then targets+=("--test $t"); fi
done
targets+=(--lib)
for f in harness/tests/*.rs; do
    t=$(basename "$f" .rs)
    [[ " ${first[*]} " == *" $t "* ]] || targets+=("--test $t")
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
    # shellcheck disable=SC2086 # $sel is "--test NAME": two words.
    took=$({ time cargo test --release -q -p sass-harness $sel -- "$@" >"$log" 2>&1 || echo "status $?" >"$log.status"; } 2>&1)
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
