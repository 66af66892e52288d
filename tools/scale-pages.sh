#!/usr/bin/env bash
# Writes N copies of the SM90 DFMA seed page (9 variants each) into OUT, each copy's variant
# keys suffixed _000, _001, … so that every variant is its own: the scale input of
# docs/measurements.md ("scale, 1 000 copies of the DFMA page"). Usage:
#   bash tools/scale-pages.sh 1000 /tmp/scale
#   /usr/bin/time -v sass-harness validate /tmp/scale --random 1 --out /tmp/scale-out
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?usage: tools/scale-pages.sh N OUT}
out=${2:?usage: tools/scale-pages.sh N OUT}
page=corpus/isa/sm90/003_ab0fe5b2f4c60028.txt
width=$(( ${#n} > 3 ? ${#n} : 3 ))
mkdir -p "$out"
for ((i = 0; i < n; i++)); do
  suffix=$(printf "_%0${width}d" "$i")
  sed "s/^key: \(.*\)$/key: \1$suffix/" "$page" > "$out/dfma$suffix.txt"
done
echo "wrote $n pages ($((n * $(grep -c '^key:' "$page"))) variants) to $out"
