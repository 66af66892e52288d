#!/usr/bin/env bash
# The assembler's instructions and cache misses per text over the bench's draw (the 4 096
# texts of `discovered/assemble`), counted by valgrind: deterministic, where the bench's
# timings move by a third between identical runs on a shared machine (docs/measurements.md).
#
#   bash tools/asm-instructions.sh                 # this tree, built in release
#   bash tools/asm-instructions.sh BIN             # a saved target/release/examples/asm_equiv
#   ASM_COLLECT='*InstRef*parse*' bash tools/asm-instructions.sh   # the text reader alone
#   ASM_CACHES=1 bash tools/asm-instructions.sh    # also L1 and 1 MiB last-level misses (cachegrind)
#   ASM_BRANCHES=1 bash tools/asm-instructions.sh  # also mispredicted branches, over the draw and
#                                                  # with each text assembled 5 and 25 times in a row
#
# Each count is the difference of two runs (5 and 25 passes over the texts) over the 20
# passes between them: the set-up (loading the spec, indexing the forms) falls out.
# Needs valgrind. About a minute a count.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [ -z "$bin" ]; then
    cargo build --release --example asm_equiv -q
    bin=${CARGO_TARGET_DIR:-target}/release/examples/asm_equiv
fi
texts=4096 low=5 high=25
per_text() { awk -v a="$1" -v b="$2" -v n=$(((high - low) * texts)) 'BEGIN { printf "%.1f\n", (b - a) / n }'; }
# The "Collected" total of callgrind, or one event's total of cachegrind.
collected() {
    local out=$1 passes=$2
    valgrind --tool=callgrind --callgrind-out-file="$out" ${ASM_COLLECT:+--toggle-collect="$ASM_COLLECT"} "$bin" passes "$passes" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
a=$(collected "$tmp/a" $low)
b=$(collected "$tmp/b" $high)
echo "instructions a text${ASM_COLLECT:+ (in $ASM_COLLECT)}: $(per_text "$a" "$b")"
if [ -n "${ASM_CACHES:-}" ]; then
    for p in $low $high; do
        valgrind --tool=cachegrind --cache-sim=yes --LL=1048576,16,64 --cachegrind-out-file="$tmp/c$p" "$bin" passes "$p" >/dev/null 2>&1
    done
    # Event totals from the summary line: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw.
    sums() { sed -n 's/^summary: //p' "$1"; }
    read -r -a lo <<<"$(sums "$tmp/c$low")"
    read -r -a hi <<<"$(sums "$tmp/c$high")"
    echo "L1 instruction misses a text: $(per_text "${lo[1]}" "${hi[1]}")"
    echo "L1 data misses a text: $(per_text $((lo[4] + lo[7])) $((hi[4] + hi[7])))"
    echo "last-level (1 MiB) data misses a text: $(per_text $((lo[5] + lo[8])) $((hi[5] + hi[8])))"
fi
if [ -n "${ASM_BRANCHES:-}" ]; then
    # Cachegrind's simulated predictor (a plain global-history one, cruder than a real
    # CPU's): the counts compare builds and draws, not this machine's own. The same number
    # of assemblies both ways: `passes N` over the draw, `passes 1 N` each text N times.
    branches() {
        valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes --cachegrind-out-file="$tmp/b" "$bin" passes "$@" >/dev/null 2>&1
        sed -n 's/^summary: //p' "$tmp/b"
    }
    # Event totals: Ir Bc Bcm Bi Bim.
    read -r -a lo <<<"$(branches $low)"
    read -r -a hi <<<"$(branches $high)"
    echo "conditional branches a text: $(per_text "${lo[1]}" "${hi[1]}")"
    echo "mispredicted a text, over the draw: $(per_text "${lo[2]}" "${hi[2]}") conditional, $(per_text "${lo[4]}" "${hi[4]}") indirect"
    read -r -a lo <<<"$(branches 1 $low)"
    read -r -a hi <<<"$(branches 1 $high)"
    echo "mispredicted a text, each text $low and $high times in a row: $(per_text "${lo[2]}" "${hi[2]}") conditional, $(per_text "${lo[4]}" "${hi[4]}") indirect"
fi
