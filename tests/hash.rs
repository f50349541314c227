//! `fixity hash`: behaviour beyond the coreutils goldens (trees, -o, JSON, SFV, symlinks,
//! special files, large sparse files, several algorithms at once).

use crate::util::{fixity, have, run, run_stdin, tempdir, write};
use fixity::algo::lookup;
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn several_algorithms_give_tagged_lines_per_file() {
    let d = tempdir();
    write(d.path(), "t/a", b"alpha");
    write(d.path(), "t/b", b"");
    let out = run(d.path(), ["hash", "-a", "md5,sha1,b3", "t"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut want = String::new();
    for (name, data) in [("t/a", &b"alpha"[..]), ("t/b", b"")] {
        for (alg, tag) in [("md5", "MD5"), ("sha1", "SHA1"), ("blake3", "BLAKE3")] {
            let dg = lookup(alg).unwrap().digest(data);
            want.push_str(&format!("{tag} ({name}) = {dg}\n"));
        }
    }
    assert_eq!(text(&out.stdout), want);
}

#[test]
fn default_algorithm_is_blake3_and_stdin_works() {
    let d = tempdir();
    let out = run_stdin(d.path(), ["hash"], b"hi\n");
    let want = format!("{}  -\n", lookup("blake3").unwrap().digest(b"hi\n"));
    assert_eq!(text(&out.stdout), want);
}

#[test]
fn output_file_is_written_atomically_and_never_lists_itself() {
    let d = tempdir();
    write(d.path(), "t/a", b"1");
    write(d.path(), "t/z", b"2");
    for _ in 0..2 {
        let out = run(d.path(), ["hash", "-a", "sha256", "t", "-o", "t/m.sha256"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(out.stdout.is_empty());
        let m = std::fs::read_to_string(d.path().join("t/m.sha256")).unwrap();
        assert_eq!(m.lines().count(), 2, "{m}");
        assert!(!m.contains("m.sha256") && !m.contains("fixity-tmp"), "{m}");
    }
    let names: Vec<_> =
        std::fs::read_dir(d.path().join("t")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 3, "no temporary file is left behind: {names:?}");
    let out = run(d.path(), ["check", "t/m.sha256"]);
    assert!(out.status.success());
}

#[test]
fn excludes_prune_names_and_paths() {
    let d = tempdir();
    for p in ["t/keep", "t/x.tmp", "t/.git/HEAD", "t/build/out", "t/src/build/in"] {
        write(d.path(), p, b"x");
    }
    let out = run(
        d.path(),
        [
            "hash",
            "-a",
            "md5",
            "--exclude",
            "*.tmp",
            "--exclude",
            ".git",
            "--exclude",
            "build/*",
            "t",
        ],
    );
    let s = text(&out.stdout);
    assert!(s.contains("t/keep") && s.contains("t/src/build/in"), "{s}");
    assert!(!s.contains("x.tmp") && !s.contains(".git") && !s.contains("t/build/out"), "{s}");
}

#[test]
fn symlinks_are_skipped_with_a_warning_unless_followed() {
    let d = tempdir();
    write(d.path(), "t/f", b"data");
    std::os::unix::fs::symlink("f", d.path().join("t/link")).unwrap();
    write(d.path(), "t/sub/g", b"more");
    std::os::unix::fs::symlink("..", d.path().join("t/sub/up")).unwrap();
    let out = run(d.path(), ["hash", "-a", "md5", "t"]);
    assert!(out.status.success(), "a skipped link is not a failure");
    assert_eq!(text(&out.stdout).lines().count(), 2);
    let err = text(&out.stderr);
    assert!(err.contains("fixity: t/link: symbolic link not followed"), "{err}");
    let out = run(d.path(), ["hash", "-a", "md5", "-L", "t"]);
    let s = text(&out.stdout);
    assert!(s.contains("t/link") && s.contains("t/f"), "{s}");
    assert!(text(&out.stderr).contains("t/sub/up: directory loop"), "{}", text(&out.stderr));
}

#[test]
fn fifo_in_a_tree_is_skipped_without_hanging_and_read_when_named() {
    let d = tempdir();
    write(d.path(), "t/f", b"x");
    let fifo = d.path().join("t/pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut child = fixity(d.path())
        .args(["hash", "-a", "md5", "t"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(20), "fixity hung on a FIFO in a tree");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(text(&out.stderr).contains("t/pipe: skipping FIFO"), "{}", text(&out.stderr));
    // Named on the command line, a FIFO is read like coreutils reads it.
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, b"through a pipe").unwrap())
    };
    let out = run(d.path(), ["hash", "-a", "md5", "t/pipe"]);
    writer.join().unwrap();
    let want = format!("{}  t/pipe\n", lookup("md5").unwrap().digest(b"through a pipe"));
    assert_eq!(text(&out.stdout), want);
}

#[test]
fn missing_file_is_reported_and_the_run_continues() {
    let d = tempdir();
    write(d.path(), "a", b"x");
    let out = run(d.path(), ["hash", "-a", "md5", "nope", "a"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "fixity: nope: No such file or directory\n");
    assert!(text(&out.stdout).ends_with("  a\n"));
}

#[test]
fn unreadable_file_is_reported_and_the_run_continues() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempdir();
    let p = write(d.path(), "t/secret", b"x");
    write(d.path(), "t/z", b"y");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads anything: as root the binary runs as nobody instead (CI runs as root).
    let Some(mut cmd) = crate::util::unprivileged(d.path()) else {
        crate::util::skip("unreadable file", "running as root and cannot switch to nobody");
        return;
    };
    let out = cmd.args(["hash", "-a", "md5", "t"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "fixity: t/secret: Permission denied\n");
    assert_eq!(text(&out.stdout), format!("{}  t/z\n", lookup("md5").unwrap().digest(b"y")));
}

#[test]
fn json_lines_carry_every_digest_and_exact_names() {
    let d = tempdir();
    write(d.path(), "t/plain", b"abc");
    let odd = std::ffi::OsStr::from_bytes(b"t/caf\xe9");
    write(d.path(), odd, b"");
    let out = run(d.path(), ["hash", "--json", "-a", "sha256,crc32", "t"]);
    let lines: Vec<serde_json::Value> =
        text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["path"], "t/caf\u{fffd}");
    assert_eq!(lines[0]["path_hex"], "742f636166e9");
    assert_eq!(lines[1]["path"], "t/plain");
    assert_eq!(lines[1]["size"], 3);
    assert_eq!(lines[1]["digests"]["sha256"], lookup("sha256").unwrap().digest(b"abc").to_hex());
    assert_eq!(lines[1]["digests"]["crc32"], "352441c2");
}

#[test]
fn sfv_output_is_uppercase_crc32_with_a_comment_header() {
    let d = tempdir();
    write(d.path(), "t/check", b"123456789");
    let out = run(d.path(), ["hash", "--sfv", "t"]);
    assert_eq!(
        text(&out.stdout),
        format!("; Generated by fixity {}\nt/check CBF43926\n", env!("CARGO_PKG_VERSION"))
    );
    let out = run(d.path(), ["hash", "--sfv", "-a", "md5", "t"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn usage_errors_exit_2() {
    let d = tempdir();
    let out = run(d.path(), ["hash", "-a", "nosuchhash", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown algorithm 'nosuchhash'"));
    let out = run(d.path(), ["hash", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn algorithms_lists_the_registry() {
    let d = tempdir();
    let out = run(d.path(), ["algorithms"]);
    let s = text(&out.stdout);
    for a in fixity::algo::ALGORITHMS {
        assert!(s.contains(a.name), "{} missing", a.name);
    }
}

#[test]
fn sparse_file_over_4_gib() {
    let d = tempdir();
    let p = d.path().join("sparse");
    let f = std::fs::File::create(&p).unwrap();
    let len: u64 = (4 << 30) + 12345;
    f.set_len(len).unwrap();
    drop(f);
    // Expected digests computed in-process over the same zeros, streamed.
    let zeros = vec![0u8; 1 << 20];
    let mut want = String::new();
    for (alg, tag) in [("xxh3", "XXH3"), ("blake3", "BLAKE3")] {
        let mut h = lookup(alg).unwrap().hasher();
        let mut left = len;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            h.update(&zeros[..n]);
            left -= n as u64;
        }
        want.push_str(&format!("{tag} (sparse) = {}\n", h.finish()));
    }
    let out = run(d.path(), ["hash", "-a", "xxh3,blake3", "sparse"]);
    assert_eq!(text(&out.stdout), want, "{}", text(&out.stderr));
    // BLAKE3 alone takes the mapped, multi-threaded path.
    let out = run(d.path(), ["hash", "sparse"]);
    let b3 = want.lines().nth(1).unwrap().rsplit(' ').next().unwrap();
    assert_eq!(text(&out.stdout), format!("{b3}  sparse\n"));
}

#[test]
fn a_file_written_during_the_read_is_reported_as_changed() {
    let d = tempdir();
    let p = d.path().join("growing");
    std::fs::write(&p, vec![7u8; 64 << 20]).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (p, stop) = (p.clone(), stop.clone());
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                f.write_all(b"more").unwrap();
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };
    let mut seen = false;
    for _ in 0..5 {
        let out = run(d.path(), ["hash", "-a", "sha512", "--no-mmap", "growing"]);
        if out.status.code() == Some(1) {
            assert!(text(&out.stderr).contains("growing: file changed while it was being read"));
            assert!(out.stdout.is_empty(), "no digest for a changed file");
            seen = true;
            break;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    assert!(seen, "a file appended to all along was never reported as changed");
}

#[test]
fn a_weak_algorithm_for_tamper_evidence_gets_a_note_not_a_refusal() {
    let d = tempdir();
    write(d.path(), "f", b"x");
    let out = run(d.path(), ["hash", "--for", "tamper", "-a", "md5,sha256,crc32", "f"]);
    assert!(out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("fixity: note: md5 is broken-for-tamper"), "{err}");
    assert!(err.contains("fixity: note: crc32 is non-cryptographic checksum"), "{err}");
    assert!(!err.contains("sha256 is"), "{err}");
    assert_eq!(text(&out.stdout).lines().count(), 3, "the manifest is still written");
    let quiet = run(d.path(), ["hash", "--for", "corruption", "-a", "md5", "f"]);
    assert!(quiet.stderr.is_empty());
}

#[test]
fn algorithms_lists_strength_and_measured_speed() {
    let d = tempdir();
    let out = run(d.path(), ["algorithms"]);
    let t = text(&out.stdout);
    let md5 = t.lines().find(|l| l.starts_with("md5 ")).unwrap();
    assert!(md5.contains("broken-for-tamper") && md5.contains(" MB/s)"), "{md5}");
    assert!(t.lines().next().unwrap().contains("speed (1 thread)"));
    let plain = text(&run(d.path(), ["algorithms", "--no-speed"]).stdout);
    assert!(!plain.contains("MB/s"));
    let json: serde_json::Value = serde_json::from_str(
        text(&run(d.path(), ["algorithms", "--json"]).stdout).lines().next().unwrap(),
    )
    .unwrap();
    assert!(json["mb_per_s_one_thread"].as_f64().unwrap() > 0.0);
    assert!(json["speed_class"].is_string());
}

/// imohash of a file whose three 16 KiB samples are `samples` and whose size is `size`,
/// built from algorithm.md independently of fixity's imohash code: MurmurHash3 x64-128
/// of the samples (each 8-byte half big-endian, as Go's murmur3 writes them), its first
/// bytes replaced by the size as a uvarint.
fn imohash_of_samples(samples: &[u8], size: u64) -> String {
    let m = lookup("murmur3").unwrap().digest(samples);
    let mut out: Vec<u8> = m.as_bytes().chunks(8).flat_map(|h| h.iter().rev().copied()).collect();
    let (mut v, mut i) = (size, 0);
    while v >= 0x80 {
        out[i] = v as u8 | 0x80;
        v >>= 7;
        i += 1;
    }
    out[i] = v as u8;
    out.iter().map(|b| format!("{b:02x}")).collect()
}

fn poke(path: &std::path::Path, offset: u64, byte: u8) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(&[byte], offset).unwrap();
}

/// Alone, imohash reads only its samples: a 20 GiB sparse file hashes at once (reading it
/// whole would take minutes), a byte changed inside a sample changes the digest, one
/// changed between the samples does not.
#[test]
fn imohash_reads_only_samples_of_a_large_sparse_file() {
    let d = tempdir();
    let p = d.path().join("big");
    let len: u64 = 20 << 30;
    std::fs::File::create(&p).unwrap().set_len(len).unwrap();
    let digest = || {
        let out = run(d.path(), ["hash", "-a", "imohash", "big"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let line = text(&out.stdout);
        line.split_whitespace().next().unwrap().to_string()
    };
    let mut samples = vec![0u8; 3 * 16384];
    assert_eq!(digest(), imohash_of_samples(&samples, len), "all zeros");
    // Between the samples: unseen (that is what "not a content hash" means).
    poke(&p, 5 << 30, 0xff);
    poke(&p, len / 2 - 1, 0xff);
    poke(&p, len - 16385, 0xff);
    assert_eq!(digest(), imohash_of_samples(&samples, len), "outside the samples");
    // Inside the middle sample, at len / 2 + 5.
    poke(&p, len / 2 + 5, 0x42);
    samples[16384 + 5] = 0x42;
    let changed = digest();
    assert_eq!(changed, imohash_of_samples(&samples, len), "inside the middle sample");
    assert_ne!(changed, imohash_of_samples(&vec![0u8; 3 * 16384], len));
    // Inside the last sample.
    poke(&p, len - 1, 0x01);
    samples[3 * 16384 - 1] = 0x01;
    assert_eq!(digest(), imohash_of_samples(&samples, len), "inside the last sample");
}

/// With another algorithm the file is streamed once and imohash keeps its windows from
/// the stream: the same digest as the sample-only read.
#[test]
fn imohash_streamed_with_others_matches_sampled_read() {
    let d = tempdir();
    let data: Vec<u8> =
        (0..3_000_017u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    write(d.path(), "f", &data);
    write(d.path(), "small", &data[..100_000]);
    let alone = run(d.path(), ["hash", "-a", "imohash", "f", "small"]);
    assert!(alone.status.success(), "{}", text(&alone.stderr));
    let both = run(d.path(), ["hash", "-a", "md5,imohash", "f", "small"]);
    assert!(both.status.success(), "{}", text(&both.stderr));
    let imo_lines: Vec<String> = text(&both.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("IMOHASH (").map(|r| r.to_string()))
        .collect();
    let want: Vec<String> = text(&alone.stdout)
        .lines()
        .map(|l| {
            let (digest, name) = l.split_once("  ").unwrap();
            format!("{name}) = {digest}")
        })
        .collect();
    assert_eq!(imo_lines, want);
    let mid = data.len() / 2;
    let mut samples = data[..16384].to_vec();
    samples.extend_from_slice(&data[mid..mid + 16384]);
    samples.extend_from_slice(&data[data.len() - 16384..]);
    assert!(want[0].ends_with(&imohash_of_samples(&samples, data.len() as u64)), "{want:?}");
}

/// Standard input has no size to place the samples by: a clear error, nothing printed.
#[test]
fn imohash_of_stdin_is_refused_with_the_cause() {
    let d = tempdir();
    let out = run_stdin(d.path(), ["hash", "-a", "imohash", "-"], b"some data");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("imohash samples a file at offsets set by its size"), "{err}");
    let out = run_stdin(d.path(), ["hash", "-a", "sha256,imohash"], b"some data");
    assert!(!out.status.success(), "also when combined with others");
}

#[test]
fn a_sampled_algorithm_gets_a_note_for_any_purpose() {
    let d = tempdir();
    write(d.path(), "f", b"x");
    for purpose in ["tamper", "corruption"] {
        let out = run(d.path(), ["hash", "--for", purpose, "-a", "imohash", "f"]);
        assert!(out.status.success());
        let err = text(&out.stderr);
        assert!(err.contains("note: imohash is sampled, not a content hash"), "{err}");
    }
}

#[test]
fn base64_digests_on_gnu_and_bsd_lines_as_cksum_writes_them() {
    let d = tempdir();
    write(d.path(), "f", b"abc");
    let b64 = lookup("sha256").unwrap().digest(b"abc").to_base64();
    let out = run(d.path(), ["hash", "-a", "sha256", "--tag", "--base64", "f"]);
    assert_eq!(text(&out.stdout), format!("SHA256 (f) = {b64}\n"));
    let out = run(d.path(), ["hash", "-a", "sha256", "--base64", "f"]);
    assert_eq!(text(&out.stdout), format!("{b64}  f\n"));
    // And it checks back.
    std::fs::write(d.path().join("m.sha256"), &out.stdout).unwrap();
    assert!(run(d.path(), ["check", "m.sha256"]).status.success());
    assert_eq!(run(d.path(), ["hash", "--json", "--base64", "f"]).status.code(), Some(2));
}

/// `-j` is capped (a huge value once spawned thousands of threads for minutes): the run
/// says so on stderr, uses the cap, and gives the same digests.
#[test]
fn jobs_are_capped_with_a_note() {
    let d = tempdir();
    for i in 0..20 {
        write(d.path(), format!("t/f{i}"), format!("{i}\n").as_bytes());
    }
    let plain = run(d.path(), ["hash", "-a", "md5", "-r", "t"]);
    let out = run(d.path(), ["hash", "-a", "md5", "-r", "-j", "100000", "t"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, plain.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-j 100000 is more than the 256 worker threads"), "{err}");
    let small =
        run(d.path(), ["hash", "-a", "md5", "-r", "--buffer-memory", "64K", "-j", "8", "t"]);
    assert_eq!(small.status.code(), Some(0));
    assert_eq!(small.stdout, plain.stdout);
    assert!(small.stderr.is_empty());
    let bad = run(d.path(), ["hash", "--buffer-memory", "lots", "t"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// Files of /proc report a size of 0 but have content: hashed like coreutils does.
#[test]
fn proc_files_are_hashed() {
    let d = tempdir();
    let out = run(d.path(), ["hash", "-a", "sha256", "/proc/self/cmdline", "/proc/cpuinfo"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with("  /proc/cpuinfo\n"), "{text}");
    if have("sha256sum") {
        let real = std::process::Command::new("sha256sum").arg("/proc/cpuinfo").output().unwrap();
        assert_eq!(text.lines().nth(1).unwrap().as_bytes(), real.stdout.trim_ascii_end());
    }
}

/// Output to a full disk (`/dev/full`): the native command names the cause without Rust's
/// "(os error N)" and exits 2; a coreutils drop-in says "write error" and exits 1, as the
/// real tool does.
#[test]
fn a_full_disk_on_stdout_is_reported() {
    let d = tempdir();
    let f = write(d.path(), "f", b"data\n");
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out =
        fixity(d.path()).args(["hash", "-a", "sha256"]).arg(&f).stdout(full()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), "fixity: write error: No space left on device\n");
    let link = d.path().join("sha256sum");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &link).unwrap();
    let out = std::process::Command::new(&link)
        .arg("f")
        .current_dir(d.path())
        .stdout(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), format!("{}: write error\n", link.display()));
    if have("sha256sum") {
        let real = std::process::Command::new("sha256sum")
            .arg("f")
            .current_dir(d.path())
            .stdout(full())
            .output()
            .unwrap();
        assert_eq!(real.status.code(), Some(1));
        assert_eq!(text(&real.stderr), "sha256sum: write error\n");
    }
}

/// A full disk under an output file: every writer names the file and the cause, and exits
/// 2. `/dev/full` stands for the disk where the output is written in place (a device is
/// never replaced by a rename); as root a 64 KiB tmpfs is filled up too, for the files
/// written beside their target and renamed (`-o`, a bag's manifests, a plan).
#[test]
fn a_full_disk_under_an_output_file_names_it() {
    let d = tempdir();
    write(d.path(), "t/a", b"alpha\n");
    write(d.path(), "t/b", b"beta\n");
    let expect = |out: std::process::Output, file: &str| {
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr),
            format!("fixity: cannot write {file}: No space left on device\n")
        );
    };
    expect(run(d.path(), ["hash", "-r", "t", "-o", "/dev/full"]), "/dev/full");
    std::os::unix::fs::symlink("/dev/full", d.path().join("full.b3")).unwrap();
    expect(run(d.path(), ["hash", "-r", "t", "-o", "full.b3"]), "full.b3");
    let scan = run(d.path(), ["scan", "t"]);
    assert!(scan.status.success(), "{}", text(&scan.stderr));
    expect(run(d.path(), ["status", "t", "--metrics", "/dev/full"]), "/dev/full");
    expect(run(d.path(), ["export", "t", "-o", "/dev/full"]), "/dev/full");
    expect(run(d.path(), ["export", "t", "--format", "premis", "-o", "/dev/full"]), "/dev/full");
    let plan = run(d.path(), ["plan", "t", "--parts", "1", "-o", "p"]);
    assert!(plan.status.success(), "{}", text(&plan.stderr));
    let part = run(d.path(), ["hash", "--plan", "p", "--part", "0"]);
    assert!(part.status.success(), "{}", text(&part.stderr));
    expect(run(d.path(), ["merge", "p", "-o", "/dev/full"]), "/dev/full");

    let Some(small) = SmallTmpfs::mount(&d.path().join("small")) else { return };
    let s = &small.0;
    write(s, "bag/f", b"payload\n");
    std::fs::create_dir(s.join("plan")).unwrap();
    small.fill();
    let out = run(d.path(), ["hash", "-r", "t", "-o", "small/m.b3"]);
    expect(out, "small/m.b3");
    assert!(!s.join("m.b3").exists(), "no torn manifest is left");
    let out = run(d.path(), ["bag", "create", "small/bag"]);
    let err = text(&out.stderr);
    assert!(
        err.contains("small/bag/manifest-") && err.contains(": No space left on device\n"),
        "{err}"
    );
    let out = run(d.path(), ["plan", "t", "--parts", "1", "-o", "small/plan"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("fixity: small/plan/") && err.ends_with(": No space left on device\n"),
        "{err}"
    );
}

/// A 64 KiB tmpfs mounted (as root) for a test, unmounted when dropped.
struct SmallTmpfs(std::path::PathBuf);

impl SmallTmpfs {
    fn mount(at: &std::path::Path) -> Option<SmallTmpfs> {
        if !std::fs::metadata("/proc/self")
            .is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        {
            crate::util::skip("a full tmpfs", "not running as root (cannot mount one)");
            return None;
        }
        std::fs::create_dir_all(at).unwrap();
        let st = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(at)
            .status();
        if !st.is_ok_and(|s| s.success()) {
            crate::util::skip(
                "a full tmpfs",
                "mount -t tmpfs failed (a container without CAP_SYS_ADMIN?)",
            );
            return None;
        }
        Some(SmallTmpfs(at.to_path_buf()))
    }

    /// Writes a file until the file system is full.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.0.join("filler")).unwrap();
        let block = [0u8; 4096];
        loop {
            if let Err(e) = f.write_all(&block) {
                assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
                return;
            }
        }
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Many small files of mixed sizes (empty, around the block, chunk and parent boundaries,
/// on both sides of the lane engine's 64 KiB limit for BLAKE3, a non-UTF-8 name): `fixity
/// hash -a blake3 -r` gives every one the `blake3` crate's hash (its small files go
/// through the BLAKE3 lanes, issue 27), and b3sum's where b3sum is installed.
#[test]
fn blake3_of_many_small_files_equals_the_crate_and_b3sum() {
    let d = tempdir();
    let edges = [0, 1, 63, 64, 65, 1023, 1024, 1025, 2047, 2048, 2049, 3072, 4095, 4096, 4097];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut files: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for i in 0..300usize {
        let len = match i % 3 {
            0 => edges[i / 3 % edges.len()],
            1 => (next() % 9000) as usize,
            _ => (next() % (80 * 1024)) as usize,
        };
        let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let rel = format!("t/d{}/f{i:03}", i % 7).into_bytes();
        files.push((rel, data));
    }
    files.push((b"t/d0/caf\xe9".to_vec(), (0..4096u32).map(|i| (i % 251) as u8).collect()));
    for (rel, data) in &files {
        write(d.path(), std::ffi::OsStr::from_bytes(rel), data);
    }
    let out = run(d.path(), ["hash", "--json", "-a", "blake3", "-r", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut got = std::collections::HashMap::new();
    for line in text(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let path = match v["path_hex"].as_str() {
            Some(h) => (0..h.len() / 2)
                .map(|k| u8::from_str_radix(&h[2 * k..2 * k + 2], 16).unwrap())
                .collect(),
            None => v["path"].as_str().unwrap().as_bytes().to_vec(),
        };
        got.insert(path, v["digests"]["blake3"].as_str().unwrap().to_string());
    }
    assert_eq!(got.len(), files.len());
    for (rel, data) in &files {
        let want = blake3::hash(data).to_hex().to_string();
        assert_eq!(got[rel], want, "{} of {} bytes", String::from_utf8_lossy(rel), data.len());
    }
    if !have("b3sum") {
        crate::util::missing("b3sum", "not installed");
        return;
    }
    let names: Vec<&std::ffi::OsStr> = files
        .iter()
        .filter(|(rel, _)| std::str::from_utf8(rel).is_ok())
        .map(|(rel, _)| std::ffi::OsStr::from_bytes(rel))
        .collect();
    let out =
        std::process::Command::new("b3sum").args(&names).current_dir(d.path()).output().unwrap();
    assert!(out.status.success(), "b3sum: {}", text(&out.stderr));
    let lines = text(&out.stdout);
    assert_eq!(lines.lines().count(), names.len());
    for line in lines.lines() {
        let (hex, name) = line.split_once("  ").unwrap();
        assert_eq!(got[name.as_bytes()], hex, "b3sum {name}");
    }
}
