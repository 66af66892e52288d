#!/usr/bin/env bash
# The main job on the bundled corpus: roundtrip-check every variant, validate every page
# against nvdisasm, check the real-code corpus, and write reports/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-cuda-tools.sh
cargo run --release -p sass-harness -- run corpus/isa --out reports "$@"
