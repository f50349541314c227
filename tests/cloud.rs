//! Cloud-comparable digests: the S3 ETag rows (`s3etag`, `s3etag-SIZE`) against an
//! independent computation at the part boundaries and against the ETags of uploads made
//! by s3transfer (boto3 and the AWS CLI's uploader) into moto's S3 mock, the `gcs` and `s3` formats against
//! their goldens (tests/fixtures/cloud/make-golden.py, computed without fixity) and
//! against `gsutil hash` itself, and ETag manifests through `check` and the catalog.

use crate::util;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

const MIB: usize = 1 << 20;

/// Python's hashlib, part by part: the ETag of each file named on the command line for
/// parts of `argv[1]` bytes, as `S3ETAG-TAG (name) = etag` lines (names as given).
const PY_ETAG: &str = r#"
import hashlib, sys
part, tag = int(sys.argv[1]), sys.argv[2]
for name in sys.argv[3:]:
    data = open(name, "rb").read()
    if len(data) < part:
        etag = hashlib.md5(data).hexdigest()
    else:
        chunks = [data[i:i + part] for i in range(0, len(data), part)]
        joined = b"".join(hashlib.md5(c).digest() for c in chunks)
        etag = "%s-%d" % (hashlib.md5(joined).hexdigest(), len(chunks))
    print("%s (%s) = %s" % (tag, name, etag))
"#;

fn pseudo_random(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = util::Rng(seed);
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        out.extend_from_slice(&rng.next().to_le_bytes());
    }
    out.truncate(len);
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn s3etag_matches_hashlib_at_the_part_boundaries() {
    if !util::have("python3") {
        return util::missing("python3", "computes the ETags independently");
    }
    let dir = util::tempdir();
    // Around one, two and three parts of 5 MiB and 8 MiB (the default).
    let sizes = [
        0,
        1,
        5 * MIB - 1,
        5 * MIB,
        5 * MIB + 1,
        8 * MIB - 1,
        8 * MIB,
        8 * MIB + 1,
        10 * MIB,
        10 * MIB + 1,
        16 * MIB + 1,
    ];
    let names: Vec<String> = sizes.iter().map(|n| format!("f{n}")).collect();
    for (i, (name, &size)) in names.iter().zip(&sizes).enumerate() {
        util::write(dir.path(), name, &pseudo_random(size, i as u64 + 1));
    }
    for (algo, part, tag) in
        [("s3etag", 8 * MIB, "S3ETAG"), ("s3etag-5MiB", 5 * MIB, "S3ETAG-5MiB")]
    {
        let ours = util::run(
            dir.path(),
            ["hash", "--format", "bsd", "-a", algo]
                .iter()
                .chain(names.iter().map(String::as_str).collect::<Vec<_>>().iter()),
        );
        assert!(ours.status.success(), "{algo}: {}", text(&ours.stderr));
        let py = Command::new("python3")
            .current_dir(dir.path())
            .args(["-c", PY_ETAG, &part.to_string(), tag])
            .args(&names)
            .output()
            .unwrap();
        assert!(py.status.success(), "{}", text(&py.stderr));
        assert_eq!(text(&ours.stdout), text(&py.stdout), "{algo}");
        // Both kinds of ETag are there: plain MD5s and `-N` ones up to three parts.
        let out = text(&ours.stdout);
        for want in ["-1\n", "-2\n", "-3\n"] {
            assert!(out.contains(want), "{algo}: no {want:?} in\n{out}");
        }
    }
}

/// boto3's `upload_file` (s3transfer, what the AWS CLI uploads with) into moto's S3 mock,
/// in process: s3transfer decides the parts (default 8 MiB, or `argv[1]` bytes for part
/// size and threshold), moto computes the ETag. Prints `NAME ETAG CRC32` per file, the
/// CRC32 S3 reports (boto3 sends one) or `-` when it is a multipart upload's.
const PY_MOTO: &str = r#"
import sys
import boto3
from boto3.s3.transfer import TransferConfig
from moto import mock_aws
part = int(sys.argv[1])
config = TransferConfig() if part == 0 else TransferConfig(multipart_threshold=part, multipart_chunksize=part)
with mock_aws():
    s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    s3.create_bucket(Bucket="fixity-test")
    for name in sys.argv[2:]:
        s3.upload_file(name, "fixity-test", name, Config=config)
        head = s3.head_object(Bucket="fixity-test", Key=name, ChecksumMode="ENABLED")
        etag = head["ETag"].strip('"')
        crc = "-" if "-" in etag else head.get("ChecksumCRC32", "?")
        print(name, etag, crc)
"#;

#[test]
fn s3etag_is_the_etag_of_an_s3transfer_upload() {
    let probe = Command::new("python3").args(["-c", "import boto3, moto"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return util::missing("python3 boto3 and moto", "upload through s3transfer to moto's S3");
    }
    let dir = util::tempdir();
    let sizes = [0, 3, 5 * MIB, 8 * MIB - 1, 8 * MIB, 8 * MIB + 1, 16 * MIB + 1];
    let names: Vec<String> = sizes.iter().map(|n| format!("f{n}")).collect();
    for (i, (name, &size)) in names.iter().zip(&sizes).enumerate() {
        util::write(dir.path(), name, &pseudo_random(size, i as u64 + 100));
    }
    for (algo, part) in [("s3etag", 0), ("s3etag-5MiB", 5 * MIB)] {
        let theirs = Command::new("python3")
            .current_dir(dir.path())
            .args(["-c", PY_MOTO, &part.to_string()])
            .args(&names)
            .output()
            .unwrap();
        assert!(theirs.status.success(), "{}", text(&theirs.stderr));
        let list = format!("crc32,{algo}");
        let args = ["hash", "--format", "s3", "-a", &list];
        let ours = util::fixity(dir.path()).args(args).args(&names).output().unwrap();
        assert!(ours.status.success(), "{}", text(&ours.stderr));
        let ours = text(&ours.stdout);
        let theirs = text(&theirs.stdout);
        assert_eq!(theirs.lines().count(), names.len(), "{theirs}");
        for line in theirs.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            let block = format!("Checksums for {}:\n", f[0]);
            let at = ours.find(&block).unwrap_or_else(|| panic!("{block} in {ours}"));
            let mine = &ours[at + block.len()..];
            let mine: Vec<&str> = mine.lines().take(2).collect();
            assert_eq!(mine[1], format!("ETag: \"{}\"", f[1]), "{algo}: {line}");
            if f[2] != "-" {
                assert_eq!(mine[0], format!("x-amz-checksum-crc32: {}", f[2]), "{line}");
            }
        }
        // Exactly one part size is a multipart upload of one part, as s3transfer does it.
        let one = if part == 0 { "f8388608 " } else { "f5242880 " };
        assert!(theirs.lines().any(|l| l.starts_with(one) && l.contains("-1 ")), "{theirs}");
    }
}

/// The goldens' tree (see make-golden.py), in their order.
fn golden_tree(dir: &Path) -> Vec<&'static [u8]> {
    let sp: Vec<u8> = (0..1000).map(|i| (i % 251) as u8).collect();
    let files: [(&'static [u8], Vec<u8>); 5] = [
        (b"abc", b"abc".to_vec()),
        (b"check", b"123456789".to_vec()),
        (b"empty", Vec::new()),
        (b"sp ace", sp),
        (b"caf\xe9", vec![b'x'; 100]),
    ];
    for (name, data) in &files {
        util::write(dir, OsStr::from_bytes(name), data);
    }
    files.iter().map(|f| f.0).collect()
}

fn golden(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cloud").join(name);
    text(&std::fs::read(path).unwrap())
}

#[test]
fn gcs_and_s3_formats_match_their_goldens() {
    let dir = util::tempdir();
    let names = golden_tree(dir.path());
    let run = |args: &[&str]| {
        let out = util::fixity(dir.path())
            .args(args)
            .args(names.iter().map(|n| OsStr::from_bytes(n)))
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    assert_eq!(run(&["hash", "--format", "gcs"]), golden("gcs.txt"));
    let all = "crc64nvme,crc32,crc32c,sha1,sha256,md5,s3etag";
    assert_eq!(run(&["hash", "--format", "s3", "-a", all]), golden("s3.txt"));
    // The default of s3 is what S3 gives every new object: CRC-64/NVME and the ETag.
    let default = run(&["hash", "--format", "s3"]);
    let want: String = golden("s3.txt")
        .lines()
        .filter(|l| !l.starts_with("x-amz-checksum-crc32") && !l.starts_with("x-amz-checksum-sha"))
        .filter(|l| !l.starts_with("Content-MD5"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(default, want);
}

#[test]
fn gcs_and_s3_refuse_what_they_cannot_hold() {
    let dir = util::tempdir();
    util::write(dir.path(), "a\nb", b"x");
    for format in ["gcs", "s3"] {
        let out = util::run(dir.path(), ["hash", "--format", format, "a\nb"]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert!(text(&out.stderr).contains("cannot hold a name with a newline"), "{format}");
    }
    let out = util::run(dir.path(), ["hash", "--format", "gcs", "-a", "sha256", "a\nb"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("gcs lines hold crc32c and md5 only, not sha256"));
    let out = util::run(dir.path(), ["hash", "--format", "s3", "-a", "blake3", "a\nb"]);
    assert_eq!(out.status.code(), Some(2));
    let out = util::run(dir.path(), ["hash", "--base64", "-a", "s3etag", "a\nb"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("S3 ETag (s3etag) is written one way only"));
    let out = util::run(dir.path(), ["hash", "-a", "s3etag-1MiB", "a\nb"]);
    assert_eq!(out.status.code(), Some(2), "S3's parts are 5 MiB to 5 GiB");
}

#[test]
fn gcs_format_is_what_gsutil_hash_prints() {
    if !util::have("gsutil") {
        return util::missing("gsutil", "the gcs format is compared with `gsutil hash`");
    }
    let dir = util::tempdir();
    let files = ["abc", "empty", "sp ace", "big"];
    util::write(dir.path(), "abc", b"abc");
    util::write(dir.path(), "empty", b"");
    util::write(dir.path(), "sp ace", b"123456789");
    util::write(dir.path(), "big", &pseudo_random(3 * MIB + 5, 9));
    let theirs = Command::new("gsutil")
        .current_dir(dir.path())
        .arg("hash")
        .args(files)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .unwrap();
    assert!(theirs.status.success(), "gsutil hash: {}", text(&theirs.stderr));
    let ours = util::run(dir.path(), ["hash", "--format", "gcs"].iter().chain(files.iter()));
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_eq!(text(&ours.stdout), text(&theirs.stdout));
}

#[test]
fn s3etag_manifests_check_and_the_catalog_keeps_them() {
    let dir = util::tempdir();
    let d = dir.path();
    util::write(d, "big", &pseudo_random(10 * MIB + 1, 3));
    util::write(d, "empty", b"");
    util::write(d, OsStr::from_bytes(b"caf\xe9"), b"abc");
    util::write(d, "new\nline", b"abc");
    let files = ["big", "empty", "new\nline"];
    let manifest = |args: &[&str], to: &str| {
        let out = util::run(d, args.iter().chain(files.iter()));
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        std::fs::write(d.join(to), &out.stdout).unwrap();
        text(&out.stdout)
    };
    // Tagged lines name the part size; untagged ones need -a or a manifest named .s3etag.
    let bsd = manifest(&["hash", "--format", "bsd", "-a", "s3etag-5MiB"], "m.bsd");
    assert!(bsd.contains("S3ETAG-5MiB (big) = ") && bsd.contains("-3\n"), "{bsd}");
    assert!(bsd.contains("\\S3ETAG-5MiB (new\\nline) = "), "escaped: {bsd}");
    let gnu = manifest(&["hash", "-a", "s3etag"], "m.s3etag");
    assert!(gnu.contains("-2  big\n"), "{gnu}");
    std::fs::copy(d.join("m.s3etag"), d.join("m.txt")).unwrap();
    for args in
        [&["check", "m.bsd"][..], &["check", "m.s3etag"], &["check", "-a", "s3etag", "m.txt"]]
    {
        let out = util::run(d, args);
        assert!(out.status.success(), "{args:?}: {}{}", text(&out.stdout), text(&out.stderr));
        assert!(text(&out.stdout).contains("big: OK"), "{args:?}");
    }
    // Without a hint an ETag line is not guessed (its part size is not in it).
    let out = util::run(d, ["check", "m.txt"]);
    assert_ne!(out.status.code(), Some(0));
    // Another part size is another function.
    let out = util::run(d, ["check", "-a", "s3etag-5MiB", "m.txt"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));

    // The catalog records the ETags and tells bitrot from edits with them.
    let out = util::run(d, ["scan", "-a", "s3etag-5MiB", "."]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = util::run(d, ["export", "--format", "s3", "."]);
    // Every record but the one whose name holds a newline, which is named.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cannot hold a name with a newline"));
    let exported = text(&out.stdout);
    assert!(exported.contains("Checksums for empty:\nETag: \"d41d8cd98f00b204e9800998ecf8427e\""));
    assert!(exported.contains("Checksums for big:\nETag: \""), "{exported}");
    assert!(bsd.lines().any(|l| l.starts_with("S3ETAG-5MiB (big) = ")
        && exported.contains(&format!("\"{}\"", l.rsplit(' ').next().unwrap()))));
    let big = d.join("big");
    let mtime = std::fs::metadata(&big).unwrap().modified().unwrap();
    let mut data = std::fs::read(&big).unwrap();
    data[7 * MIB] ^= 1;
    std::fs::write(&big, &data).unwrap();
    std::fs::File::options().write(true).open(&big).unwrap().set_modified(mtime).unwrap();
    let out = util::run(d, ["verify", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("CORRUPT     big (recorded "), "{said}");
    // The finding shows the ETags as S3 would: 10 MiB + 1 in 5 MiB parts is 3 parts.
    assert!(said.contains("-3, now ") && said.contains("-3)"), "{said}");
}
