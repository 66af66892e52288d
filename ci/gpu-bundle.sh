#!/usr/bin/env bash
# Builds what the GPU box needs when it has no Rust and no network: the release binary,
# the corpus, the CI scripts and a plan (exec's dry run: patched cubins proven with
# nvdisasm, and the barrier cubins). Copy DIR over and run, on the GPU box:
#   SASS_HARNESS_BIN=DIR/sass-harness SASS_HARNESS_PLAN=DIR/plan OUT=… bash DIR/ci/nightly-gpu.sh
# Usage: bash ci/gpu-bundle.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: ci/gpu-bundle.sh DIR}
bash ci/install-cuda-tools.sh
cargo build --release -p sass-harness
rm -rf "$dir"
mkdir -p "$dir"
cp target/release/sass-harness "$dir/"
# Stripped: the debug info is most of the release binary's size.
strip "$dir/sass-harness"
cp -r corpus ci "$dir/"
# Every form of the discovered spec a template holds (SM90, SM100, SM120), with the
# relations; the dry run prints words, runnable share and the time estimate per arch.
"$dir/sass-harness" exec corpus/isa-discovered --dry-run --barrier-experiment --out "$dir/plan"
echo "gpu-bundle: $(du -sh "$dir" | cut -f1) in $dir"
