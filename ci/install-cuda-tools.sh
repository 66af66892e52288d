#!/usr/bin/env bash
# Installs NVIDIA's nvdisasm, ptxas and cuobjdump (one pinned version, from PyPI) into
# .tools/cuda, which the harness finds by itself. Idempotent; safe to run on every CI run.
set -euo pipefail
CUDA_TOOLS_VERSION=13.5.37
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/.tools/cuda"
stamp="$dest/.version"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$CUDA_TOOLS_VERSION" ] && [ -x "$dest/nvidia/cu13/bin/nvdisasm" ]; then
  echo "cuda tools $CUDA_TOOLS_VERSION already in $dest"
  exit 0
fi
py=$(command -v python3 || command -v python)
rm -rf "$dest"
"$py" -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest" \
  "nvidia-cuda-nvdisasm==$CUDA_TOOLS_VERSION" \
  "nvidia-cuda-nvcc==$CUDA_TOOLS_VERSION" \
  "nvidia-cuda-cuobjdump==$CUDA_TOOLS_VERSION"
for t in nvdisasm ptxas cuobjdump; do
  test -x "$dest/nvidia/cu13/bin/$t" || { echo "install-cuda-tools: $t missing after install" >&2; exit 1; }
done
echo "$CUDA_TOOLS_VERSION" > "$stamp"
"$dest/nvidia/cu13/bin/nvdisasm" --version | tail -2
