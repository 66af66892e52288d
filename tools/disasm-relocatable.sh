#!/usr/bin/env bash
# `disasm` against nvdisasm on relocatable cubins: every `corpus/ptx*` file compiled with
# `ptxas -c` for SM90, SM100 and SM120 (where its .target allows; an sm_NNa target for
# its own architecture only), each cubin's instruction lines compared, and the totals
# printed (docs/commands.md, disasm). Words the spec does not decode print as UNDECODED
# and count as differing; they are counted apart.
#
#   bash tools/disasm-relocatable.sh [BIN]    # BIN: target/release/sass-harness
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/sass-harness}
export PATH=$PWD/.tools/cuda/nvidia/cu13/bin:$PATH
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The instruction lines of a listing's .text sections, trailing blanks cut.
lines() { awk '/^[ \t]*\.section/{t=($2 ~ /^\.text\./)} t && /^[ \t]*\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]+\*\//{sub(/[ \t]+$/,""); print}' "$1"; }
cubins=0 total=0 differ=0 undecoded=0
for f in corpus/ptx*/*.ptx; do
    b=$(basename "$f" .ptx)
    for a in 90 100 120; do
        c=$dir/$b-$a.cubin
        ptxas -arch=sm_$a -c "$f" -o "$c" 2>/dev/null || ptxas -arch=sm_${a}a -c "$f" -o "$c" 2>/dev/null || continue
        nvdisasm "$c" >"$c.nv"
        "$bin" disasm "$c" >"$c.ours" 2>/dev/null || true
        lines "$c.nv" >"$c.a"
        lines "$c.ours" >"$c.b"
        n=$(wc -l <"$c.a")
        d=$(diff "$c.a" "$c.b" | grep -c '^>' || true)
        u=$(diff "$c.a" "$c.b" | grep '^>' | grep -c UNDECODED || true)
        cubins=$((cubins + 1)) total=$((total + n)) differ=$((differ + d)) undecoded=$((undecoded + u))
        [ "$d" -gt "$u" ] && echo "$c: $((d - u)) decoded line(s) differ" && { diff "$c.a" "$c.b" | grep -v UNDECODED | head -6 || true; }
    done
done
echo "$cubins relocatable cubins, $total instruction lines: $((total - differ)) identical to nvdisasm, $undecoded undecoded, $((differ - undecoded)) other"
