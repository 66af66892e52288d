//! Oracles: external judges of what a word means.

pub mod cache;
pub mod exec;
pub mod gpu;
pub mod learn;
pub mod listing;
pub mod merge;
pub mod nvdisasm;
pub mod process;
pub mod ptxas;
pub mod replies;
pub mod server;
pub mod tools;
