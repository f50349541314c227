//! The arguments of `verify --remote`: where the copy is and how to reach it.

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub struct RemoteArgs {
    /// Compare the copy in object storage (s3://BUCKET/PREFIX) with the catalog instead of
    /// reading the tree: each object's ETag and checksums against the recorded content,
    /// no data downloaded (credentials: the AWS chain: environment, ~/.aws profiles, web
    /// identity, instance metadata).
    #[arg(
        long,
        value_name = "URL",
        help_heading = "Remote copies",
        conflicts_with_all = ["repair", "max_bytes", "max_duration"]
    )]
    pub remote: Option<String>,
    /// The S3 API's endpoint (MinIO, Ceph RGW, R2, B2 ...; path-style addressing unless
    /// --virtual-hosted), else AWS's (or AWS_ENDPOINT_URL).
    #[arg(long, value_name = "URL", requires = "remote", help_heading = "Remote copies")]
    pub endpoint: Option<String>,
    /// Buckets addressed as BUCKET.ENDPOINT even with --endpoint.
    #[arg(long, requires = "endpoint", help_heading = "Remote copies")]
    pub virtual_hosted: bool,
    /// Buckets addressed as ENDPOINT/BUCKET on AWS too.
    #[arg(
        long,
        requires = "remote",
        conflicts_with = "virtual_hosted",
        help_heading = "Remote copies"
    )]
    pub path_style: bool,
    /// The profile of ~/.aws/config and ~/.aws/credentials (default: AWS_PROFILE, else
    /// default).
    #[arg(long, value_name = "NAME", requires = "remote", help_heading = "Remote copies")]
    pub profile: Option<String>,
    /// Also download and hash, while streaming, each object its metadata cannot prove.
    #[arg(long, requires = "remote", help_heading = "Remote copies")]
    pub download: bool,
    /// Requests in flight at most (downloads: 8 at most).
    #[arg(
        long,
        value_name = "N",
        default_value = "32",
        requires = "remote",
        help_heading = "Remote copies"
    )]
    pub requests: usize,
    /// Attempts per request, retries with backoff included (throttling: 503 SlowDown, 429).
    #[arg(
        long,
        value_name = "N",
        default_value = "8",
        requires = "remote",
        help_heading = "Remote copies"
    )]
    pub attempts: u32,
}
