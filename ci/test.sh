#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs the pinned NVIDIA tools the tests
# need (nvdisasm, ptxas), then runs every test. Tests that need the tools fail without them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-cuda-tools.sh
bash ci/lint-workflows.sh
cargo test --workspace --release
