#!/usr/bin/env bash
# Chaos probes: the program meets limits, faults and interruptions as a user's machine
# would give them, and must end with a clear message (exit 2), never a panic or an abort
# (134), never a corrupt output. Prints one line per probe, then `N/N probes hold`; exits
# non-zero when one does not hold.
#
#   bash ci/chaos.sh          every probe: the shell probes below, then the tests that
#                             probe tool faults, signals, locks, resume and kills (~3 min)
#   bash ci/chaos.sh --quick  the shell probes only (~20 s; ci/test.sh runs these, and the
#                             whole test suite already holds the rest)
#
# Needs nvdisasm and ptxas (bash ci/install-cuda-tools.sh). Disk-full and read-only probes
# use a small tmpfs when this user may mount one (root), else /dev/full and chmod.
set -uo pipefail
cd "$(dirname "$0")/.."
QUICK=0
[ "${1:-}" = --quick ] && QUICK=1
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --release -q -p sass-harness || exit 1
B="$CARGO_TARGET_DIR/release/sass-harness"
WORK="$(mktemp -d)"
cleanup() {
    # Probes run in subshells: find their mounts rather than remember them.
    awk -v w="$WORK/" 'index($2, w) == 1 { print $2 }' /proc/mounts | while read -r m; do umount "$m"; done
    chmod -R u+w "$WORK" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
START=$SECONDS
HELD=0
TOTAL=0

# probe NAME FUNCTION [ARGS]: runs the function (its output kept for a broken probe).
probe() {
    local name=$1 log="$WORK/probe-$TOTAL.log"
    shift
    TOTAL=$((TOTAL + 1))
    if ("$@") >"$log" 2>&1; then
        HELD=$((HELD + 1))
        echo "hold    $name"
    else
        echo "BROKEN  $name"
        tail -n 20 "$log" | sed 's/^/        /'
    fi
}

# refused CODE PATTERN CMD...: CMD exits CODE, its stderr holds PATTERN, and it neither
# panics nor aborts.
refused() {
    local code=$1 pattern=$2 err="$WORK/stderr.$$.$RANDOM" got
    shift 2
    "$@" >/dev/null 2>"$err"
    got=$?
    cat "$err"
    [ "$got" = "$code" ] || { echo "exit $got, want $code"; return 1; }
    grep -q -- "$pattern" "$err" || { echo "stderr lacks '$pattern'"; return 1; }
    ! grep -q -e panicked -e "memory allocation of" "$err" || { echo "panic or allocation failure"; return 1; }
}

# A fake nvdisasm that answers --version as the real one and runs SCRIPT otherwise.
fake_nvdisasm() {
    local real dir=$WORK/fake-$RANDOM
    real=$(find .tools/cuda -name nvdisasm -type f -perm -u+x | head -n 1)
    [ -n "$real" ] || real=$(command -v nvdisasm) || { echo "nvdisasm missing: bash ci/install-cuda-tools.sh" >&2; return 1; }
    mkdir -p "$dir"
    printf '#!/bin/sh\nif [ "$1" = --version ]; then exec %s --version; fi\n%s\n' "$real" "$1" >"$dir/nvdisasm"
    chmod +x "$dir/nvdisasm"
    echo "$dir/nvdisasm"
}

# A small tmpfs at DIR (size SIZE, extra mount options OPTS); fails when not allowed.
tmpfs_at() {
    mkdir -p "$1" && mount -t tmpfs -o "size=$2${3:+,$3}" tmpfs "$1" 2>/dev/null
}

huge_random_under_ulimit() {
    refused 2 "memory budget of" bash -c "ulimit -v 3000000 && exec '$B' validate corpus/isa --random 100000000 --out '$WORK/mem'" &&
        [ ! -e "$WORK/mem/INCOMPLETE" ]
}

small_random_under_ulimit() {
    bash -c "ulimit -v 3000000 && exec '$B' validate corpus/isa/sm90 --random 100 --out '$WORK/mem-small'" >/dev/null &&
        [ -s "$WORK/mem-small/findings.jsonl" ] && [ ! -e "$WORK/mem-small/INCOMPLETE" ]
}

budget_flag_and_variable() {
    refused 2 "memory budget of 64.0 MiB" "$B" validate corpus/isa --random 1000000 --memory-budget 64M --out "$WORK/bud" &&
        refused 2 "not a size" env SASS_HARNESS_MEMORY_BUDGET=lots "$B" validate corpus/isa --out "$WORK/bud"
}

disk_full() {
    local out=$WORK/full/o
    if ! tmpfs_at "$WORK/full" 32k; then
        mkdir -p "$out" && ln -s /dev/full "$out/findings.jsonl"
    fi
    refused 2 "No space left on device" "$B" validate corpus/isa --random 20 --out "$out" &&
        [ -e "$out/INCOMPLETE" ] && [ ! -e "$out/summary.md" ]
}

read_only_output() {
    if tmpfs_at "$WORK/ro" 1m ro; then
        refused 2 "Read-only file system" "$B" validate corpus/isa --random 20 --out "$WORK/ro/o"
    else
        mkdir -p "$WORK/ro" && chmod 555 "$WORK/ro"
        refused 2 "Permission denied" "$B" validate corpus/isa --random 20 --out "$WORK/ro/o"
    fi
}

crashing_nvdisasm() {
    local fake
    fake=$(fake_nvdisasm 'echo "internal error" >&2; kill -SEGV $$') &&
        refused 2 "killed by signal 11" env NVDISASM="$fake" "$B" validate corpus/isa --random 20 --out "$WORK/crash"
}

hung_nvdisasm() {
    local fake t=$SECONDS
    fake=$(fake_nvdisasm 'sleep 100000 & exec sleep 100000') &&
        refused 2 "timed out after 0.5 s" env NVDISASM="$fake" "$B" validate corpus/isa --random 20 --tool-timeout 0.5 --out "$WORK/hang" &&
        [ $((SECONDS - t)) -lt 30 ]
}

concurrent_run() {
    mkdir -p "$WORK/busy"
    flock "$WORK/busy/.sass-harness.lock" sleep 30 &
    local holder=$!
    sleep 0.3
    refused 2 "in use by another sass-harness run" "$B" validate corpus/isa --random 20 --out "$WORK/busy"
    local r=$?
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
    return $r
}

sigint_ends_cleanly() {
    local fake pid
    fake=$(fake_nvdisasm 'exec sleep 100000') || return 1
    NVDISASM="$fake" "$B" validate corpus/isa --random 20 --out "$WORK/int" >/dev/null 2>"$WORK/int.err" &
    pid=$!
    sleep 1.5
    kill -INT "$pid"
    wait "$pid"
    local code=$?
    cat "$WORK/int.err"
    [ "$code" = 2 ] && ! grep -q panicked "$WORK/int.err" && [ -z "$(ls -A "$WORK/int" | grep staging)" ]
}

family_ptx_target() {
    local dir=$WORK/ptx
    mkdir -p "$dir"
    printf '.version 8.8\n.target %s\n.address_size 64\n.visible .entry k()\n{\n    ret;\n}\n' sm_100f >"$dir/family.ptx"
    printf '.version 8.8\n.target %s\n.address_size 64\n.visible .entry k()\n{\n    ret;\n}\n' sm_90 >"$dir/plain.ptx"
    "$B" realcode corpus/isa --ptx "$dir" --out "$WORK/ptx-out" | tee "$WORK/ptx.out" &&
        grep -q "skipped family.ptx for SM90: ptxas: " "$WORK/ptx.out" && grep -q "real code: 3 kernels" "$WORK/ptx.out"
}

# tests TARGET [FILTER...]: the tests of TARGET (`lib` or an integration test) whose
# names hold a FILTER (all without one) run, at least one, and pass.
tests() {
    local target=(--test "$1") out
    [ "$1" = lib ] && target=(--lib)
    shift
    out=$(cargo test --release -q -p sass-harness "${target[@]}" -- "$@" 2>&1)
    echo "$out" | tail -n 30
    echo "$out" | grep -Eq "test result: ok\. [1-9][0-9]* passed"
}

probe "--random 100000000 under ulimit -v 3000000: refused up front" huge_random_under_ulimit
probe "a small --random under ulimit -v 3000000 runs" small_random_under_ulimit
probe "--memory-budget / SASS_HARNESS_MEMORY_BUDGET set and checked" budget_flag_and_variable
probe "disk full mid-run: clear error, run marked incomplete" disk_full
probe "read-only output folder: clear error" read_only_output
probe "nvdisasm crashing (SIGSEGV): clear error" crashing_nvdisasm
probe "nvdisasm hanging: killed after --tool-timeout" hung_nvdisasm
probe "a second run into a locked folder is refused" concurrent_run
probe "SIGINT mid-run: exit 2, no panic, staging removed" sigint_ends_cleanly
probe "PTX with a family .target: skipped where ptxas refuses it" family_ptx_target
if [ "$QUICK" = 0 ]; then
    probe "tests: memory budget, PTX targets, discover killed and rerun (reliability)" tests reliability
    probe "tests: tool faults, hangs, lock + SIGINT, resume (cli)" tests cli tool_faults hung locked resume
    probe "tests: nvdisasm timeouts, crashes, retries, floods" tests lib oracle::nvdisasm::tests
    probe "tests: process groups killed on timeout, pipes held" tests lib oracle::process
    probe "tests: ptxas hung, refusals; tool version probe times out" tests lib hung_ptxas refusals version_probe_times_out
    probe "tests: output folder lock and whole writes" tests lib output::tests
    probe "tests: exec child faults, hangs, crashes become traps" tests exec child_protocol
    probe "tests: discovery shards, merge and resume" tests discover shards_merge_and_resume
fi
echo "$HELD/$TOTAL probes hold ($((SECONDS - START)) s)"
[ "$HELD" = "$TOTAL" ]
