//! fixity: prove files are intact.
//!
//! Module map (read this first):
//! - [`algo`]: the `Hasher` trait and the one registry table of algorithms.
//! - [`digest`]: the `Digest` value (hex, constant-time compare).
//! - [`pathtext`]: names as bytes: coreutils' escaping in manifests and quoting in messages.
//! - [`walk`]: the parallel, byte-order-sorted tree walk (symlinks, loops, excludes).
//! - [`device`]: what the device and file system say of a file: stamp, disk kind, cache.
//! - [`read`]: carry out a read plan: read a file once, feed every sink, detect changes.
//! - `mapping`: memory maps whose faults (EIO, truncation) become errors, not SIGBUS.
//! - [`sources`]: the one producer: command-line paths become the files to read, in order.
//! - [`pipeline`]: ordered parallel hashing with bounded memory, shared by hash and check;
//!   picks each file's read plan from the algorithms' registry rows.
//! - [`formats`]: one module per manifest format (GNU, BSD tag, SFV, JSON lines).
//! - [`audit`]: hashdeep's audit: classify files against known hashes by digest.
//! - [`bagit`]: BagIt (RFC 8493) bags: create in place, validate.
//! - [`confine`]: open a manifest's path without leaving the directory (`--confine`).
//! - [`check`]: the check engine: compare digests, classify lines, run a check job.
//! - [`output`]: atomic manifest writing (temp file, fsync, rename).
//! - [`catalog`]: what is remembered between runs: SQLite catalog or extended attributes.
//! - [`bench`]: `fixity bench`: in-memory and tree benchmarks, peers side by side, charts.
//! - [`scrub`]: `scan` and `verify`: classify files against a store, in slices.
//! - [`clock`], [`units`]: times, sizes and durations as people read and write them.
#![deny(unsafe_code)]

pub mod algo;
pub mod audit;
pub mod bagit;
pub mod bench;
pub mod catalog;
pub mod check;
pub mod clock;
#[allow(unsafe_code)]
pub mod confine;
#[allow(unsafe_code)]
pub mod device;
pub mod digest;
pub mod formats;
pub mod hashing;
#[allow(unsafe_code)]
mod mapping;
pub mod output;
pub mod pathtext;
pub mod pipeline;
#[allow(unsafe_code)]
pub mod read;
pub mod scrub;
pub mod sources;
pub mod units;
pub mod walk;
