//! Amazon S3 and the S3 APIs of other stores (MinIO, Ceph RGW, Cloudflare R2, Backblaze
//! B2, Google Cloud Storage's XML API) through the AWS SDK for Rust: credentials by the
//! SDK's default chain (environment, shared config and credentials files and their
//! profiles, SSO, web identity, ECS and EC2 instance metadata), the listing in pages
//! prefetched beside the comparison, HEADs with checksum mode and downloads with a bounded
//! number in flight, and the SDK's retries with backoff on throttling (503 SlowDown, 429).
//!
//! The tokio runtime lives here: the engine calls in and gets plain values back.

use super::object::{Head, Listed, checksum_header};
use super::{ObjectStore, Options, RemoteError};
use crate::algo::Algorithm;
use crate::digest::Digest;
use aws_sdk_s3::Client;
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::config::interceptors::InterceptorContext;
use aws_sdk_s3::config::retry::{
    ClassifyRetry, RetryAction, RetryConfig, RetryPartition, TokenBucket,
};
use aws_sdk_s3::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_s3::operation::head_object::HeadObjectError;
use aws_sdk_s3::types::ChecksumMode;
use futures_util::stream::{self, StreamExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;

/// Keys a listing page asks for (S3's most).
const PAGE: i32 = 1000;

/// An S3 bucket and prefix, open for a comparison.
pub(crate) struct S3 {
    rt: tokio::runtime::Runtime,
    client: Client,
    bucket: String,
    /// The prefix, ending in `/` unless empty.
    prefix: String,
    in_flight: usize,
    pages: Option<mpsc::Receiver<Result<Vec<Listed>, RemoteError>>>,
    requests: AtomicU64,
}

impl S3 {
    /// Connects (lazily: the first request resolves credentials) to `bucket` under
    /// `prefix` as `opts` say.
    pub(crate) fn open(bucket: &str, prefix: &str, opts: &Options) -> Result<S3, RemoteError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fixity-s3")
            .enable_all()
            .build()
            .map_err(|e| RemoteError::Fatal(format!("cannot start the S3 client: {e}")))?;
        let client = rt.block_on(client(opts));
        Ok(S3 {
            rt,
            client,
            bucket: bucket.into(),
            prefix: prefix.into(),
            in_flight: opts.requests.max(1),
            pages: None,
            requests: AtomicU64::new(0),
        })
    }

    fn count(&self, n: u64) {
        self.requests.fetch_add(n, Ordering::Relaxed);
    }
}

/// The SDK client: the default credential and region chains (region us-east-1 when none
/// is set: custom endpoints rarely care), the endpoint and addressing asked for.
async fn client(opts: &Options) -> Client {
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
            aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https();
    let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(http);
    if let Some(p) = &opts.profile {
        loader = loader.profile_name(p);
    }
    let shared = loader.load().await;
    let retry = RetryConfig::standard()
        .with_max_attempts(opts.attempts.max(1))
        .with_initial_backoff(Duration::from_millis(50))
        .with_max_backoff(Duration::from_secs(20));
    // No retry quota: a long comparison under throttling backs off and goes on (each
    // request has its attempts) instead of failing fast once a shared quota runs out.
    let partition =
        RetryPartition::custom("fixity-remote").token_bucket(TokenBucket::unlimited()).build();
    let mut conf = aws_sdk_s3::config::Builder::from(&shared)
        .retry_config(retry)
        .retry_partition(partition)
        .retry_classifier(TooManyRequests);
    if shared.region().is_none() {
        conf = conf.region(aws_sdk_s3::config::Region::new("us-east-1"));
    }
    if let Some(url) = &opts.endpoint {
        conf = conf.endpoint_url(url);
    }
    conf = conf.force_path_style(opts.path_style);
    Client::from_conf(conf.build())
}

/// HTTP 429 Too Many Requests, which S3-compatible stores and gateways answer when
/// throttling (S3 itself says 503 SlowDown, which the SDK knows): a throttling error, retried
/// with backoff. The SDK's own classifiers retry a 429 only when its error code is one
/// they know, and a HEAD's has no body to carry one.
#[derive(Debug)]
struct TooManyRequests;

impl ClassifyRetry for TooManyRequests {
    fn classify_retry(&self, ctx: &InterceptorContext) -> RetryAction {
        match ctx.response().map(|r| r.status().as_u16()) {
            Some(429) => RetryAction::throttling_error(),
            _ => RetryAction::NoActionIndicated,
        }
    }

    fn name(&self) -> &'static str {
        "HTTP 429 Too Many Requests"
    }
}

/// An SDK error as one line: the HTTP status with the service's code and message, or the
/// transport's cause.
fn say<E>(e: &SdkError<E, HttpResponse>) -> String
where
    E: std::error::Error + ProvideErrorMetadata + 'static,
{
    let text = match e {
        SdkError::ServiceError(se) => {
            let status = e.raw_response().map(|r| r.status().as_u16());
            let err = se.err();
            let mut t = status.map_or(String::new(), |s| format!("HTTP {s}"));
            for part in [err.code(), err.message()].into_iter().flatten() {
                t.push_str(if t.is_empty() { "" } else { ": " });
                t.push_str(part);
            }
            if t.is_empty() { DisplayErrorContext(e).to_string() } else { t }
        }
        _ => DisplayErrorContext(e).to_string(),
    };
    if text.contains("no credentials found in chain")
        || text.contains("no providers in chain provided credentials")
    {
        return "no credentials in the AWS chain (environment, the profile of ~/.aws/credentials \
                and ~/.aws/config, web identity, ECS, instance metadata): set \
                AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE / --profile"
            .into();
    }
    // The first line: the SDK's context without its debug dump.
    text.split(" (DispatchFailure").next().unwrap_or(&text).lines().next().unwrap_or("").to_string()
}

fn unquote(etag: &str) -> String {
    etag.trim_matches('"').to_string()
}

impl ObjectStore for S3 {
    fn describe(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.prefix.trim_end_matches('/'))
    }

    fn next_page(&mut self) -> Result<Option<Vec<Listed>>, RemoteError> {
        if self.pages.is_none() {
            let (tx, rx) = mpsc::channel(2);
            let (client, bucket, prefix) =
                (self.client.clone(), self.bucket.clone(), self.prefix.clone());
            self.rt.spawn(async move {
                let mut pages = client
                    .list_objects_v2()
                    .bucket(bucket)
                    .prefix(prefix)
                    .max_keys(PAGE)
                    .into_paginator()
                    .send();
                while let Some(page) = pages.next().await {
                    let page =
                        page.map_err(|e| RemoteError::Fatal(format!("cannot list: {}", say(&e))));
                    let page = page.map(|p| {
                        p.contents()
                            .iter()
                            .filter_map(|o| {
                                Some(Listed {
                                    key: o.key()?.to_string(),
                                    size: o.size().unwrap_or(0).max(0) as u64,
                                    etag: o.e_tag().map(unquote),
                                    checksums: o
                                        .checksum_algorithm()
                                        .iter()
                                        .map(|a| a.as_str().to_ascii_lowercase())
                                        .collect(),
                                })
                            })
                            .collect::<Vec<_>>()
                    });
                    let stop = page.is_err();
                    if tx.send(page).await.is_err() || stop {
                        return;
                    }
                }
            });
            self.pages = Some(rx);
        }
        let rx = self.pages.as_mut().expect("made above");
        let page = self.rt.block_on(rx.recv());
        if page.is_some() {
            self.requests.fetch_add(1, Ordering::Relaxed);
        }
        page.transpose()
    }

    fn head_many(&self, keys: &[(String, bool)]) -> Vec<Result<Head, RemoteError>> {
        let n: u64 = keys.iter().map(|(_, p)| 1 + *p as u64).sum();
        self.count(n);
        let client = &self.client;
        let bucket = &self.bucket;
        self.rt.block_on(
            stream::iter(keys)
                .map(|(key, part1)| async move {
                    let head = client
                        .head_object()
                        .bucket(bucket)
                        .key(key)
                        .checksum_mode(ChecksumMode::Enabled)
                        .send();
                    let first = async {
                        match part1 {
                            true => client
                                .head_object()
                                .bucket(bucket)
                                .key(key)
                                .part_number(1)
                                .send()
                                .await
                                .ok(),
                            false => None,
                        }
                    };
                    let (head, first) = tokio::join!(head, first);
                    let h = head.map_err(|e| match e.as_service_error() {
                        Some(HeadObjectError::NotFound(_)) => RemoteError::Gone,
                        _ => RemoteError::Object(say(&e)),
                    })?;
                    let composite = h.checksum_type().map(|t| t.as_str() == "COMPOSITE");
                    let checksums = [
                        checksum_header("crc64nvme", h.checksum_crc64_nvme(), None),
                        checksum_header("crc32c", h.checksum_crc32_c(), composite),
                        checksum_header("crc32", h.checksum_crc32(), composite),
                        checksum_header("sha256", h.checksum_sha256(), composite),
                        checksum_header("sha1", h.checksum_sha1(), composite),
                    ];
                    Ok(Head {
                        etag: h.e_tag().map(unquote),
                        size: h.content_length().unwrap_or(0).max(0) as u64,
                        encryption: h.server_side_encryption().map(|e| e.as_str().to_string()),
                        customer_key: h.sse_customer_algorithm().is_some(),
                        checksums: checksums.into_iter().flatten().collect(),
                        part1: first
                            .filter(|f| f.parts_count().unwrap_or(0) > 1)
                            .and_then(|f| f.content_length())
                            .map(|l| l.max(0) as u64),
                    })
                })
                .buffered(self.in_flight)
                .collect(),
        )
    }

    fn download_many(
        &self,
        keys: &[(String, Vec<&'static Algorithm>)],
    ) -> Vec<Result<(u64, Vec<Digest>), RemoteError>> {
        self.count(keys.len() as u64);
        let client = &self.client;
        let bucket = &self.bucket;
        self.rt.block_on(
            stream::iter(keys)
                .map(|(key, algos)| async move {
                    let out =
                        client.get_object().bucket(bucket).key(key).send().await.map_err(|e| {
                            match e.as_service_error() {
                                Some(e) if e.is_no_such_key() => RemoteError::Gone,
                                _ => RemoteError::Object(say(&e)),
                            }
                        })?;
                    let mut hashers: Vec<_> = algos.iter().map(|a| a.hasher()).collect();
                    let mut body = out.body;
                    let mut size = 0u64;
                    while let Some(chunk) = body
                        .try_next()
                        .await
                        .map_err(|e| RemoteError::Object(format!("download cut short: {e}")))?
                    {
                        size += chunk.len() as u64;
                        for h in &mut hashers {
                            h.update(&chunk);
                        }
                    }
                    Ok((size, hashers.iter().map(|h| h.finish()).collect()))
                })
                // Downloads hold buffers: fewer at once than HEADs.
                .buffered(self.in_flight.min(8))
                .collect(),
        )
    }

    fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}
