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
cp -r corpus ci "$dir/"
"$dir/sass-harness" exec corpus/isa --dry-run --barrier-experiment --out "$dir/plan"
echo "gpu-bundle: $(du -sh "$dir" | cut -f1) in $dir"
