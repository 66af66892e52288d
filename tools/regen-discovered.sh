#!/usr/bin/env bash
# Regenerates corpus/isa-discovered/smNN for one architecture: discover from scratch, let
# `fix` correct what validation proves wrong, copy the pages, and write SUMMARY.md (ending
# with the warnings validation leaves, each with its reason), FIXES.md and the printing
# conventions fix stores (conventions.json); stops when fix leaves an error. Usage:
# tools/regen-discovered.sh 90 [WORK_DIR]  (RANDOM_WORDS: fix's random probe words per
# variant, default 1000; REUSE_DISCOVERY=1: keep WORK_DIR's discovery, fix and copy again).
# Needs the release build (BIN: another sass-harness binary), the CUDA tools and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=$1
work=${2:-/tmp/regen-sm$arch}
bin=${BIN:-target/release/sass-harness}
export PATH="$PWD/.tools/cuda/nvidia/cu13/bin:$PATH"
start=$(date +%s)
if [ -n "${REUSE_DISCOVERY:-}" ] && [ -d "$work/d/pages" ]; then
  # Only fix and copy again: the discovery in WORK_DIR is kept (and its time not counted).
  rm -rf "$work/f"
else
  rm -rf "$work"
  mkdir -p "$work"
  # The other architectures' committed pages seed the census last (`--seed-pages`): forms
  # they share that this architecture's census would not meet.
  borrowed=()
  for other in 90 100 120; do
    [ "$other" = "$arch" ] || borrowed+=(--seed-pages "corpus/isa-discovered/sm$other")
  done
  "$bin" discover --arch "$arch" --out "$work/d" "${borrowed[@]}" > "$work/discover.log" 2>&1
fi
mid=$(date +%s)
if ! "$bin" fix "$work/d/pages" --out "$work/f" --random "${RANDOM_WORDS:-1000}" > "$work/fix.log" 2>&1; then
  echo "sm$arch: fix left errors or failed; nothing copied (see $work/fix.log)" >&2
  exit 1
fi
end=$(date +%s)
dest=corpus/isa-discovered/sm$arch
rm -f "$dest"/*.txt
cp "$work"/d/pages/*.txt "$dest"/
for p in "$work"/f/*.txt; do
  [ -f "$p" ] && cp "$p" "$dest/"
done
# The printing conventions fix stored (learned for the forms the pages have).
cp "$work/f/conventions.json" "$dest/"
# Fix's last validation round: its warnings and `missing_form` notes go to SUMMARY.md.
last=$(ls -d "$work"/f/round-* | sort -V | tail -1)
# Forms the census's seeds left out (one seed per opclass, and a seed may print with an
# operand left out), added from the words of corpus/ptx and corpus/ptx-cvt, then from the
# census's own other words (the hold-outs stay unseen), and from the words of fix's
# `missing_form` notes (a fixed bit flipped or a table value left out that no page decodes
# and nvdisasm prints as another form; fill leaves out those it prints `INVALIDn`/`???n`):
# FILL.md.
missing=()
while read -r w; do
  missing+=(--word "$w")
done < <(jq -r 'select(.class == "missing_form") | .word' "$last/findings.jsonl" | sort -u)
rm -rf "$work/fill"
"$bin" discover --arch "$arch" --fill "$dest" --ptx corpus/ptx --ptx corpus/ptx-cvt --census "$work/d/census.json" "${missing[@]}" --out "$work/fill" > "$work/fill.log" 2>&1
cp "$work"/fill/*.txt "$work/fill/conventions.json" "$dest/"
{
  echo "From \`sass-harness discover --arch $arch --fill corpus/isa-discovered/sm$arch --ptx corpus/ptx --ptx corpus/ptx-cvt --census DISCOVERY/census.json --word W… --out DIR\` (tools/regen-discovered.sh; each W a word of SUMMARY.md's \"Forms the pages lack\")."
  echo
  cat "$work/fill/fill.md"
} > "$dest/FILL.md"
# SUMMARY.md: discovery's summary, then every warning validation leaves (fix's last round),
# each with its reason: what nvdisasm prints that no page edit or stored convention explains.
{
  cat "$work/d/summary.md"
  echo
  echo "## Warnings left"
  echo
  echo "\`validate --random ${RANDOM_WORDS:-1000}\` (fix's $(basename "$last")): $(grep -c '"severity":"warning"' "$last/findings.jsonl" || true) warnings, one a line: variant, class (field), why no page edit or stored convention explains it, a word (bit 127 first) with the page's text and nvdisasm's."
  echo
  jq -r 'select(.severity == "warning")
    | "- `\(.variant)` \(.class)\(if .field then " (\(.field))" else "" end): \(.proposal // "no page edit explains it"); `\(.word)`: page `\(.expected)`, nvdisasm `\(.actual)`"' \
    "$last/findings.jsonl" | sort
  echo
  echo "## Forms the pages lack"
  echo
  echo "\`missing_form\` notes of the same round: $(grep -c '"class":"missing_form"' "$last/findings.jsonl" || true), one a line: a word this variant excludes (a fixed bit flipped, or a table value it leaves out) that no variant decodes and nvdisasm prints as another form; the fill step took each as a \`--word\` (FILL.md lists the forms it added)."
  echo
  jq -r 'select(.class == "missing_form")
    | "- `\(.variant)` bits \(.bits | map(tostring) | join(",")): `\(.word)`: nvdisasm `\(.actual)`"' \
    "$last/findings.jsonl" | sort
} > "$dest/SUMMARY.md"
{
  echo "# Corrections \`fix\` made to the discovered pages"
  echo
  echo "From \`sass-harness fix DIR/pages --out OUT --random ${RANDOM_WORDS:-1000}\` after \`discover --arch $arch\` ($((mid - start)) s, then $((end - mid)) s): each error validation found, with its verified correction applied."
  echo
  for d in "$work"/f/*.diff; do
    [ -f "$d" ] || continue
    echo '```diff'
    sed -e "s|$work/d/pages/|sm$arch/|; s|$work/f/|sm$arch/|" "$d"
    echo '```'
  done
  echo
  echo "Validation rounds (errors, warnings, notes):"
  echo
  for r in "$work"/f/round-*; do
    echo "- $(basename "$r"): $(grep -c '"severity":"error"' "$r/findings.jsonl" || true) errors, $(grep -c '"severity":"warning"' "$r/findings.jsonl" || true) warnings, $(grep -c '"severity":"note"' "$r/findings.jsonl" || true) notes"
  done
} > "$dest/FIXES.md"
echo "sm$arch: discover $((mid - start)) s, fix $((end - mid)) s; $(tail -1 "$work/discover.log")"
