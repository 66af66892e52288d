#!/usr/bin/env bash
# A stand-in nvdisasm that runs the real one twice, without and with `-ndf` (no dataflow
# analysis), logs whether output, errors and status were byte-identical, and answers as
# the run asked for. How `-ndf` on raw-mode runs was checked (docs/measurements.md):
#
#   NVDISASM=$PWD/tools/ndf-compare.sh NDF_LOG=/tmp/ndf.log \
#       sass-harness validate corpus/isa-discovered/sm90 --random 300 --seed 5 --out /tmp/o
#   cut -d' ' -f1 /tmp/ndf.log | sort | uniq -c      # "same" or "DIFF" per run
#
# NDF_REAL names the real nvdisasm (default: the project's, from ci/install-cuda-tools.sh).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
real=${NDF_REAL:-$here/.tools/cuda/nvidia/cu13/bin/nvdisasm}
log=${NDF_LOG:-/tmp/ndf-compare.log}
# --version and the like: answered once, by the real one.
case "${1:-}" in --version | -V | --help | -h) exec "$real" "$@" ;; esac
# The arguments without -ndf, and whether it was asked for: the answer is the run asked
# for.
args=() asked=a
for x in "$@"; do
    case "$x" in -ndf | --no-dataflow) asked=b ;; *) args+=("$x") ;; esac
done
a=$(mktemp) b=$(mktemp)
trap 'rm -f "$a" "$a.err" "$b" "$b.err"' EXIT
"$real" "${args[@]}" >"$a" 2>"$a.err"
sa=$?
"$real" -ndf "${args[@]}" >"$b" 2>"$b.err"
sb=$?
if [ "$sa" = "$sb" ] && cmp -s "$a" "$b" && cmp -s "$a.err" "$b.err"; then
    echo "same $(wc -l <"$a") lines: ${args[*]}" >>"$log"
else
    echo "DIFF status $sa/$sb: ${args[*]}" >>"$log"
fi
out=${!asked}
cat "$out"
cat "$out.err" >&2
[ "$asked" = a ] && exit "$sa"
exit "$sb"
