//! The forms object stores print digests in, so a local tree can be compared with what
//! the store says about its copy without downloading it:
//!
//! - `gcs`: what `gsutil hash` prints (and `gsutil ls -L`, `x-goog-hash` and the JSON
//!   API's `crc32c`/`md5Hash` hold): per file `Hashes [base64] for NAME:`, then
//!   `\tHash (crc32c):\t\tVALUE` and `\tHash (md5):\t\tVALUE`, the CRC32C as its 4
//!   big-endian bytes and the MD5 as its 16 bytes, both in base64;
//! - `s3`: the headers S3 returns and takes: `x-amz-checksum-crc64nvme`, `-crc32`,
//!   `-crc32c`, `-sha1`, `-sha256` (base64 of the big-endian checksum or the digest),
//!   `Content-MD5` (base64 MD5) and `ETag` (the `s3etag` rows, quoted as S3 sends it),
//!   under a `Checksums for NAME:` line.
//!
//! Each format holds only what its store computes, in the order asked. Names are written
//! as they are; a name with a newline cannot be written.

use super::writer::{
    FileEntry, ManifestWriter, OutputFormat, Refusal, Unwritable, WriteOptions, one_line,
};
use crate::algo::{self, Algorithm};
use crate::digest::{Digest, Encoding};

/// The algorithms `gcs` writes by default, in gsutil's order.
pub(crate) const GCS_DEFAULT: [&str; 2] = ["crc32c", "md5"];
/// The algorithms `s3` writes by default: the checksum S3 adds to every new object and
/// the ETag of an AWS CLI upload.
pub(crate) const S3_DEFAULT: [&str; 2] = ["crc64nvme", "s3etag"];

/// The header S3 names `algo`'s value with, if S3 has one for it.
pub fn s3_header(algo: &Algorithm) -> Option<&'static str> {
    Some(match algo.name {
        "crc64nvme" => "x-amz-checksum-crc64nvme",
        "crc32" => "x-amz-checksum-crc32",
        "crc32c" => "x-amz-checksum-crc32c",
        "sha1" => "x-amz-checksum-sha1",
        "sha256" => "x-amz-checksum-sha256",
        "md5" => "Content-MD5",
        _ if algo.encoding == Encoding::S3Etag => "ETag",
        _ => return None,
    })
}

/// The value S3 gives for `algo`'s `digest`: base64, or the quoted ETag.
pub fn s3_value(algo: &Algorithm, digest: &Digest) -> String {
    if algo.encoding == Encoding::S3Etag {
        format!("\"{}\"", digest.encode(Encoding::S3Etag))
    } else {
        digest.to_base64()
    }
}

/// The writer of `gcs` and `s3` blocks.
pub(crate) struct CloudWriter {
    format: OutputFormat,
    algos: Vec<&'static Algorithm>,
}

impl CloudWriter {
    /// `format` is [`OutputFormat::Gcs`] or [`OutputFormat::S3`].
    pub(crate) fn new(
        format: OutputFormat,
        algos: Vec<&'static Algorithm>,
        opts: &WriteOptions,
    ) -> Result<Self, Refusal> {
        if opts.zero || opts.binary {
            return Err(Refusal::NoZeroOrBinary(format));
        }
        let held = |a: &Algorithm| match format {
            OutputFormat::Gcs => GCS_DEFAULT.contains(&a.name),
            _ => s3_header(a).is_some(),
        };
        if let Some(not) = algos.iter().find(|a| !held(a)) {
            return Err(Refusal::Cloud(format, not.name));
        }
        Ok(CloudWriter { format, algos })
    }

    /// What the format holds, for messages.
    pub(crate) fn holds(format: OutputFormat) -> &'static str {
        match format {
            OutputFormat::Gcs => "crc32c and md5",
            _ => "crc64nvme, crc32, crc32c, sha1, sha256, md5 and s3etag",
        }
    }
}

impl ManifestWriter for CloudWriter {
    fn algorithms(&self) -> &[&'static Algorithm] {
        &self.algos
    }

    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable> {
        let gcs = self.format == OutputFormat::Gcs;
        one_line(file.name, if gcs { "the gcs format" } else { "the s3 format" })?;
        out.extend_from_slice(if gcs { b"Hashes [base64] for " } else { b"Checksums for " });
        out.extend_from_slice(file.name);
        out.extend_from_slice(b":\n");
        for (a, d) in self.algos.iter().zip(file.digests) {
            let line = if gcs {
                format!("\tHash ({}):\t\t{}\n", a.name, d.to_base64())
            } else {
                format!("{}: {}\n", s3_header(a).unwrap_or(a.name), s3_value(a, d))
            };
            out.extend_from_slice(line.as_bytes());
        }
        Ok(())
    }
}

/// The default algorithms of `format` (gcs or s3).
pub(crate) fn defaults(format: OutputFormat) -> Vec<&'static Algorithm> {
    let names: &[&str] = if format == OutputFormat::Gcs { &GCS_DEFAULT } else { &S3_DEFAULT };
    names.iter().map(|n| algo::lookup(n).expect("registered")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(format: OutputFormat, names: &[&str], name: &[u8], data: &[u8]) -> String {
        let algos: Vec<_> = names.iter().map(|n| algo::lookup(n).unwrap()).collect();
        let digests: Vec<Digest> = algos.iter().map(|a| a.digest(data)).collect();
        let mut w = CloudWriter::new(format, algos, &WriteOptions::default()).unwrap();
        let mut out = Vec::new();
        let file = FileEntry { name, size: data.len() as u64, mtime: None, digests: &digests };
        w.record(&file, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The empty object's values, as GCS and S3 report them, and CRC-32C's check value
    /// ("123456789" -> e3069283, RFC 3720 / the CRC catalogue) in GCS's base64.
    #[test]
    fn known_values() {
        assert_eq!(
            block(OutputFormat::Gcs, &["crc32c", "md5"], b"e", b""),
            "Hashes [base64] for e:\n\tHash (crc32c):\t\tAAAAAA==\n\
             \tHash (md5):\t\t1B2M2Y8AsgTpgAmY7PhCfg==\n"
        );
        assert_eq!(
            block(OutputFormat::Gcs, &["crc32c"], b"c", b"123456789"),
            "Hashes [base64] for c:\n\tHash (crc32c):\t\t4waSgw==\n"
        );
        let all = ["crc64nvme", "crc32", "crc32c", "sha1", "sha256", "md5", "s3etag"];
        assert_eq!(
            block(OutputFormat::S3, &all, b"d/e", b""),
            "Checksums for d/e:\n\
             x-amz-checksum-crc64nvme: AAAAAAAAAAA=\n\
             x-amz-checksum-crc32: AAAAAA==\n\
             x-amz-checksum-crc32c: AAAAAA==\n\
             x-amz-checksum-sha1: 2jmj7l5rSw0yVb/vlWAYkK/YBwk=\n\
             x-amz-checksum-sha256: 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\
             Content-MD5: 1B2M2Y8AsgTpgAmY7PhCfg==\n\
             ETag: \"d41d8cd98f00b204e9800998ecf8427e\"\n"
        );
        // The check values of CRC-32 (cbf43926), CRC-32C and CRC-64/NVME (ae8b14860a799888).
        let check = block(OutputFormat::S3, &["crc32", "crc32c", "crc64nvme"], b"c", b"123456789");
        assert_eq!(
            check,
            "Checksums for c:\nx-amz-checksum-crc32: y/Q5Jg==\nx-amz-checksum-crc32c: 4waSgw==\n\
             x-amz-checksum-crc64nvme: rosUhgp5mIg=\n"
        );
    }

    #[test]
    fn each_store_holds_its_own_digests() {
        let sha256 = algo::lookup("sha256").unwrap();
        let opts = WriteOptions::default();
        let refused = CloudWriter::new(OutputFormat::Gcs, vec![sha256], &opts).err();
        assert_eq!(refused, Some(Refusal::Cloud(OutputFormat::Gcs, "sha256")));
        let blake3 = algo::lookup("blake3").unwrap();
        assert!(CloudWriter::new(OutputFormat::S3, vec![blake3], &opts).is_err());
        let etag16 = algo::lookup("s3etag-16mib").unwrap();
        assert!(CloudWriter::new(OutputFormat::S3, vec![etag16], &opts).is_ok());
        let zero = WriteOptions { zero: true, ..WriteOptions::default() };
        assert!(CloudWriter::new(OutputFormat::S3, defaults(OutputFormat::S3), &zero).is_err());
        let mut w =
            CloudWriter::new(OutputFormat::Gcs, defaults(OutputFormat::Gcs), &opts).unwrap();
        let digests = [Digest::new(&[0; 4]), Digest::new(&[0; 16])];
        let file = FileEntry { name: b"a\nb", size: 0, mtime: None, digests: &digests };
        assert!(w.record(&file, &mut Vec::new()).is_err(), "a newline in a name");
    }
}
