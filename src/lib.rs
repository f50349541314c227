//! fixity: prove files are intact.
//!
//! Module map (read this first):
//! - [`algo`]: the `Hasher` trait and the one registry table of algorithms.
//! - [`digest`]: the `Digest` value (hex, constant-time compare).
pub mod algo;
pub mod digest;
pub mod pathtext;
pub mod pipeline;
pub mod read;
