//! Oracles: external judges of what a word means.

pub mod learn;
pub mod nvdisasm;
pub mod ptxas;
pub mod tools;
