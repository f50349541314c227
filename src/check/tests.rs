use super::*;
use crate::algo;
use crate::pipeline::Config;
use std::ffi::OsString;
use std::path::Path;

fn d(bytes: &[u8]) -> Digest {
    Digest::new(bytes)
}

fn hashed(size: u64, digests: Vec<Digest>) -> Hashed {
    Hashed { size, mtime_ns: None, digests, file_id: None, ctime_ns: None, access: None }
}

fn not_found() -> ReadError {
    ReadError::Io(io::Error::from(io::ErrorKind::NotFound))
}

#[test]
fn comparison_counts_every_pair() {
    let (a, b, c) = (d(&[1, 2, 3]), d(&[1, 2, 4]), d(&[1, 2]));
    assert!(digests_match([(&a, &a)]));
    assert!(!digests_match([(&a, &b)]));
    // A prefix is no match: the lengths differ.
    assert!(!digests_match([(&a, &c)]));
    assert!(!digests_match([(&c, &a)]));
    // A mismatch anywhere fails the whole line, whichever pair it is in.
    assert!(!digests_match([(&a, &b), (&a, &a)]));
    assert!(!digests_match([(&a, &a), (&a, &b)]));
    assert!(digests_match([(&a, &a), (&b, &b)]));
    assert!(digests_match([]));
    assert_eq!(agreeing([(&a, &a), (&a, &b), (&b, &b), (&c, &a)]), 2);
    assert_eq!(agreeing([]), 0);
}

#[test]
fn every_outcome() {
    let want = [d(&[7; 4]), d(&[9; 8])];
    let good = hashed(5, vec![d(&[7; 4]), d(&[9; 8])]);
    let bad_second = hashed(5, vec![d(&[7; 4]), d(&[9; 7])]);
    let key = |o: Outcome| o.key();
    assert_eq!(key(classify(&want, None, Ok(&good), false)), "ok");
    assert_eq!(key(classify(&want, Some(5), Ok(&good), false)), "ok");
    // The size a line records must agree too.
    assert_eq!(key(classify(&want, Some(6), Ok(&good), false)), "failed");
    assert_eq!(key(classify(&want, None, Ok(&bad_second), false)), "failed");
    assert_eq!(key(classify(&want, None, Err::<Hashed, _>(not_found()), false)), "missing");
    assert_eq!(key(classify(&want, None, Err::<Hashed, _>(not_found()), true)), "ignored");
    assert_eq!(key(classify(&want, None, Err::<Hashed, _>(ReadError::Changed), true)), "changed");
    assert_eq!(key(classify(&want, None, Err::<Hashed, _>(ReadError::Escapes), false)), "refused");
    let denied = ReadError::Io(io::Error::from(io::ErrorKind::PermissionDenied));
    let o = classify(&want, None, Err::<Hashed, _>(denied), true);
    assert_eq!(o.key(), "unreadable");
    assert!(o.error().is_some_and(|e| matches!(e, ReadError::Io(_))));
    assert!(Outcome::Ok.error().is_none());
    assert!(Outcome::of_error(ReadError::Changed, false).error().is_some());
}

#[test]
fn verdicts() {
    let c = |f: &dyn Fn(&mut Counts)| {
        let mut c = Counts { properly_formatted: 1, ok: 1, ..Counts::default() };
        f(&mut c);
        c
    };
    assert_eq!(c(&|_| {}).verdict(false, false), Verdict::Clean);
    assert_eq!(c(&|c| c.mismatched = 1).verdict(false, false), Verdict::Failed);
    assert_eq!(c(&|c| c.unreadable = 1).verdict(false, false), Verdict::Failed);
    assert_eq!(c(&|c| c.refused = 1).verdict(false, false), Verdict::Failed);
    assert_eq!(c(&|c| c.properly_formatted = 0).verdict(false, false), Verdict::Failed);
    assert_eq!(c(&|c| c.malformed = 1).verdict(false, false), Verdict::Clean);
    assert_eq!(c(&|c| c.malformed = 1).verdict(true, false), Verdict::Failed);
    assert_eq!(c(&|c| c.ambiguous = 1).verdict(false, false), Verdict::Ambiguous);
    // --ignore-missing: nothing verified is a failure; a mismatch counts as verified.
    let none = c(&|c| {
        c.ok = 0;
        c.ignored_missing = 1
    });
    assert_eq!(none.verdict(false, true), Verdict::Failed);
    assert_eq!(none.verdict(false, false), Verdict::Clean);
}

/// Runs a check of `manifests` and returns the events, rendered as short strings.
fn events(plan: &CheckPlan) -> Vec<String> {
    let mut out = Vec::new();
    run(plan, &Config::for_storage(false), &mut |e| {
        out.push(match e {
            Event::Checked { manifest, lineno, name, sums, bytes, outcome } => {
                let name = Path::new(std::str::from_utf8(&name).unwrap());
                let file = name.file_name().unwrap().to_string_lossy().into_owned();
                format!("{manifest}:{lineno} {file} {} {} {bytes:?}", sums[0].0.name, outcome.key())
            }
            Event::Malformed { manifest, lineno, .. } => format!("{manifest}:{lineno} malformed"),
            Event::Ambiguous { manifest, lineno, fits } => {
                format!("{manifest}:{lineno} ambiguous {}", fits.len())
            }
            Event::Outside { manifest, lineno } => format!("{manifest}:{lineno} outside"),
            Event::Refused { manifest, lineno, .. } => format!("{manifest}:{lineno} refused"),
            Event::ManifestUnreadable { manifest, error } => {
                format!("{manifest} unreadable {}", error.is_some())
            }
            Event::ManifestDone { manifest, counts, verdict } => format!(
                "{manifest} done ok={} failed={} unreadable={} malformed={} {verdict:?}",
                counts.ok, counts.mismatched, counts.unreadable, counts.malformed
            ),
        });
        true
    });
    out
}

#[test]
fn the_job_emits_one_event_per_line_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let sha256 = algo::lookup("sha256").unwrap();
    let md5 = algo::lookup("md5").unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(&a, b"alpha").unwrap();
    std::fs::write(&b, b"beta").unwrap();
    let line = |digest: &Digest, p: &Path| format!("{}  {}\n", digest.to_hex(), p.display());
    let mut text = line(&sha256.digest(b"alpha"), &a);
    text += &line(&sha256.digest(b"not beta"), &b);
    text += &line(&sha256.digest(b"gone"), &dir.path().join("gone"));
    text += "this is no checksum line\n";
    // A manifest named for SHA-256 holds no MD5 line.
    text += &line(&md5.digest(b"alpha"), &a);
    let manifest = dir.path().join("list.sha256");
    std::fs::write(&manifest, text).unwrap();
    let plan = CheckPlan {
        manifests: vec![manifest.clone().into(), OsString::from(dir.path().join("nothing"))],
        ..CheckPlan::default()
    };
    assert_eq!(
        events(&plan),
        [
            "0:1 outside",
            "0:1 a sha256 ok Some(5)",
            "0:2 b sha256 failed Some(4)",
            "0:3 gone sha256 missing None",
            "0:4 malformed",
            "0:5 malformed",
            "0 done ok=1 failed=1 unreadable=1 malformed=2 Failed",
            "1 unreadable true",
        ]
    );
    // --ignore-missing drops the missing file (what --status shows is the renderer's).
    let plan = CheckPlan {
        manifests: vec![manifest.clone().into()],
        ignore_missing: true,
        ..CheckPlan::default()
    };
    let got = events(&plan);
    assert!(got.contains(&"0:3 gone sha256 ignored None".to_string()), "{got:?}");
    assert_eq!(got.last().unwrap(), "0 done ok=1 failed=1 unreadable=0 malformed=2 Failed");
    // --confine refuses every absolute path before reading anything.
    let plan =
        CheckPlan { manifests: vec![manifest.into()], confine: true, ..CheckPlan::default() };
    let got = events(&plan);
    assert_eq!(got[..3], ["0:1 refused", "0:2 refused", "0:3 refused"]);
    assert!(got.last().unwrap().ends_with("Failed"));

    // 32 hex digits fit MD5 and six others: ambiguous without a hint, decided by -a.
    let plain = dir.path().join("plain");
    std::fs::write(&plain, line(&md5.digest(b"alpha"), &a)).unwrap();
    let plan = CheckPlan { manifests: vec![plain.clone().into()], ..CheckPlan::default() };
    let got = events(&plan);
    assert_eq!(
        got[1..],
        ["0:1 ambiguous 7", "0 done ok=0 failed=0 unreadable=0 malformed=0 Ambiguous"]
    );
    let plan =
        CheckPlan { manifests: vec![plain.into()], forced: Some(md5), ..CheckPlan::default() };
    let got = events(&plan);
    assert_eq!(
        got[1..],
        ["0:1 a md5 ok Some(5)", "0 done ok=1 failed=0 unreadable=0 malformed=0 Clean"]
    );
}

#[test]
fn the_coreutils_reader_runs_in_drop_in_mode() {
    let dir = tempfile::tempdir().unwrap();
    let md5 = algo::lookup("md5").unwrap();
    let a = dir.path().join("a");
    std::fs::write(&a, b"alpha").unwrap();
    let manifest = dir.path().join("list");
    let text = format!("# comment\n{}  {}\nMD5 (x) = 00\n", md5.digest(b"alpha"), a.display());
    std::fs::write(&manifest, text).unwrap();
    let plan = CheckPlan {
        manifests: vec![manifest.into()],
        forced: Some(md5),
        coreutils: true,
        ..CheckPlan::default()
    };
    // The comment is skipped as md5sum skips it; no note about the absolute path.
    assert_eq!(
        events(&plan),
        [
            "0:2 a md5 ok Some(5)",
            "0:3 malformed",
            "0 done ok=1 failed=0 unreadable=0 malformed=1 Clean"
        ]
    );
}
