//! Every SIMD level the CPU has, through the binary: `--simd LEVEL` (and `FIXITY_SIMD`)
//! caps fixity's own kernels, and whatever the level the recovery data `protect` makes
//! are the same bytes, a repair restores the same bytes, and the lane engine's digests of
//! many small files are the same. A level this CPU lacks is refused (exit 2) and said
//! ("skipped: ..."), or fails the test under `FIXITY_REQUIRE_KERNELS=1`.

use crate::util::{Rng, fixity, tempdir, write};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

const LEVELS: [&str; 5] = ["scalar", "ssse3", "avx2", "avx512", "gfni"];

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn at(dir: &Path, level: &str, argv: &[&str]) -> Output {
    fixity(dir).arg("--simd").arg(level).args(argv).output().expect("run fixity")
}

/// The levels this CPU has, by asking the binary (a level it lacks exits 2 and says so).
fn levels(dir: &Path) -> Vec<&'static str> {
    let require = std::env::var_os("FIXITY_REQUIRE_KERNELS").is_some_and(|v| v == "1");
    let mut have = Vec::new();
    for level in LEVELS {
        let o = at(dir, level, &["algorithms"]);
        if o.status.success() {
            have.push(level);
            continue;
        }
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        assert!(text(&o.stderr).contains("this CPU has no"), "{}", text(&o.stderr));
        assert!(!require, "this CPU has no {level} (FIXITY_REQUIRE_KERNELS=1)");
        eprintln!("skipped: the {level} level: this CPU does not have it");
    }
    assert_eq!(have.first(), Some(&"scalar"));
    have
}

/// Every file under `dir`, by relative path.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn random(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next() as u8).collect()
}

#[test]
fn protect_makes_the_same_recovery_data_and_repair_the_same_bytes_at_every_level() {
    let d = tempdir();
    let have = levels(d.path());
    let mut rng = Rng(41);
    // Sizes around the kernels' steps and tiles, an odd length, an empty file.
    let contents: Vec<(String, Vec<u8>)> = [0usize, 1, 4095, 70_001, 1 << 20, 3 * (1 << 20) + 7]
        .iter()
        .enumerate()
        .map(|(i, &n)| (format!("f{i}"), random(&mut rng, n)))
        .collect();
    let mut made: Option<BTreeMap<String, Vec<u8>>> = None;
    for level in &have {
        let t = d.path().join(format!("t-{level}"));
        for (name, data) in &contents {
            write(&t, name, data);
        }
        // The same mtimes everywhere: the sets' sidecars record them.
        for (name, _) in &contents {
            let f = std::fs::File::options().write(true).open(t.join(name)).unwrap();
            f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000))
                .unwrap();
        }
        let tree = format!("t-{level}");
        let o = at(d.path(), level, &["scan", "-q", &tree]);
        assert!(o.status.success(), "{level}: {}", text(&o.stderr));
        let o = at(d.path(), level, &["protect", "--redundancy", "10%", &tree]);
        assert!(o.status.success(), "protect at {level}: {}", text(&o.stderr));
        let sets: BTreeMap<String, Vec<u8>> = files(&t.join(".fixity/par2"))
            .into_iter()
            .filter(|(n, _)| n.ends_with(".par2"))
            .collect();
        assert!(!sets.is_empty(), "{level}: no recovery files");
        match &made {
            None => made = Some(sets),
            Some(first) => {
                assert_eq!(
                    first.keys().collect::<Vec<_>>(),
                    sets.keys().collect::<Vec<_>>(),
                    "the files protect makes at {level}"
                );
                for (name, bytes) in first {
                    assert!(sets[name] == *bytes, "{name} differs at {level} from {}", have[0]);
                }
            }
        }
        // Rot in two files (a few bytes, size and mtime kept: a whole new content would be
        // an edit, never repaired); a repair at this level brings the bytes back.
        let mut big = contents[5].1.clone();
        big[123_456] ^= 0x40;
        big[3 << 20] ^= 0x01;
        std::fs::write(t.join("f5"), &big).unwrap();
        let mut mid = contents[3].1.clone();
        mid[30_000..31_000].fill(0);
        std::fs::write(t.join("f3"), &mid).unwrap();
        for (name, _) in [&contents[5], &contents[3]] {
            let f = std::fs::File::options().write(true).open(t.join(name)).unwrap();
            f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000))
                .unwrap();
        }
        let o = at(d.path(), level, &["verify", &tree]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "verify finds the rot at {level}: {}",
            text(&o.stdout)
        );
        let o = at(d.path(), level, &["repair", &tree]);
        assert!(o.status.success(), "repair at {level}: {}{}", text(&o.stdout), text(&o.stderr));
        for (name, data) in &contents {
            let now = std::fs::read(t.join(name)).unwrap();
            assert!(now == *data, "{name} after repair at {level}: {}", text(&o.stdout));
        }
    }
}

#[test]
fn many_small_files_hash_alike_at_every_level() {
    let d = tempdir();
    let have = levels(d.path());
    let mut rng = Rng(7);
    let t = d.path().join("t");
    for i in 0..150 {
        let n = match i % 5 {
            0 => 0,
            1 => (rng.next() % 64) as usize,
            2 => 4096,
            3 => (rng.next() % 20_000) as usize,
            _ => 55 + i,
        };
        write(&t, format!("d{}/f{i}", i % 7), &random(&mut rng, n));
    }
    for algo in ["md5", "sha1", "sha256", "blake3"] {
        let mut first: Option<(String, Vec<u8>)> = None;
        for level in &have {
            let o = at(d.path(), level, &["hash", "-a", algo, "-r", "t"]);
            assert!(o.status.success(), "{algo} at {level}: {}", text(&o.stderr));
            let mut lines: Vec<&[u8]> = o.stdout.split(|&b| b == b'\n').collect();
            lines.sort();
            let out = lines.join(&b'\n');
            match &first {
                None => first = Some((level.to_string(), out)),
                Some((l0, o0)) => assert!(*o0 == out, "{algo}: {level} differs from {l0}"),
            }
        }
    }
}

#[test]
fn the_environment_variable_caps_too_and_a_bad_level_is_refused() {
    let d = tempdir();
    let o = fixity(d.path())
        .env("FIXITY_SIMD", "scalar")
        .args(["bench", "algorithms", "-a", "par2,md5", "--sizes", "64K", "--runs", "1"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["machine"]["simd_cap"], "scalar");
    let rows = v["rows"].as_array().unwrap();
    let kernel = |name: &str| {
        rows.iter().find(|r| r["algorithm"] == name).map(|r| r["kernel"].clone()).unwrap()
    };
    assert_eq!(kernel("par2-10%"), "scalar", "{v}");
    assert_eq!(kernel("md5-many"), "scalar", "no lanes at scalar: {v}");

    for (how, bad) in [("env", "mmx"), ("flag", "mmx")] {
        let mut c = fixity(d.path());
        if how == "env" {
            c.env("FIXITY_SIMD", bad).arg("algorithms");
        } else {
            c.args(["--simd", bad, "algorithms"]);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{how}");
        assert!(text(&o.stderr).contains("no SIMD level \"mmx\""), "{}", text(&o.stderr));
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn bench_compares_every_level_it_is_asked_for() {
    let d = tempdir();
    let have = levels(d.path());
    let o = fixity(d.path())
        .args(["bench", "algorithms", "-a", "par2,sha256,blake3", "--sizes", "4Ki", "--runs", "1"])
        .args(["--levels", "all", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    for name in ["par2-10%", "sha256-many", "blake3-many"] {
        let at: Vec<&str> = rows
            .iter()
            .filter(|r| r["algorithm"] == name)
            .map(|r| r["simd"].as_str().unwrap())
            .collect();
        assert_eq!(at, have, "{name}: a row per level, lowest first");
    }
    // The crate's row is measured once, at no level.
    let sha = rows.iter().filter(|r| r["algorithm"] == "sha256").collect::<Vec<_>>();
    assert_eq!(sha.len(), 1);
    assert!(sha[0]["simd"].is_null());
    // In the table, each row names its kernel and the cap.
    let o = fixity(d.path())
        .args(["bench", "algorithms", "-a", "par2", "--sizes", "4Ki", "--runs", "1"])
        .args(["--levels", "scalar"])
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert!(out.contains("scalar (cap scalar)"), "{out}");
    assert!(out.contains("SIMD levels (fixity's kernels): scalar"), "{out}");
    let o = fixity(d.path()).args(["bench", "algorithms", "--levels", "mmx"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--levels: no SIMD level"), "{}", text(&o.stderr));
}
