//! The integration tests, one binary: each module was a test file of its own. One binary
//! is linked once, not once per file, and `cargo test` runs all its tests on every core
//! at once instead of one file after another. `ci/tests.sh` still runs the modules two at
//! a time, the longest first (`cargo test --release --test suite -- discover::`).

mod common;

mod assembler;
mod cli;
mod codec;
mod conventions;
mod crosscheck;
mod discover;
mod exec;
mod fill;
mod fuzz_props;
mod malformed;
mod offline;
mod precision;
mod relations;
mod reliability;
mod roundtrip;
mod semantics;
mod snapshots;
mod validate;
