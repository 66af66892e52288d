#!/usr/bin/env bash
# The nightly GPU job: Rust tests with SASS_HARNESS_REQUIRE_GPU=1 (GPU tests fail instead
# of skipping), validate, exec (every runnable word of the discovered spec on the GPU:
# bit-exact against the CPU models where one exists, and the relations that need none;
# plus the write-barrier experiment), and a time-boxed fuzz run. Reports under $OUT.
# Budget: under 8 minutes on one H100/H200 with a bundle (no cargo): exec stops itself at
# EXEC_SECONDS (default 300; the dry run prints its estimate, ~75 s for SM90) and writes
# what ran (`exec --resume` continues).
#
# Runs on a box with the CUDA driver, ptxas/nvdisasm and no Rust and no network, given a
# release binary and a plan built elsewhere (see ci/gpu-bundle.sh):
#   SASS_HARNESS_BIN=bundle/sass-harness SASS_HARNESS_PLAN=bundle/plan OUT=/tmp/n bash ci/nightly-gpu.sh
# With cargo it builds the binary and runs the tests itself; without a plan it builds one
# here (exec's dry run, which proves every patch with the local nvdisasm).
#
# Environment: OUT (reports, default reports/nightly-gpu), SASS_HARNESS_BIN,
# SASS_HARNESS_PLAN, EXEC_SECONDS (exec's --time-limit, default 300), EXEC_SPEC (pages,
# default corpus/isa-discovered), FUZZ_SECONDS (per target, default 60; 0 skips),
# NVDISASM/PTXAS.
# Exit status: 0 when every step ran and passed; 1 otherwise (each step still runs).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
OUT=${OUT:-$root/reports/nightly-gpu}
mkdir -p "$OUT"
status=0
log() { echo "nightly-gpu: $*" | tee -a "$OUT/nightly.log"; }
step() { # step NAME CMD...: run, log the outcome, remember a failure
  local name=$1; shift
  log "== $name: $*"
  "$@" > >(tee "$OUT/$name.log") 2>&1
  local rc=$?
  log "== $name: exit $rc"
  [ $rc -eq 0 ] || status=1
  return $rc
}

# 1. Tools: those the machine has (NVDISASM/PTXAS, $CUDA_HOME/bin, PATH), else the
#    pinned ones from PyPI (needs network).
for t in nvdisasm ptxas; do
  var=$(echo "$t" | tr a-z A-Z)
  if [ -z "${!var:-}" ]; then
    for c in "${CUDA_HOME:-/usr/local/cuda}/bin/$t" "$(command -v "$t" || true)"; do
      if [ -n "$c" ] && [ -x "$c" ]; then export "$var=$c"; break; fi
    done
  fi
done
if [ -z "${NVDISASM:-}" ] || [ -z "${PTXAS:-}" ]; then
  step install-cuda-tools bash ci/install-cuda-tools.sh || { log "no nvdisasm/ptxas: cannot continue"; exit 1; }
fi
log "nvdisasm=${NVDISASM:-.tools/cuda} ptxas=${PTXAS:-.tools/cuda}"

# 2. The binary: given, else built, else a carried target/release one.
if [ -n "${SASS_HARNESS_BIN:-}" ]; then
  bin=$SASS_HARNESS_BIN
elif command -v cargo >/dev/null; then
  step build cargo build --release -p sass-harness || exit 1
  bin=$root/target/release/sass-harness
elif [ -x "$root/target/release/sass-harness" ]; then
  bin=$root/target/release/sass-harness
else
  log "no cargo, no SASS_HARNESS_BIN and no target/release/sass-harness: nothing to run"
  exit 1
fi
log "binary: $bin ($("$bin" --version))"

# 3. Tests, GPU tests required.
if command -v cargo >/dev/null; then
  step tests env SASS_HARNESS_REQUIRE_GPU=1 cargo test --workspace --release
else
  log "tests: no cargo here; the GPU checks run through the binary below (exec exits 3 without a GPU)"
fi

# 4. Validation against nvdisasm.
step validate "$bin" validate corpus/isa --out "$OUT/validate"

# 5. Execution: every runnable word on the GPU, and the barrier experiment.
plan=()
[ -n "${SASS_HARNESS_PLAN:-}" ] && plan=(--plan "$SASS_HARNESS_PLAN")
t0=$(date +%s)
step exec "$bin" exec "${EXEC_SPEC:-corpus/isa-discovered}" --barrier-experiment --time-limit "${EXEC_SECONDS:-300}" --out "$OUT/exec" ${plan[@]+"${plan[@]}"}
case "$(tail -1 "$OUT/nightly.log")" in
  "nightly-gpu: == exec: exit 3") log "exec: no usable GPU on this runner (exit 3): failing the nightly" ;;
  "nightly-gpu: == exec: exit 5") log "exec: stopped at its time limit (${EXEC_SECONDS:-300} s): the rest did not run" ;;
esac
log "exec: $(($(date +%s) - t0)) s"

# 6. Fuzzing, time-boxed, where cargo-fuzz exists.
if [ "${FUZZ_SECONDS:-60}" != 0 ] && command -v cargo >/dev/null && cargo +nightly fuzz --version >/dev/null 2>&1; then
  step fuzz bash ci/fuzz.sh all "${FUZZ_SECONDS:-60}"
else
  log "fuzz: skipped (no cargo-fuzz with a nightly toolchain, or FUZZ_SECONDS=0)"
fi

log "done: status $status; reports in $OUT"
exit $status
