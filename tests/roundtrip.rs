//! Property test: random trees with random byte names and contents survive
//! hash -> manifest -> check, and a changed file is caught.

use crate::util::{run, tempdir};
use proptest::prelude::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

fn name() -> impl Strategy<Value = Vec<u8>> {
    // Any bytes but NUL and `/`, with the hard ones (newline, CR, backslash, space,
    // non-UTF-8) made likely.
    let byte = prop_oneof![
        3 => prop::sample::select(b"abcXYZ019-_.".to_vec()),
        1 => prop::sample::select(b"\n\r\\ *()=\t\xe9\xff".to_vec()),
        1 => 1u8..=255u8,
    ]
    .prop_filter("no slash", |b| *b != b'/');
    prop::collection::vec(byte, 1..12).prop_filter("not . or ..", |n| n != b"." && n != b"..")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn hash_then_check(files in prop::collection::btree_map(
        prop::collection::vec(name(), 1..3),
        prop::collection::vec(any::<u8>(), 0..3000),
        1..12,
    ), alg in prop::sample::select(vec!["md5", "sha256", "blake3", "xxh128", "crc32c", "sha3-512"]),
       tag in any::<bool>()) {
        let d = tempdir();
        let root = d.path().join("t");
        std::fs::create_dir(&root).unwrap();
        let mut written = Vec::new();
        for (parts, data) in &files {
            let mut p = root.clone();
            for part in &parts[..parts.len() - 1] {
                p.push(OsStr::from_bytes(part));
            }
            if std::fs::create_dir_all(&p).is_err() || p.is_file() {
                continue;
            }
            p.push(OsStr::from_bytes(parts.last().unwrap()));
            if p.is_dir() {
                continue;
            }
            std::fs::write(&p, data).unwrap();
            written.push(p);
        }
        let mut args = vec!["hash", "-a", alg, "-o", "m.sum", "t"];
        if tag {
            args.push("--tag");
        }
        let out = run(d.path(), &args);
        prop_assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let out = run(d.path(), ["check", "--strict", "-a", alg, "m.sum"]);
        prop_assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let oks = String::from_utf8_lossy(&out.stdout).matches(": OK\n").count();
        prop_assert_eq!(oks, written.len());
        // Change one file: exactly one FAILED.
        let victim = &written[0];
        let mut data = std::fs::read(victim).unwrap();
        data.push(1);
        std::fs::write(victim, &data).unwrap();
        let out = run(d.path(), ["check", "--quiet", "-a", alg, "m.sum"]);
        prop_assert_eq!(out.status.code(), Some(1));
        prop_assert_eq!(String::from_utf8_lossy(&out.stdout).matches(": FAILED\n").count(), 1);
    }
}
