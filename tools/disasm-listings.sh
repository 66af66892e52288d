#!/usr/bin/env bash
# `disasm` and `disasm --hex` against `nvdisasm` and `nvdisasm -hex` on whole code
# listings: for each cubin, the lines of its .text sections that `disasm` writes (labels
# `.L_x_N:`, instructions with their annotations, and with --hex each word's second
# line) must be nvdisasm's, line for line. Prints each cubin that differs, with its
# number of differing lines, and the totals (docs/commands.md, disasm).
#
#   bash tools/disasm-listings.sh [CUBIN...]   # default: target/tmp/ptxas-cache/*.data,
#                                              # every cubin the test suite compiled
# BIN=… picks the program (default target/release/sass-harness).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-target/release/sass-harness}
export PATH=$PWD/.tools/cuda/nvidia/cu13/bin:$PATH
[ $# -gt 0 ] || set -- target/tmp/ptxas-cache/*.data
# The .text sections' label, instruction and second-word lines, trailing blanks cut.
code() {
    python3 -c '
import re, sys
t = False
for l in sys.stdin:
    l = l.rstrip("\n")
    if l.startswith("\t.section"):
        t = l.split()[1].startswith(".text.")
    elif l.startswith("//----"):
        t = False
    elif t and re.match(r" +/\*[0-9a-f]{4,}\*/|\.L_x_\d+:$| +/\* 0x[0-9a-f]{16} \*/$", l):
        print(l.rstrip())'
}
for mode in plain hex; do
    ours=() theirs=()
    [ "$mode" = hex ] && ours=(--hex) theirs=(-hex)
    n=0 same=0
    for f in "$@"; do
        n=$((n + 1))
        d=$(diff <("$bin" disasm "${ours[@]}" "$f" 2>/dev/null | code) <(nvdisasm "${theirs[@]}" "$f" | code) | grep -c '^[<>]' || true)
        if [ "$d" = 0 ]; then same=$((same + 1)); else echo "$mode: $f: $d line(s) differ"; fi
    done
    echo "$mode: $same of $n cubins listed line for line as nvdisasm${theirs:+ ${theirs[*]}} lists them"
done
