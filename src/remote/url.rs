//! The remote a comparison names: `s3://bucket/prefix`.

use std::fmt;

/// A remote copy's place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemoteUrl {
    /// An S3 bucket (or another store's S3 API) and a key prefix: empty, or ending in `/`.
    S3 { bucket: String, prefix: String },
}

impl RemoteUrl {
    /// Parses `s3://bucket[/prefix]`. The prefix is a folder: `s3://b/photos` compares
    /// the keys under `photos/`.
    pub fn parse(text: &str) -> Result<RemoteUrl, String> {
        let Some(rest) = text.strip_prefix("s3://") else {
            return Err(format!(
                "{text:?} is not a remote fixity can compare with: give s3://BUCKET/PREFIX \
                 (Amazon S3, or another store's S3 API with --endpoint)"
            ));
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() || bucket.contains(['@', ':', '?', '#']) {
            return Err(format!(
                "{text:?}: no bucket name (or credentials in it: never put them in the URL)"
            ));
        }
        let prefix = prefix.trim_matches('/');
        if prefix.split('/').any(|c| c == ".." || c == ".") || prefix.contains("//") {
            return Err(format!("{text:?}: the prefix has an empty, '.' or '..' component"));
        }
        let prefix = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
        Ok(RemoteUrl::S3 { bucket: bucket.into(), prefix })
    }

    /// The key prefix (empty, or ending in `/`).
    pub fn prefix(&self) -> &str {
        match self {
            RemoteUrl::S3 { prefix, .. } => prefix,
        }
    }
}

impl fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteUrl::S3 { bucket, prefix } => {
                write!(f, "s3://{bucket}/{}", prefix.trim_end_matches('/'))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_buckets_and_prefixes() {
        let p = |t| RemoteUrl::parse(t).unwrap();
        assert_eq!(p("s3://b"), RemoteUrl::S3 { bucket: "b".into(), prefix: "".into() });
        assert_eq!(p("s3://b/"), RemoteUrl::S3 { bucket: "b".into(), prefix: "".into() });
        assert_eq!(p("s3://b/x/y/"), RemoteUrl::S3 { bucket: "b".into(), prefix: "x/y/".into() });
        assert_eq!(p("s3://b/x/y").to_string(), "s3://b/x/y");
        assert_eq!(p("s3://b").to_string(), "s3://b/");
        for bad in
            ["b/x", "gs://b", "s3://", "s3:///x", "s3://k:s@b/x", "s3://b/x/../y", "s3://b/x//y"]
        {
            assert!(RemoteUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
