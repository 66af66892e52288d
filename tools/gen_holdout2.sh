#!/usr/bin/env bash
# Regenerates corpus/ptx-holdout2/*.ptx from kernels.cu with nvcc 13.5.37, once per set of flags
# unlike corpus/ptx-holdout's -O3: -G, -O0 (device optimization off: -Xcicc -O0),
# -lineinfo, --use_fast_math, and --maxrregcount=32. PTX does not carry ptxas options,
# so the last one is written as what it means to ptxas, `.maxnreg 32` on every entry.
# CUDA: a folder holding nvcc with cicc and the runtime headers, e.g. `pip install --no-deps
# --target T nvidia-cuda-nvcc==13.5.37 nvidia-cuda-runtime==13.5.37 nvidia-cuda-crt==13.5.37
# nvidia-nvvm==13.5.37 nvidia-cuda-cccl==13.3.5.0.6`, then CUDA=T/nvidia/cu13 (.tools/cuda has
# nvcc but not cicc nor the headers).
set -euo pipefail
cd "$(dirname "$0")/.."
cuda=${CUDA:?set CUDA to a CUDA 13.5 folder with bin/nvcc, nvvm/bin/cicc and include/}
inc="$cuda/include"
export PATH="$cuda/bin:$PATH"
dir=corpus/ptx-holdout2
gen() {
  local name=$1
  shift
  nvcc -ptx -arch=sm_90 "$@" -I"$inc" -I"$cuda/cccl" -I"$inc/cccl" -o "$dir/$name.ptx" "$dir/kernels.cu"
}
gen debug_G -G
gen opt0 -O0 -Xcicc -O0
gen lineinfo -O3 -lineinfo
gen fastmath -O3 --use_fast_math
gen maxreg32 -O3 --maxrregcount=32
# `.maxnreg 32` after each `.entry NAME(…)` parameter list, before its body.
sed -i -e '/^\.visible \.entry/,/^{/ s/^{$/.maxnreg 32\n{/' "$dir/maxreg32.ptx"
