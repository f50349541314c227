//! What a catalog keeps for comparisons with copies elsewhere (`verify --remote`,
//! [`crate::remote`]): further digests of a file beside its record, and the outcome of
//! each comparison with a remote copy.

/// A further digest of a file (an S3 ETag of one part size, a CRC64NVME, a composite
/// checksum: the algorithm's registry name), taken of the version of the file its size and
/// mtime say. It stands for the file while the file's record has that size and mtime, so a
/// later comparison reads nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extra {
    /// The registry name of the algorithm (`s3etag-16mib`, `crc64nvme`).
    pub algo: String,
    pub digest: Vec<u8>,
    pub size: u64,
    pub mtime_ns: i64,
}

/// One comparison of the tree's records with a remote copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteCheck {
    /// The remote as given (`s3://bucket/prefix`), without credentials.
    pub remote: String,
    /// Start and end, ms since the epoch.
    pub started: i64,
    pub finished: i64,
    /// Every object and record was compared (no listing or catalog failure cut it short).
    pub complete: bool,
    /// The comparison's summary as JSON: counts per class and per proof, problem paths.
    pub summary: String,
}
