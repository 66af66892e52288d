#!/usr/bin/env bash
# Runs one cargo-fuzz target (or all of them) for a fixed time, seeded from corpus/fuzz/.
#
#   bash ci/fuzz.sh TARGET [SECONDS] [-- LIBFUZZER_ARGS...]
#   bash ci/fuzz.sh all 60
#
# TARGET: roundtrip | decode | parse_page | asm | cubin | all.  SECONDS defaults to 60.
# Needs the nightly toolchain and cargo-fuzz (cargo install cargo-fuzz).
#
# The committed seeds in corpus/fuzz/TARGET are passed as a second, read-only corpus
# directory; what libFuzzer finds goes to the first one, fuzz/target/corpus/TARGET
# (ignored by git), so a run never writes into the repository. Crashes land in
# fuzz/artifacts/TARGET/ (ignored too); once the bug is fixed, copy the input into
# corpus/fuzz/TARGET/ as a regression seed.
#
# The same run by hand, from the repository root:
#   cargo +nightly fuzz run roundtrip fuzz/target/corpus/roundtrip corpus/fuzz/roundtrip -- -max_total_time=60
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

toolchain=${FUZZ_TOOLCHAIN:-+nightly}

if [[ $target == all ]]; then
    targets=$(cargo "$toolchain" fuzz list)
else
    targets=$target
fi

for t in $targets; do
    if [[ ! -d corpus/fuzz/$t ]]; then
        echo "no seed corpus corpus/fuzz/$t (targets: $(cargo "$toolchain" fuzz list | tr '\n' ' '))" >&2
        exit 2
    fi
    mkdir -p "fuzz/target/corpus/$t"
    echo "== fuzz $t for ${seconds}s"
    cargo "$toolchain" fuzz run "$t" "fuzz/target/corpus/$t" "corpus/fuzz/$t" -- -max_total_time="$seconds" "$@"
done
