//! `verify --remote` against a real S3 server the tests start: moto's server mode
//! (tests/fixtures/remote/s3server.py), objects put as boto3 and the AWS CLI put them
//! (upload.py: s3transfer's part sizes, each checksum algorithm, SSE-KMS), and a proxy in
//! front of it that answers some requests with 503 SlowDown and gives SSE-KMS objects
//! ETags that are not their MD5, as S3 does (moto keeps the MD5).

use crate::util::{self, fixity, tempdir, write};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

const MIB: usize = 1 << 20;

/// The server of this test process: moto's port and the throttling proxy's.
pub struct Server {
    pub moto: u16,
    pub proxy: u16,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/remote")
}

/// The server, started once per test process; `None` (said, and failed in CI) when moto
/// and its checksum libraries are not installed.
pub fn server() -> Option<&'static Server> {
    static SERVER: OnceLock<Option<Server>> = OnceLock::new();
    let s = SERVER.get_or_init(|| {
        let probe = Command::new("python3")
            .args(["-c", "import moto.server, boto3, awscrt, crc32c, flask"])
            .output();
        if !probe.is_ok_and(|o| o.status.success()) {
            return None;
        }
        let mut child = Command::new("python3")
            .arg(fixtures().join("s3server.py"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut line = String::new();
        BufReader::new(child.stdout.take()?).read_line(&mut line).ok()?;
        let mut words = line.split_whitespace();
        (words.next() == Some("READY")).then_some(())?;
        let moto = words.next()?.parse().ok()?;
        let proxy = words.next()?.parse().ok()?;
        // The server ends when this process does (it watches its parent).
        std::mem::forget(child);
        Some(Server { moto, proxy })
    });
    if s.is_none() {
        util::missing(
            "moto's S3 server",
            "pip install 'moto[server]' boto3 awscrt crc32c (awscrt and crc32c: moto's CRC64NVME and CRC32C)",
        );
    }
    s.as_ref()
}

/// A bucket name of its own for each test.
pub fn bucket(what: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!("fixity-{what}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Puts objects (upload.py's JSON list) into `bucket`.
pub fn upload(port: u16, bucket: &str, uploads: &Value) {
    let mut child = Command::new("python3")
        .arg(fixtures().join("upload.py"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(bucket)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(uploads.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "upload.py: {}", String::from_utf8_lossy(&out.stderr));
}

/// `fixity ARGS` with test credentials in the environment and nothing else of AWS's
/// (no config files, no instance metadata).
pub fn aws(dir: &Path) -> Command {
    let mut c = fixity(dir);
    for v in
        ["AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"]
    {
        c.env_remove(v);
    }
    c.env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_CONFIG_FILE", dir.join("no-aws-config"))
        .env("AWS_SHARED_CREDENTIALS_FILE", dir.join("no-aws-credentials"))
        .env("AWS_EC2_METADATA_DISABLED", "true");
    c
}

fn verify(dir: &Path, port: u16, bucket: &str, extra: &[&str]) -> Output {
    aws(dir)
        .args(["verify", "t", "--remote", &format!("s3://{bucket}/copy")])
        .args(["--endpoint", &format!("http://127.0.0.1:{port}")])
        .args(extra)
        .output()
        .unwrap()
}

/// The JSON lines of a `--json` run: the events by path, and the summary.
pub fn events(out: &Output) -> (Vec<Value>, Value) {
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let mut all: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let summary = all.pop().expect("a summary line");
    assert_eq!(summary["type"], "summary", "{text}");
    (all, summary)
}

fn class_of<'a>(events: &'a [Value], path: &str) -> (&'a str, &'a str) {
    let e =
        events.iter().find(|e| e["path"] == path).unwrap_or_else(|| panic!("no event for {path}"));
    (e["class"].as_str().unwrap(), e["proof"].as_str().unwrap_or("-"))
}

/// Deterministic bytes, different per seed.
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn scan(dir: &Path) {
    let out = fixity(dir).args(["scan", "-q", "t"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// One object per proof fixity knows, and one of each finding: each judged as expected,
/// and a second run proves the same reading no file.
#[test]
fn every_proof_kind_and_every_finding() {
    let Some(srv) = server() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    let mut uploads = Vec::new();
    let mut add = |name: &str, data: &[u8], mut spec: Value| {
        let f = write(&t, name, data);
        spec["key"] = format!("copy/{name}").into();
        spec["file"] = f.to_string_lossy().into_owned().into();
        uploads.push(spec);
    };
    add("single.bin", &bytes(1, 1000), serde_json::json!({ "how": "put" }));
    add("aws-cli.bin", &bytes(2, 20 * MIB), serde_json::json!({}));
    add("five.bin", &bytes(3, 12 * MIB + 7), serde_json::json!({ "part": 5 * MIB }));
    add("six.bin", &bytes(4, 13 * MIB), serde_json::json!({ "part": 6 * MIB }));
    add(
        "one-part.bin",
        &bytes(5, 3 * MIB),
        serde_json::json!({ "part": 5 * MIB, "threshold": MIB }),
    );
    for (i, algo) in ["CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"].iter().enumerate() {
        let name = format!("kms-{}.bin", algo.to_lowercase());
        let spec = serde_json::json!({ "how": "put", "checksum": algo, "sse": "aws:kms" });
        add(&name, &bytes(10 + i as u64, 70_000), spec);
    }
    for (i, algo) in ["CRC32", "SHA256"].iter().enumerate() {
        let name = format!("kms-parts-{}.bin", algo.to_lowercase());
        let spec = serde_json::json!({ "part": 5 * MIB, "checksum": algo, "sse": "aws:kms" });
        add(&name, &bytes(20 + i as u64, 11 * MIB), spec);
    }
    add("kms-bare.bin", &bytes(30, 5000), serde_json::json!({ "how": "put", "sse": "aws:kms" }));
    add("changed.bin", &bytes(31, 5000), serde_json::json!({ "how": "put" }));
    add("shorter.bin", &bytes(32, 5000), serde_json::json!({ "how": "put" }));
    add("sub/dir/deep.bin", &bytes(33, 10), serde_json::json!({ "how": "put" }));
    add("extra.bin", b"only remote", serde_json::json!({ "how": "put" }));
    write(&t, "local-only.bin", b"only here");
    write(&t, "empty", b"");
    uploads.push(serde_json::json!({ "key": "copy/empty", "how": "put", "data": "" }));
    uploads.push(serde_json::json!({ "key": "copy/dir-marker/", "how": "put", "data": "" }));
    uploads.push(serde_json::json!({ "key": "elsewhere/x", "how": "put", "data": "x" }));
    uploads
        .push(serde_json::json!({ "key": "copy/.fixity/catalog.db", "how": "put", "data": "x" }));
    let b = bucket("proofs");
    upload(srv.proxy, &b, &Value::Array(uploads));
    std::fs::remove_file(t.join("extra.bin")).unwrap();
    scan(d.path());
    // After the upload and the scan: the copy now differs (same size), or is shorter.
    upload(
        srv.proxy,
        &b,
        &serde_json::json!([
            { "key": "copy/changed.bin", "how": "put", "data": String::from_utf8_lossy(&[b'z'; 5000]) },
            { "key": "copy/shorter.bin", "how": "put", "data": "short" },
        ]),
    );

    let out = verify(d.path(), srv.proxy, &b, &["--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let (ev, sum) = events(&out);
    let expect = [
        ("single.bin", "ok", "md5-etag"),
        ("aws-cli.bin", "ok", "multipart-etag"),
        ("five.bin", "ok", "multipart-etag"),
        ("six.bin", "ok", "multipart-etag"),
        ("one-part.bin", "ok", "multipart-etag"),
        ("kms-crc32.bin", "ok", "crc32"),
        ("kms-crc32c.bin", "ok", "crc32c"),
        ("kms-crc64nvme.bin", "ok", "crc64nvme"),
        ("kms-sha1.bin", "ok", "sha1"),
        ("kms-sha256.bin", "ok", "sha256"),
        ("kms-parts-crc32.bin", "ok", "composite-crc"),
        ("kms-parts-sha256.bin", "ok", "composite-sha"),
        ("kms-bare.bin", "unprovable", "-"),
        ("changed.bin", "differs", "md5-etag"),
        ("shorter.bin", "differs", "size"),
        ("sub/dir/deep.bin", "ok", "md5-etag"),
        ("extra.bin", "extra", "-"),
        ("local-only.bin", "missing", "-"),
        ("empty", "ok", "md5-etag"),
    ];
    let ok_events = ev.iter().filter(|e| e["class"] == "ok").count();
    assert_eq!(ok_events, 0, "ok objects are not listed: {ev:?}");
    // The ok ones are counted; the rest are listed.
    for (path, class, proof) in expect.iter().filter(|e| e.1 != "ok") {
        assert_eq!(class_of(&ev, path), (*class, *proof), "{path}");
    }
    let kms = ev.iter().find(|e| e["path"] == "kms-bare.bin").unwrap();
    assert!(kms["note"].as_str().unwrap().contains("SSE-KMS"), "{kms}");
    assert_eq!(sum["counts"]["ok"], 14, "{sum}");
    assert_eq!(sum["objects"], 18, "{sum}");
    assert_eq!(sum["skipped"], 2, "the directory marker and .fixity/: {sum}");
    let proofs = &sum["proofs"];
    for (p, n) in [("md5-etag", 3), ("multipart-etag", 4), ("crc32", 1), ("composite-sha", 1)] {
        assert_eq!(proofs[p], n, "{p}: {sum}");
    }
    assert!(sum["files_read"].as_u64().unwrap() > 0, "{sum}");

    // Listed with -v? No: with --json every event that is not ok; the text lists the same.
    let text = verify(d.path(), srv.proxy, &b, &[]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("DIFFERS     changed.bin (md5-etag: remote "), "{text}");
    assert!(text.contains("missing     local-only.bin"), "{text}");
    assert!(text.contains("extra       extra.bin"), "{text}");
    assert!(text.contains("unprovable  kms-bare.bin (SSE-KMS"), "{text}");

    // A second run proves the same from the digests the first one kept: nothing read.
    let again = verify(d.path(), srv.proxy, &b, &["--json"]);
    let (ev2, sum2) = events(&again);
    assert_eq!(sum2["files_read"], 0, "{sum2}");
    assert_eq!(sum2["counts"], sum["counts"]);
    assert_eq!(ev2.len(), ev.len());

    // --download proves what the metadata cannot, from the streamed content.
    let dl = verify(d.path(), srv.proxy, &b, &["--json", "--download"]);
    let (ev3, sum3) = events(&dl);
    assert!(ev3.iter().all(|e| e["path"] != "kms-bare.bin"), "proven ok: {ev3:?}");
    assert_eq!(sum3["proofs"]["download"], 1, "{sum3}");
    assert_eq!(sum3["downloaded"], 1, "{sum3}");

    // status remembers the last comparison per remote.
    let st = fixity(d.path())
        .args(["status", "t", "--remote", &format!("s3://{b}/copy")])
        .output()
        .unwrap();
    let st = String::from_utf8(st.stdout).unwrap();
    assert!(st.contains(&format!("remote s3://{b}/copy: compared ")), "{st}");
    assert!(st.contains("ok 15, DIFFERS 2, missing 1, extra 1, unprovable 0, error 0"), "{st}");
    assert!(st.contains("DIFFERS") || st.contains("differs     changed.bin"), "{st}");
    let js = fixity(d.path()).args(["status", "t", "--json"]).output().unwrap();
    let js: Value = serde_json::from_slice(&js.stdout).unwrap();
    assert_eq!(js["remotes"][0]["remote"], format!("s3://{b}/copy"));
    assert_eq!(js["remotes"][0]["summary"]["counts"]["differs"], 2);
}

/// A local file edited since the scan is never taken for the recorded content: an object
/// only a local read could prove stays unproven, and says why.
#[test]
fn an_edited_file_proves_nothing() {
    let Some(srv) = server() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    let f = write(&t, "a.bin", &bytes(40, 70_000));
    let b = bucket("edited");
    let spec = serde_json::json!([{ "key": "copy/a.bin", "file": f, "how": "put", "checksum": "SHA256", "sse": "aws:kms" }]);
    upload(srv.proxy, &b, &spec);
    scan(d.path());
    std::fs::write(&f, bytes(41, 70_000)).unwrap();
    let out = verify(d.path(), srv.proxy, &b, &["--json"]);
    assert_eq!(out.status.code(), Some(1));
    let (ev, _) = events(&out);
    assert_eq!(class_of(&ev, "a.bin").0, "unprovable");
    assert!(ev[0]["note"].as_str().unwrap().contains("changed since it was recorded"), "{ev:?}");
}

/// Throttling (503 SlowDown and 429 in turn on every third request, through the proxy) is
/// retried with backoff: every object is still compared; the listing spans several pages.
#[test]
fn throttling_is_retried_and_pages_are_merged() {
    let Some(srv) = server() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    let mut uploads = Vec::new();
    for i in 0..1100 {
        let name = format!("f{:04}", i);
        let data = format!("object {i}");
        write(&t, &name, data.as_bytes());
        if i % 97 != 5 {
            // SSE-KMS: the ETags prove nothing, each object needs its HEAD.
            let o = serde_json::json!({ "key": format!("copy/{name}"), "how": "put", "data": data,
                "sse": "aws:kms", "checksum": "SHA256" });
            uploads.push(o);
        }
    }
    let b = bucket("throttle");
    upload(srv.proxy, &b, &Value::Array(uploads));
    scan(d.path());
    let throttle = |n: u32| -> u64 {
        let out = Command::new("python3")
            .args(["-c", &format!("import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{}/__throttle/{n}').read().decode())", srv.proxy)])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().parse().unwrap()
    };
    let before = throttle(3);
    let out = verify(d.path(), srv.proxy, &b, &["--json", "--requests", "16"]);
    let after = throttle(0);
    assert!(after > before, "the proxy refused some requests");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let (ev, sum) = events(&out);
    let missing: Vec<&str> = ev.iter().map(|e| e["path"].as_str().unwrap()).collect();
    let odd: Vec<&Value> = ev.iter().filter(|e| e["note"].is_string()).take(3).collect();
    assert!(odd.is_empty(), "{odd:?}");
    let want: Vec<String> = (0..1100).filter(|i| i % 97 == 5).map(|i| format!("f{i:04}")).collect();
    assert_eq!(missing, want);
    assert!(ev.iter().all(|e| e["class"] == "missing"));
    assert_eq!(sum["counts"]["ok"].as_u64().unwrap() as usize, 1100 - want.len(), "{sum}");
}

/// Credentials come from the SDK's chain: none at all is a clear error (exit 2); a
/// profile of the shared credentials file, picked with --profile, works.
#[test]
fn credentials_come_from_the_chain() {
    let Some(srv) = server() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    let f = write(&t, "a", b"a");
    let b = bucket("creds");
    upload(srv.moto, &b, &serde_json::json!([{ "key": "copy/a", "file": f, "how": "put" }]));
    scan(d.path());
    let url = format!("s3://{b}/copy");
    let endpoint = format!("http://127.0.0.1:{}", srv.moto);
    let run = |c: &mut Command, more: &[&str]| {
        c.args(["verify", "t", "--remote", &url, "--endpoint", &endpoint])
            .args(more)
            .output()
            .unwrap()
    };
    let none =
        run(aws(d.path()).env_remove("AWS_ACCESS_KEY_ID").env_remove("AWS_SECRET_ACCESS_KEY"), &[]);
    assert_eq!(none.status.code(), Some(2));
    let err = String::from_utf8_lossy(&none.stderr);
    assert!(err.contains("AWS_PROFILE") && err.contains(&url), "{err}");
    let creds =
        write(d.path(), "creds", b"[backup]\naws_access_key_id = k\naws_secret_access_key = s\n");
    let mut c = aws(d.path());
    c.env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env("AWS_SHARED_CREDENTIALS_FILE", &creds);
    let with_profile = run(&mut c, &["--profile", "backup"]);
    assert_eq!(
        with_profile.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&with_profile.stderr)
    );
}

/// A bucket that does not exist, a URL that is not one, the xattr store: exit 2, no run.
#[test]
fn no_comparison_is_exit_2() {
    let Some(srv) = server() else { return };
    let d = tempdir();
    write(&d.path().join("t"), "a", b"a");
    scan(d.path());
    let out = verify(d.path(), srv.moto, "fixity-no-such-bucket", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NoSuchBucket"), "{out:?}");
    // Recorded as a comparison cut short.
    let st = fixity(d.path())
        .args(["status", "t", "--remote", "s3://fixity-no-such-bucket/copy"])
        .output()
        .unwrap();
    let st = String::from_utf8(st.stdout).unwrap();
    assert!(st.contains("(incomplete): ok 0"), "{st}");
    for args in [
        vec!["verify", "t", "--remote", "gs://b/x"],
        vec!["verify", "t", "--remote", "s3://k:s@b/x"],
        vec!["verify", "t", "--remote", "s3://b/x", "--store", "xattr"],
        vec!["verify", "t", "--remote", "s3://b/x", "--repair"],
        vec!["status", "t", "--remote", "s3://never/compared"],
    ] {
        let out = aws(d.path()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
}
