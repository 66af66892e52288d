#!/usr/bin/env bash
# The real-code input of the `realcode/assemble` bench: every `corpus/ptx*/*.ptx` that
# ptxas compiles for SM90 (`-arch=sm_90`, else `sm_90a`), listed by `sass-harness disasm`,
# one instruction text a line (addresses, labels and section lines dropped, and lines
# with relocated operands, `` `(…)`` and `32@lo(…)`, which no word reads as, and
# BRX's `(*"BRANCH_TARGETS …"*)`, which the listing reader takes off), in file order.
#
#   bash tools/bench-listing.sh > corpus/bench/sm90-listing.txt
#
# Needs ptxas (ci/install-cuda-tools.sh) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PWD/.tools/cuda/nvidia/cu13/bin:$PATH
cargo build --release -q
bin=${CARGO_TARGET_DIR:-target}/release/sass-harness
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ptx in corpus/ptx*/*.ptx; do
    out=$tmp/$(echo "$ptx" | tr / _).cubin
    ptxas -arch=sm_90 "$ptx" -o "$out" 2>/dev/null || ptxas -arch=sm_90a "$ptx" -o "$out" 2>/dev/null || continue
    "$bin" disasm "$out" | sed -n 's|^ *\/\*[0-9a-f]*\*\/ *||p' | grep -vE '`|@(lo|hi)\(|\(\*"'
done
