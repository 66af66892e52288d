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
# How long the --random 100000000 run is watched before it is interrupted.
HUGE_SECONDS=20
[ "$QUICK" = 1 ] && HUGE_SECONDS=8
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
# With the examples, as `cargo test` builds it: an example brings in the dev-dependencies,
# whose features (serde's alloc, similar's inline, …) change the library's build, so a
# plain `cargo build` after `cargo test` (ci/test.sh) would compile it all again.
cargo build --release -q -p sass-harness --bins --examples || exit 1
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
    local name=$1 log="$WORK/probe-$TOTAL.log" t=$SECONDS
    shift
    TOTAL=$((TOTAL + 1))
    if ("$@") >"$log" 2>&1; then
        HELD=$((HELD + 1))
        echo "hold    $name ($((SECONDS - t)) s)"
    else
        echo "BROKEN  $name ($((SECONDS - t)) s)"
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

# --random 100000000 streams in slices: it would run for hours, so it is watched for
# HUGE_SECONDS under the limit, its peak memory read, and then interrupted.
huge_random_under_ulimit() {
    local pid hwm code
    bash -c "ulimit -v 3000000 && exec '$B' validate corpus/isa --random 100000000 --out '$WORK/mem'" >/dev/null 2>"$WORK/mem.err" &
    pid=$!
    sleep "$HUGE_SECONDS"
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
    kill -INT "$pid"
    wait "$pid"
    code=$?
    cat "$WORK/mem.err"
    echo "peak RSS after ${HUGE_SECONDS} s: ${hwm:-?} kB; exit $code after SIGINT"
    [ -n "$hwm" ] && [ "$hwm" -lt 524288 ] && [ "$code" = 2 ] && ! grep -q -e panicked -e "memory allocation of" "$WORK/mem.err"
}

# A budget below even one slice: refused before any work.
budget_below_one_slice() {
    refused 2 "memory budget of 100.0 MiB" bash -c "ulimit -v 3000000 && exec '$B' validate corpus/isa --random 100000000 --memory-budget 100M --out '$WORK/mem-tiny'" &&
        [ ! -e "$WORK/mem-tiny/INCOMPLETE" ]
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

# A corpus cubin and hostile variants of it: ELF header and .text section header
# fields rewritten (a python3 one-off: bash cannot parse ELF).
hostile_cubins() {
    local dir=$WORK/cubins name want o
    mkdir -p "$dir"
    python3 - corpus/fuzz/cubin/saxpy_sm90.cubin "$dir" <<'PY' || return 1
import struct, sys
good = open(sys.argv[1], "rb").read()
out = sys.argv[2]
shoff, = struct.unpack_from("<Q", good, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", good, 0x3a)
hdr = lambda i: shoff + i * shentsize
strtab, = struct.unpack_from("<Q", good, hdr(shstrndx) + 0x18)
name = lambda i: good[strtab + struct.unpack_from("<I", good, hdr(i))[0]:].split(b"\0")[0]
text = next(i for i in range(shnum) if name(i).startswith(b".text."))
other = next(i for i in range(1, shnum) if i != text and struct.unpack_from("<Q", good, hdr(i) + 0x20)[0] > 0)
h = hdr(text)
def patched(at, fmt, value):
    b = bytearray(good)
    struct.pack_into(fmt, b, at, value)
    return bytes(b)
size, = struct.unpack_from("<Q", good, h + 0x20)
cases = {
    "truncated.cubin": good[: len(good) // 2],
    "empty.cubin": b"",
    "header-only.cubin": good[:64],
    "ragged-size.cubin": patched(h + 0x20, "<Q", size - 8),
    "oversized.cubin": patched(h + 0x20, "<Q", 1 << 40),
    "zero-text.cubin": patched(h + 0x20, "<Q", 0),
    "overlapping.cubin": patched(h + 0x18, "<Q", struct.unpack_from("<Q", good, hdr(other) + 0x18)[0]),
    "headers-past-end.cubin": patched(0x28, "<Q", len(good) + 4096),
    "x86.elf": patched(0x12, "<H", 62),
}
for n, b in cases.items():
    open(f"{out}/{n}", "wb").write(b)
PY
    cp "$(command -v true)" "$dir/host-binary.elf"
    printf 'NOP ;\n' >"$dir/l.sass"
    for name in truncated.cubin empty.cubin header-only.cubin ragged-size.cubin oversized.cubin zero-text.cubin x86.elf host-binary.elf headers-past-end.cubin; do
        echo "-- $name"
        refused 2 "$name" "$B" disasm "$dir/$name" || return 1
        [ -z "$("$B" disasm "$dir/$name" 2>/dev/null)" ] || { echo "$name: partial listing"; return 1; }
        refused 2 "$name" "$B" asm --patch "$dir/$name" --out "$dir/out.cubin" "$dir/l.sass" || return 1
        [ ! -e "$dir/out.cubin" ] || { echo "$name: wrote an output"; return 1; }
    done
    # Overlapping sections may be read (the bytes are some instructions) or refused;
    # either way no panic, and a refused patch writes nothing.
    for name in overlapping.cubin; do
        "$B" disasm "$dir/$name" >/dev/null 2>"$dir/err"
        o=$?
        cat "$dir/err"
        { [ $o = 0 ] || [ $o = 2 ]; } && ! grep -q panicked "$dir/err" || { echo "$name: exit $o"; return 1; }
        "$B" asm --patch "$dir/$name" --out "$dir/out.cubin" "$dir/l.sass" >/dev/null 2>"$dir/err"
        o=$?
        cat "$dir/err"
        { [ $o = 0 ] || { [ $o = 2 ] && [ ! -e "$dir/out.cubin" ]; }; } && ! grep -q panicked "$dir/err" || { echo "$name: exit $o"; return 1; }
    done
    [ -z "$(find "$dir" -name '*.tmp-*')" ] || { echo "temporary files left"; return 1; }
}

# A 10 MB single-line listing, as a file and on stdin, under a 1 GB address-space limit.
huge_line_listing() {
    head -c 10485760 /dev/zero | tr '\0' R >"$WORK/big.sass"
    refused 2 "big.sass:1: .*line of 10485760 bytes" bash -c "ulimit -v 1000000 && exec '$B' asm --arch 90 --file '$WORK/big.sass'" &&
        refused 2 "<stdin>:1: .*line of 10485760 bytes" bash -c "ulimit -v 1000000 && exec '$B' asm --arch 90 - <'$WORK/big.sass'" &&
        refused 2 "big.sass:1: .*line of 10485760 bytes" bash -c "ulimit -v 1000000 && exec '$B' decode --arch 90 --file '$WORK/big.sass'"
}

# A binary file given as a listing and as words: named by file and line.
binary_listing() {
    head -c 200000 "$B" >"$WORK/binary.sass"
    refused 2 "binary.sass:1:" "$B" asm --arch 90 --file "$WORK/binary.sass" &&
        refused 2 "binary.sass:1:" "$B" decode --arch 90 --file "$WORK/binary.sass"
}

# 10 million words on stdin: decoded as they stream, in bounded memory (peak RSS printed).
decode_ten_million_words() {
    local lines rss
    lines=$(yes 000fe200000008000000df00ff017b82 | head -n 10000000 |
        /usr/bin/time -f "%M" -o "$WORK/decode.rss" "$B" decode --arch 90 - | wc -l)
    rss=$(tail -n 1 "$WORK/decode.rss")
    echo "decoded $lines lines; peak RSS $rss kB"
    [ "$lines" = 10000000 ] && [ "$rss" -lt 262144 ]
}

# Two discoveries into one --out: the second is refused while the first holds the folder.
concurrent_discover() {
    local fake pid r
    fake=$(fake_nvdisasm 'exec sleep 100000') || return 1
    NVDISASM="$fake" "$B" discover --arch 90 --opcode 0x2b --only DFMA --ptx none --out "$WORK/disc" --tool-timeout 20 >/dev/null 2>&1 &
    pid=$!
    sleep 1
    refused 2 "in use by another sass-harness run" "$B" discover --arch 90 --opcode 0x2b --only DFMA --ptx none --out "$WORK/disc"
    r=$?
    kill -INT "$pid"
    wait "$pid"
    return $r
}

# ---- crosscheck on hostile corpora (issue 23 item 5) ------------------------------
# A corpus folder with an empty file, a file past the 1 MiB cap, a non-UTF-8 name, a
# dangling symlink and a file being appended to meanwhile, under ulimit -v 3000000:
# each is replayed, skipped or reported in one line, and the run finishes (exit 0).
hostile_corpus() {
    local c="$WORK/corpus/roundtrip" pid r
    mkdir -p "$c"
    cp corpus/fuzz/roundtrip/* "$c/" 2>/dev/null
    : >"$c/empty"
    head -c 2000000 /dev/urandom >"$c/huge"
    printf 'x' >"$c/$(printf 'bad\377name')"
    ln -sf "$WORK/nowhere" "$c/dangling"
    (for _ in $(seq 200); do printf 'abcd' >>"$c/growing"; sleep 0.05; done) &
    pid=$!
    bash -c "ulimit -v 3000000 && exec '$B' crosscheck '$c' --out '$WORK/xc' --memory-budget 256M" >"$WORK/xc.log" 2>&1
    r=$?
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    tail -n 5 "$WORK/xc.log"
    [ $r = 0 ] && ! grep -q panicked "$WORK/xc.log" && grep -q "huge" "$WORK/xc/summary.md" && grep -q "dangling" "$WORK/xc/summary.md"
}
# ------------------------------------------------------------------------------------

# tests TARGET [FILTER...]: the tests of TARGET (`lib` or a module of the integration
# suite, harness/tests/suite) whose names hold a FILTER (the whole module without one; a
# suite filter starts with the module, `cli::resume`, since libtest matches a filter
# anywhere in `MODULE::NAME`) run, at least one, and pass.
tests() {
    local target=(--lib) out
    if [ "$1" != lib ]; then
        target=(--test suite)
        [ $# = 1 ] && set -- "$1" "$1::"
    fi
    shift
    out=$(cargo test --release -q -p sass-harness "${target[@]}" -- "$@" 2>&1)
    echo "$out" | tail -n 30
    echo "$out" | grep -Eq "test result: ok\. [1-9][0-9]* passed"
}

probe "--random 100000000 under ulimit -v 3000000: runs in bounded memory, SIGINT ends it" huge_random_under_ulimit
probe "a budget below one slice: refused up front" budget_below_one_slice
probe "a small --random under ulimit -v 3000000 runs" small_random_under_ulimit
probe "--memory-budget / SASS_HARNESS_MEMORY_BUDGET set and checked" budget_flag_and_variable
probe "disk full mid-run: clear error, run marked incomplete" disk_full
probe "read-only output folder: clear error" read_only_output
probe "nvdisasm crashing (SIGSEGV): clear error" crashing_nvdisasm
probe "nvdisasm hanging: killed after --tool-timeout" hung_nvdisasm
probe "a second run into a locked folder is refused" concurrent_run
probe "SIGINT mid-run: exit 2, no panic, staging removed" sigint_ends_cleanly
probe "PTX with a family .target: skipped where ptxas refuses it" family_ptx_target
probe "hostile cubins to disasm and asm --patch: clear errors, no partial output" hostile_cubins
probe "a 10 MB single-line listing: clear error in bounded memory" huge_line_listing
probe "a binary file as a listing or words: clear error naming file:line" binary_listing
probe "two discoveries into one --out: the second is refused" concurrent_discover
probe "crosscheck on a hostile corpus: each file replayed, skipped or reported" hostile_corpus
if [ "$QUICK" = 0 ]; then
    probe "10 million words on stdin to decode: bounded memory" decode_ten_million_words
    probe "tests: memory budget, PTX targets, discover killed and rerun (reliability)" tests reliability
    probe "tests: tool faults, hangs, lock + SIGINT, resume (cli)" tests cli cli::tool_faults cli::a_hung cli::output_folder_is_locked cli::resume
    probe "tests: nvdisasm timeouts, crashes, retries, floods" tests lib oracle::nvdisasm::tests
    probe "tests: process groups killed on timeout, pipes held" tests lib oracle::process
    probe "tests: ptxas hung, refusals; tool version probe times out" tests lib hung_ptxas refusals version_probe_times_out
    probe "tests: output folder lock and whole writes" tests lib output::tests
    probe "tests: exec child faults, hangs, crashes become traps" tests exec child_protocol
    probe "tests: discovery shards, merge and resume" tests discover shards_merge_and_resume
fi
echo "$HELD/$TOTAL probes hold ($((SECONDS - START)) s)"
[ "$HELD" = "$TOTAL" ]
