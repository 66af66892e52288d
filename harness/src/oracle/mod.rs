//! Oracles: external judges of what a word means.

pub mod tools;
