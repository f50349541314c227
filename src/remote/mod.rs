//! Copies in object storage (`fixity verify TREE --remote s3://bucket/prefix`): each
//! object under the prefix compared with the catalog's record of the file at the same
//! path, from the listing and per-object metadata, never the data unless asked
//! (`--download`).
//!
//! - [`object`]: what an object proves (single-part and multipart ETags, full-object and
//!   composite checksums) and the judgement of one object against one record: pure.
//! - `s3`: the S3 client (the AWS SDK for Rust), behind [`ObjectStore`], the seam another
//!   store (Azure Blob, GCS's JSON API) would implement.
//! - `engine`: the listing merged with the catalog's records in byte order, in pages:
//!   HEADs for what the listing cannot prove, one local read for the digests no record
//!   holds (kept in the catalog as [`crate::catalog::Extra`]s, so the next run reads
//!   nothing), downloads with `--download`; one [`Event`] per object, in key order.
//!
//! docs/remote.md says what each proof proves and what it does not.

mod engine;
pub mod object;
mod s3;
mod url;

pub use engine::{Failed, Summary, compare, compare_under};
pub use object::Proof;
pub use url::RemoteUrl;

use crate::algo::Algorithm;
use crate::catalog::StoreError;
use crate::digest::Digest;
use object::{Head, Listed};

/// How to reach the remote and how hard to push it.
#[derive(Clone, Debug)]
pub struct Options {
    /// A custom endpoint (MinIO, Ceph RGW, R2, B2 ...), else the SDK's (AWS, or
    /// `AWS_ENDPOINT_URL`).
    pub endpoint: Option<String>,
    /// A profile of the shared config and credentials files, else `AWS_PROFILE` or default.
    pub profile: Option<String>,
    /// Path-style addressing (`endpoint/bucket/key`).
    pub path_style: bool,
    /// Requests in flight at most (HEADs; downloads take up to 8 of them).
    pub requests: usize,
    /// Attempts per request, retries included (throttling and transient errors are
    /// retried with exponential backoff).
    pub attempts: u32,
    /// Download and hash what the metadata cannot prove.
    pub download: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            endpoint: None,
            profile: None,
            path_style: false,
            requests: 32,
            attempts: 8,
            download: false,
        }
    }
}

/// What went wrong talking to the remote.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The comparison cannot go on (the listing failed: no such bucket, access denied, no
    /// credentials).
    #[error("{0}")]
    Fatal(String),
    /// One object could not be looked at (after the retries).
    #[error("{0}")]
    Object(String),
    /// The object was listed and is gone.
    #[error("the object is gone (deleted since it was listed)")]
    Gone,
    /// The catalog failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An object store as the comparison sees it. Adding a store (Azure Blob, GCS's JSON
/// API): one file implementing this, and its arm in [`open`].
pub trait ObjectStore {
    /// The remote as messages name it.
    fn describe(&self) -> String;
    /// The next page of the listing, keys in byte order; `None` after the last.
    fn next_page(&mut self) -> Result<Option<Vec<Listed>>, RemoteError>;
    /// HEADs of `keys` (with checksums; `true`: also part 1's size), in order.
    fn head_many(&self, keys: &[(String, bool)]) -> Vec<Result<Head, RemoteError>>;
    /// Downloads each key, hashing it with the algorithms given: (bytes, digests).
    fn download_many(
        &self,
        keys: &[(String, Vec<&'static Algorithm>)],
    ) -> Vec<Result<(u64, Vec<Digest>), RemoteError>>;
    /// Requests made so far (listing pages, HEADs, downloads).
    fn requests(&self) -> u64;
}

/// Opens the store `url` names.
pub fn open(url: &RemoteUrl, opts: &Options) -> Result<Box<dyn ObjectStore>, RemoteError> {
    match url {
        RemoteUrl::S3 { bucket, prefix } => Ok(Box::new(s3::S3::open(bucket, prefix, opts)?)),
    }
}

/// What a comparison found for one object or record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// The object holds the recorded content (the event says by which proof).
    Ok,
    /// The object's content is not the recorded content.
    Differs,
    /// A file the catalog records has no object.
    Missing,
    /// An object under the prefix that the catalog has no record of.
    Extra,
    /// Nothing the object offers could be compared (the event says why).
    Unprovable,
    /// The object could not be looked at (after the retries).
    Error,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::Differs => "differs",
            Class::Missing => "missing",
            Class::Extra => "extra",
            Class::Unprovable => "unprovable",
            Class::Error => "error",
        }
    }

    /// Every class, in the order summaries list them.
    pub const ALL: [Class; 6] =
        [Class::Ok, Class::Differs, Class::Missing, Class::Extra, Class::Unprovable, Class::Error];

    /// A finding: the exit status says so.
    pub fn is_finding(self) -> bool {
        !matches!(self, Class::Ok | Class::Extra)
    }
}

/// One object (or record without object) compared.
#[derive(Clone, Debug)]
pub struct Event {
    /// The path relative to the tree (the key after the prefix).
    pub path: Vec<u8>,
    pub class: Class,
    /// How it was proven equal, or different.
    pub proof: Option<Proof>,
    /// What differs, why nothing could be proven, or the error.
    pub note: Option<String>,
}
