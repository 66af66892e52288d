//! Oracles: external judges of what a word means.

pub mod exec;
pub mod gpu;
pub mod nvdisasm;
pub mod ptxas;
pub mod tools;
