#!/usr/bin/env bash
# Runs one cargo-fuzz target (or all of them) for a fixed time, seeded from corpus/fuzz/,
# then prints how many of the spec's variants the run's corpus reaches.
#
#   bash ci/fuzz.sh TARGET [SECONDS] [-- LIBFUZZER_ARGS...]
#   bash ci/fuzz.sh all 60
#   bash ci/fuzz.sh roundtrip 600 -- -fork=8 -ignore_crashes=1   # a bigger machine
#
# TARGET: roundtrip | decode | parse_page | asm | cubin | all.  SECONDS defaults to 60.
# Needs cargo-fuzz (cargo install cargo-fuzz --version 0.13.2 --locked) and the stable
# toolchain only. No sanitizer by default: what the targets run is safe Rust (the library
# forbids `unsafe` in every module they reach; harness/src/lib.rs), where ASan can find
# nothing a panic would not, and it costs 3-4x the execs (docs/testing.md, Speed).
# Debug assertions stay on (overflow checks catch shift and width bugs in the codec).
# FUZZ_SANITIZER=address builds with AddressSanitizer (for unsafe code or a suspected
# memory bug): its -Zsanitizer flag is let through the stable compiler with
# RUSTC_BOOTSTRAP=1 (cargo-fuzz treats that as nightly). FUZZ_TOOLCHAIN=+nightly uses
# nightly instead.
# No comparison tracing by default (cargo fuzz --no-trace-compares): an input names its
# values through mode bytes and raw fields (docs/testing.md, Inputs), not magic numbers a
# comparison would reveal; the hooks cost a third of an exec and a 60 s run reaches the
# same coverage without them. FUZZ_TRACE_COMPARES=1 puts them back.
# libFuzzer runs with -reduce_inputs=0 unless told otherwise: inputs are a few dozen
# bytes, and each reduction rewrites a corpus file (a quarter of a short run's time).
# SASS_HARNESS_FUZZ_SPEC=dir1:dir2 fuzzes other page folders (default: corpus/isa-discovered
# and corpus/isa, every architecture).
#
# The committed seeds in corpus/fuzz/TARGET are passed as a second, read-only corpus
# directory; what libFuzzer finds goes to the first one, fuzz/target/corpus/TARGET
# (ignored by git), so a run never writes into the repository. Crashes land in
# fuzz/artifacts/TARGET/ (ignored too); `sass-harness crosscheck` replays both.
#
# The coverage line counts the variants whose words the inputs of both folders make the
# target build (sass_harness::fuzz::words; harness/examples/fuzz_corpus.rs); libFuzzer's
# in-memory corpus is those two folders. FUZZ_MIN_COVERAGE=99 makes a lower count fail.
#
# The same run by hand, from the repository root:
#   cargo fuzz run -s none --no-trace-compares roundtrip fuzz/target/corpus/roundtrip corpus/fuzz/roundtrip -- -max_total_time=60 -reduce_inputs=0
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ $# -lt 1 ]]; then
    echo "usage: $0 TARGET|all [SECONDS] [-- LIBFUZZER_ARGS...]" >&2
    exit 2
fi
target=$1
shift
seconds=60
if [[ $# -gt 0 && $1 != "--" ]]; then
    seconds=$1
    shift
fi
if [[ $# -gt 0 && $1 == "--" ]]; then
    shift
fi

toolchain=()
if [[ -n ${FUZZ_TOOLCHAIN:-} ]]; then
    toolchain=("$FUZZ_TOOLCHAIN")
fi
sanitizer=${FUZZ_SANITIZER:-none}
build_flags=(-s "$sanitizer")
if [[ ${FUZZ_TRACE_COMPARES:-0} != 1 ]]; then
    build_flags+=(--no-trace-compares)
fi
# The caller's -reduce_inputs wins (libFuzzer takes the last of a flag given twice).
fuzzer_flags=(-reduce_inputs=0)
if [[ $sanitizer != none ]] && ! rustc "${toolchain[@]}" -V | grep -q -- -nightly; then
    export RUSTC_BOOTSTRAP=1
fi

if [[ $target == all ]]; then
    targets=$(cargo "${toolchain[@]}" fuzz list)
else
    targets=$target
fi

# A target that crashes does not stop the others; the script fails at the end.
failed=()
for t in $targets; do
    if [[ ! -d corpus/fuzz/$t ]]; then
        echo "no seed corpus corpus/fuzz/$t (targets: $(cargo "${toolchain[@]}" fuzz list | tr '\n' ' '))" >&2
        exit 2
    fi
    mkdir -p "fuzz/target/corpus/$t"
    echo "== fuzz $t for ${seconds}s (sanitizer: $sanitizer)"
    # The fuzz crate is its own workspace and builds into fuzz/target: a CARGO_TARGET_DIR
    # set for the main workspace would rebuild every crate with sanitizer flags there.
    if ! env -u CARGO_TARGET_DIR cargo "${toolchain[@]}" fuzz run "${build_flags[@]}" "$t" "fuzz/target/corpus/$t" "corpus/fuzz/$t" -- -max_total_time="$seconds" "${fuzzer_flags[@]}" "$@"; then
        echo "== fuzz $t: crashed or failed (inputs in fuzz/artifacts/$t)" >&2
        failed+=("$t")
    fi
    case $t in
        roundtrip | decode | asm)
            min=()
            if [[ -n ${FUZZ_MIN_COVERAGE:-} ]]; then
                min=(--min "$FUZZ_MIN_COVERAGE")
            fi
            if ! (unset RUSTC_BOOTSTRAP && cargo run --quiet --release -p sass-harness --example fuzz_corpus -- coverage "$t" "fuzz/target/corpus/$t" "corpus/fuzz/$t" "${min[@]}"); then
                failed+=("$t coverage")
            fi
            ;;
    esac
done
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz: failed: ${failed[*]}" >&2
    exit 1
fi
