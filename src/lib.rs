//! fixity: prove files are intact.
//!
//! # Using the library
//!
//! Each job takes a plan and hands typed events back, in order, on the calling thread; it
//! prints nothing (the `fixity` binary is one renderer of these events).
//!
//! - **Hash a tree**: [`hashing::run`] with a [`hashing::HashPlan`] ([`sources::Sources`]:
//!   paths to walk; algorithms from [`algo::lookup`]) gives a [`hashing::HashEvent`] per
//!   file; a [`formats::ManifestWriter`] from [`formats::OutputFormat::writer`] turns them
//!   into any manifest format fixity writes.
//! - **Check a manifest**: [`check::run`] with a [`check::CheckPlan`] gives a
//!   [`check::Event`] per line: ok, failed, missing, unreadable, changed while read.
//! - **Scan or verify a tree against a store**: [`catalog::open_store`] (a SQLite catalog
//!   or extended attributes) and [`scrub::run`], which tells bitrot from edits
//!   ([`catalog::Class`]) and reports a [`scrub::Report`].
//! - **Benchmark**: [`bench`](mod@bench) measures algorithms in memory and tools on a tree.
//!
//! `examples/library.rs` does the first three end to end. docs/architecture.md shows the
//! data flow and where each addition (algorithm, format, store, I/O strategy) goes.
//!
//! # Module map
//! - [`algo`]: the `Hasher` trait and the one registry table of algorithms (every fact
//!   about an algorithm: names, tags, peers' names, how it is read).
//! - [`digest`]: the `Digest` value (hex, base32, base64; compared in constant time only).
//! - [`pathtext`]: names as bytes: coreutils' escaping in manifests and quoting in messages.
//! - [`walk`]: the parallel, byte-order-sorted tree walk (symlinks, loops, excludes).
//! - [`sources`]: the one producer: command-line paths become the files to read, in order.
//! - [`sys`]: the platform seam: names as bytes, metadata, identity, on Unix and Windows.
//! - [`device`]: what the device and file system say of a file: stamp, disk kind, cache.
//! - [`storage`]: the storage policy per device: a probe tells seeking disks from flash
//!   and network storage; one reader and physical order for the first, many reads for the rest.
//! - [`read`]: carry out a read plan: read a file once, feed every sink, detect changes.
//! - `mapping`: memory maps whose faults (EIO, truncation) become errors, not SIGBUS.
//! - [`pipeline`]: ordered parallel hashing with bounded memory, shared by every job;
//!   picks each file's read plan from the algorithms' registry rows.
//! - [`hashing`]: the hash job.
//! - [`formats`]: one module per manifest format: its parser and its `ManifestWriter`.
//! - [`check`]: the check engine: compare digests, classify lines, run a check job.
//! - [`confine`]: open a manifest's path without leaving the directory (`--confine`).
//! - [`audit`]: hashdeep's audit: classify files against known hashes by digest.
//! - [`bagit`]: BagIt (RFC 8493) bags: create in place, validate.
//! - [`output`]: atomic manifest writing (temp file, fsync, rename).
//! - [`catalog`]: what is remembered between runs: the `Store` trait, SQLite, xattrs.
//! - [`proof`]: tamper evidence: the root of a tree's records, the chain of heads the
//!   catalogs keep (one entry per run), the head as a statement to sign (pure).
//! - [`proof_audit`]: `fixity audit-proof`: a catalog and its files against a kept head;
//!   signature checks through ssh-keygen or minisign.
//! - [`scrub`]: `scan` and `verify`: one engine over any store, in slices.
//! - [`monitor`]: a tree's health for monitoring: Prometheus textfile metrics, a Nagios
//!   plugin's verdict, the age of the last complete verification pass.
//! - [`resolve`]: `accept` and `forget`, the explicit end of a finding, on any store.
//! - [`par2`]: PAR2 2.0 recovery data, written from the specification (GF(2^16) with
//!   run-time SIMD kernels, sets made in one read, read back from any client, repaired).
//! - [`repair`]: `protect` (recovery sets kept in step with the catalog), `repair` (from
//!   the sets or a replica, only to the recorded digest), and their upkeep after scan and
//!   verify.
//! - [`remote`]: copies in object storage (`verify --remote`): each object compared with
//!   its record from the listing, ETags and checksums, reading a local file once at most.
//! - [`dups`]: `fixity dups`: groups of files with the same content, from the catalog
//!   (no file read) or by reading only files whose size collides; bounded memory.
//! - [`report`]: what a catalog says about a tree, for people and archives: a typed
//!   report from the store, written as JSON or one HTML page; PREMIS 3 XML.
//! - [`bench`](mod@bench): `fixity bench`: in-memory and tree benchmarks, peers side by side, charts.
//! - [`clock`], [`units`]: times, sizes and durations as people read and write them.
#![deny(unsafe_code)]

pub mod algo;
pub mod audit;
pub mod bagit;
pub mod bench;
pub mod catalog;
pub mod check;
pub mod clock;
#[cfg(unix)]
#[allow(unsafe_code)]
pub mod confine;
#[cfg(windows)]
#[path = "confine_windows.rs"]
#[allow(unsafe_code)]
pub mod confine;
#[allow(unsafe_code)]
pub mod device;
pub mod digest;
pub mod dups;
pub mod formats;
pub mod hashing;
pub mod import;
#[cfg(unix)]
#[allow(unsafe_code)]
mod mapping;
pub mod monitor;
pub mod output;
pub mod par2;
pub mod pathtext;
pub mod pipeline;
pub mod proof;
pub mod proof_audit;
#[allow(unsafe_code)]
pub mod read;
pub mod remote;
pub mod repair;
pub mod report;
pub mod resolve;
pub mod scrub;
pub mod shard;
pub mod simd;
pub mod sources;
pub mod storage;
#[allow(unsafe_code)]
pub mod sys;
pub mod units;
pub mod walk;
