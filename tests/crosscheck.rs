//! Live cross-checks against peer tools, on a pseudo-random tree of awkward sizes.
//!
//! Each test looks for its peer tool first and, when it is missing, prints a visible
//! `skipped: <tool>: not installed` line and passes. The tree is seeded (set
//! `FIXITY_CROSSCHECK_SEED` to try another one; the seed is printed on failure).
//!
//! Peers: GNU coreutils (md5sum, sha*sum, b2sum), rhash (crc32, crc32c, sha3-256,
//! sha3-512, blake2s, blake2b, the hand-written has160, edonr256/512, snefru128/256,
//! SFV, and TTH, BTIH, AICH, ED2K at their chunk, part, block and piece boundaries),
//! xxhsum (xxh64, xxh3, xxh128), b3sum (blake3),
//! cksfv (SFV).

use crate::util;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Output, Stdio};

// ------------------------------------------------------------------ the random tree

/// xorshift64*: tiny, deterministic, good enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

fn seed() -> u64 {
    std::env::var("FIXITY_CROSSCHECK_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_f1c5)
}

/// A random tree under `dir/R`. Returns the files as `R/...`, byte-wise sorted (the
/// order fixity prints a tree in). Names are tame (letters, digits, `-`, `_`, `.`, and
/// spaces when `spaces`): peers disagree on escaping, which the goldens cover instead.
fn random_tree(dir: &Path, spaces: bool) -> Vec<String> {
    let mut rng = Rng(seed() | 1);
    const MIB: usize = 1 << 20;
    let mut sizes: Vec<usize> = vec![
        0,
        0,
        1,
        2,
        63,
        64,
        65,
        1000,
        4095,
        4096,
        4097,
        65535,
        65536,
        65537,
        131073,
        MIB + 7,
        3 * MIB + 17,
    ];
    for _ in 0..12 {
        sizes.push(rng.below(200_000) as usize);
    }
    let alphabet: &[u8] = if spaces {
        b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_. "
    } else {
        b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."
    };
    let dirs = ["", "d1/", "d1/sub/", "d-2/", "d1.x/", "deep/er/est/"];
    let mut names = Vec::new();
    for (i, size) in sizes.into_iter().enumerate() {
        let len = 1 + rng.below(12) as usize;
        let mut stem: String =
            (0..len).map(|_| alphabet[rng.below(alphabet.len() as u64) as usize] as char).collect();
        // No leading/trailing space or leading dot or dash: keep every peer happy.
        stem = stem.trim_matches(' ').trim_start_matches(['.', '-']).to_string();
        let name = format!("R/{}{stem}{i:02}", dirs[rng.below(dirs.len() as u64) as usize]);
        let mut data = vec![0u8; size];
        rng.fill(&mut data);
        util::write(dir, &name, &data);
        names.push(name);
    }
    std::fs::create_dir_all(dir.join("R/empty-dir")).unwrap();
    names.sort();
    names
}

// ------------------------------------------------------------------ helpers

fn tool_output(dir: &Path, tool: &str, args: &[&str]) -> Output {
    Command::new(tool)
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {tool}: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A command line for messages, long file lists cut short.
fn show(args: &[&str]) -> String {
    if args.len() <= 8 {
        args.join(" ")
    } else {
        format!("{} ... ({} more)", args[..6].join(" "), args.len() - 6)
    }
}

fn fixity_ok(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = util::run(dir, args);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "fixity {} failed ({:?}; seed {}):\n{}",
        show(args),
        out.status,
        seed(),
        text(&out.stderr)
    );
    out.stdout
}

fn tool_ok(dir: &Path, tool: &str, args: &[&str]) -> Vec<u8> {
    let out = tool_output(dir, tool, args);
    assert!(
        out.status.success(),
        "{tool} {} failed ({:?}):\n{}",
        show(args),
        out.status,
        text(&out.stderr)
    );
    out.stdout
}

/// Whether `tool` is installed; prints the visible skip line when not.
fn need(tool: &str) -> bool {
    if util::have(tool) {
        true
    } else {
        util::missing(tool, "not installed");
        false
    }
}

/// Parses checksum lines of any common shape into name -> lowercase digest:
/// `digest  name`, `digest *name`, `TAG (name) = digest`, `XXH3_digest  name`.
fn parse_digests(out: &[u8]) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for line in text(out).lines() {
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        let (name, digest) = if let (Some(open), Some(eq)) = (line.find(" ("), line.rfind(") = ")) {
            (line[open + 2..eq].to_string(), line[eq + 4..].to_string())
        } else if let Some(sp) = line.find(' ') {
            let digest = &line[..sp];
            let digest = digest.rsplit('_').next().unwrap();
            let rest = &line[sp + 1..];
            let name = rest.strip_prefix(' ').or_else(|| rest.strip_prefix('*')).unwrap_or(rest);
            (name.to_string(), digest.to_string())
        } else {
            panic!("unparsable checksum line {line:?}");
        };
        map.insert(name, digest.to_ascii_lowercase());
    }
    map
}

/// Compares two name -> digest maps, listing every difference.
fn assert_same_digests(
    what: &str,
    peer: &BTreeMap<String, String>,
    ours: &BTreeMap<String, String>,
) {
    let mut problems = Vec::new();
    for (name, d) in peer {
        match ours.get(name) {
            Some(o) if o == d => {}
            Some(o) => problems.push(format!("  {name}: peer {d}, fixity {o}")),
            None => problems.push(format!("  {name}: peer {d}, fixity printed no line")),
        }
    }
    for name in ours.keys().filter(|n| !peer.contains_key(*n)) {
        problems.push(format!("  {name}: fixity printed a line, the peer did not"));
    }
    assert!(problems.is_empty(), "{what} (seed {}):\n{}", seed(), problems.join("\n"));
}

fn assert_bytes_eq(what: &str, expected: &[u8], got: &[u8]) {
    if let Some(d) = crate::golden::diff(what, expected, got) {
        panic!("{what} (seed {}):\n{d}", seed());
    }
}

// ------------------------------------------------------------------ coreutils

/// `fixity hash -a ALGO R` prints exactly what `TOOL R/...` prints for the same files.
fn coreutils_same_output(tool: &str, algo: &str) {
    if !need(tool) {
        return;
    }
    let dir = util::tempdir();
    let files = random_tree(dir.path(), true);
    let mut args: Vec<&str> = vec!["--"];
    args.extend(files.iter().map(String::as_str));
    let expected = tool_ok(dir.path(), tool, &args);
    let got = fixity_ok(dir.path(), &["hash", "-a", algo, "R"]);
    assert_bytes_eq(&format!("fixity hash -a {algo} R vs {tool}"), &expected, &got);
    // The same files named one by one.
    let mut fargs: Vec<&str> = vec!["hash", "-a", algo, "--"];
    fargs.extend(files.iter().map(String::as_str));
    let got = fixity_ok(dir.path(), &fargs);
    assert_bytes_eq(&format!("fixity hash -a {algo} FILES vs {tool}"), &expected, &got);
}

#[test]
fn md5sum_same_output() {
    coreutils_same_output("md5sum", "md5");
}
#[test]
fn sha1sum_same_output() {
    coreutils_same_output("sha1sum", "sha1");
}
#[test]
fn sha224sum_same_output() {
    coreutils_same_output("sha224sum", "sha224");
}
#[test]
fn sha256sum_same_output() {
    coreutils_same_output("sha256sum", "sha256");
}
#[test]
fn sha384sum_same_output() {
    coreutils_same_output("sha384sum", "sha384");
}
#[test]
fn sha512sum_same_output() {
    coreutils_same_output("sha512sum", "sha512");
}
#[test]
fn b2sum_same_output() {
    coreutils_same_output("b2sum", "blake2b");
}

/// The GNU tool verifies fixity's manifests (plain, `--tag`, `-b`) with --strict.
fn gnu_checks_fixity_manifest(tool: &str, algo: &str, ext: &str) {
    if !need(tool) {
        return;
    }
    let dir = util::tempdir();
    let files = random_tree(dir.path(), true);
    let expected_ok: String = files.iter().map(|f| format!("{f}: OK\n")).collect();
    for flags in [&[][..], &["--tag"][..], &["-b"][..]] {
        let mut args = vec!["hash", "-a", algo];
        args.extend_from_slice(flags);
        args.push("R");
        let manifest = fixity_ok(dir.path(), &args);
        let name = format!("list.{ext}");
        std::fs::write(dir.path().join(&name), &manifest).unwrap();
        let out = tool_output(dir.path(), tool, &["-c", "--strict", &name]);
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{tool} -c --strict rejected `fixity {}` output ({:?}):\n{}\nmanifest:\n{}",
            args.join(" "),
            out.status,
            text(&out.stderr),
            text(&manifest)
        );
        assert_bytes_eq(
            &format!("{tool} -c of `fixity {}`", args.join(" ")),
            expected_ok.as_bytes(),
            &out.stdout,
        );
    }
}

#[test]
fn sha256sum_checks_fixity_manifest() {
    gnu_checks_fixity_manifest("sha256sum", "sha256", "sha256");
}
#[test]
fn md5sum_checks_fixity_manifest() {
    gnu_checks_fixity_manifest("md5sum", "md5", "md5");
}
#[test]
fn b2sum_checks_fixity_manifest() {
    gnu_checks_fixity_manifest("b2sum", "blake2b", "b2");
}

/// `fixity check` of the GNU tool's manifest prints what `TOOL -c` prints: first with
/// every file intact, then after damaging the tree (a changed file, a deleted file, a
/// malformed line), with and without --warn.
fn fixity_checks_gnu_manifest(tool: &str, ext: &str, gnu_flags: &[&str]) {
    if !need(tool) {
        return;
    }
    let dir = util::tempdir();
    let files = random_tree(dir.path(), true);
    let mut args: Vec<&str> = gnu_flags.to_vec();
    args.push("--");
    args.extend(files.iter().map(String::as_str));
    let mut manifest = tool_ok(dir.path(), tool, &args);
    let name = format!("list.{ext}");
    let compare = |when: &str, extra: &[&str]| {
        let mut gnu_args = vec!["-c"];
        gnu_args.extend_from_slice(extra);
        gnu_args.push(&name);
        let want = tool_output(dir.path(), tool, &gnu_args);
        let mut fx_args = vec!["check"];
        fx_args.extend_from_slice(extra);
        fx_args.push(&name);
        let got = util::run(dir.path(), &fx_args);
        let want_err = text(&want.stderr).replace(&format!("{tool}:"), "fixity:");
        let what =
            format!("fixity {} vs {tool} {} ({when})", fx_args.join(" "), gnu_args.join(" "));
        assert_bytes_eq(&format!("{what}: stdout"), &want.stdout, &got.stdout);
        assert_bytes_eq(&format!("{what}: stderr"), want_err.as_bytes(), &got.stderr);
        assert_eq!(want.status.code(), got.status.code(), "{what}: exit code (seed {})", seed());
    };
    std::fs::write(dir.path().join(&name), &manifest).unwrap();
    compare("intact", &[]);
    compare("intact", &["--strict"]);
    // Damage: change the first non-empty file, delete another, add a malformed line.
    let changed =
        files.iter().find(|f| std::fs::metadata(dir.path().join(f)).unwrap().len() > 0).unwrap();
    let mut data = std::fs::read(dir.path().join(changed)).unwrap();
    data[0] ^= 1;
    std::fs::write(dir.path().join(changed), &data).unwrap();
    let deleted = files.iter().rev().find(|f| *f != changed).unwrap();
    std::fs::remove_file(dir.path().join(deleted)).unwrap();
    manifest.extend_from_slice(b"not a checksum line\n");
    std::fs::write(dir.path().join(&name), &manifest).unwrap();
    compare("damaged", &[]);
    compare("damaged", &["--warn"]);
    compare("damaged", &["--quiet"]);
    compare("damaged", &["--ignore-missing"]);
}

#[test]
fn fixity_checks_sha256sum_manifest() {
    fixity_checks_gnu_manifest("sha256sum", "sha256", &[]);
}
#[test]
fn fixity_checks_sha256sum_tag_manifest() {
    fixity_checks_gnu_manifest("sha256sum", "sha256", &["--tag"]);
}
#[test]
fn fixity_checks_md5sum_binary_manifest() {
    fixity_checks_gnu_manifest("md5sum", "md5", &["-b"]);
}
#[test]
fn fixity_checks_b2sum_manifest() {
    fixity_checks_gnu_manifest("b2sum", "b2", &[]);
}
#[test]
fn fixity_checks_sha512sum_manifest() {
    fixity_checks_gnu_manifest("sha512sum", "sha512", &[]);
}

// ------------------------------------------------------------------ rhash

/// Whether rhash lists `name` (as `rhash --list-hashes` spells it).
fn rhash_has(name: &str) -> bool {
    let out = tool_output(Path::new("."), "rhash", &["--list-hashes"]);
    text(&out.stdout).lines().any(|l| l.trim().eq_ignore_ascii_case(name))
}

/// `rhash --simple --FLAG FILES` and `fixity hash -a ALGO R` give the same digests.
fn rhash_same_digests(algo: &str, flag: &str, listed: &str) {
    if !need("rhash") {
        return;
    }
    if !rhash_has(listed) {
        util::skip(&format!("rhash {flag}"), "this rhash does not support it");
        return;
    }
    let dir = util::tempdir();
    let files = random_tree(dir.path(), true);
    let mut args = vec!["--simple", flag, "--"];
    args.extend(files.iter().map(String::as_str));
    let peer = parse_digests(&tool_ok(dir.path(), "rhash", &args));
    assert_eq!(
        peer.len(),
        files.len(),
        "rhash printed {} lines for {} files",
        peer.len(),
        files.len()
    );
    let ours = parse_digests(&fixity_ok(dir.path(), &["hash", "-a", algo, "R"]));
    assert_same_digests(&format!("fixity hash -a {algo} vs rhash {flag}"), &peer, &ours);
}

#[test]
fn rhash_crc32() {
    rhash_same_digests("crc32", "--crc32", "CRC32");
}
#[test]
fn rhash_crc32c() {
    rhash_same_digests("crc32c", "--crc32c", "CRC32C");
}
#[test]
fn rhash_sha3_256() {
    rhash_same_digests("sha3-256", "--sha3-256", "SHA3-256");
}
#[test]
fn rhash_sha3_512() {
    rhash_same_digests("sha3-512", "--sha3-512", "SHA3-512");
}
#[test]
fn rhash_blake2s() {
    rhash_same_digests("blake2s", "--blake2s", "BLAKE2S");
}
#[test]
fn rhash_blake2b() {
    rhash_same_digests("blake2b", "--blake2b", "BLAKE2B");
}
#[test]
fn rhash_sha224() {
    rhash_same_digests("sha224", "--sha224", "SHA-224");
}
#[test]
fn rhash_md4() {
    rhash_same_digests("md4", "--md4", "MD4");
}
#[test]
fn rhash_sha3_224() {
    rhash_same_digests("sha3-224", "--sha3-224", "SHA3-224");
}
#[test]
fn rhash_sha3_384() {
    rhash_same_digests("sha3-384", "--sha3-384", "SHA3-384");
}
#[test]
fn rhash_ripemd160() {
    rhash_same_digests("ripemd160", "--ripemd160", "RIPEMD-160");
}
#[test]
fn rhash_whirlpool() {
    rhash_same_digests("whirlpool", "--whirlpool", "WHIRLPOOL");
}
#[test]
fn rhash_tiger() {
    rhash_same_digests("tiger", "--tiger", "TIGER");
}
#[test]
fn rhash_gost94() {
    rhash_same_digests("gost94", "--gost94", "GOST94");
}
#[test]
fn rhash_gost94_cryptopro() {
    rhash_same_digests("gost94-cryptopro", "--gost94-cryptopro", "GOST94-CRYPTOPRO");
}
#[test]
fn rhash_gost12_256() {
    rhash_same_digests("gost12-256", "--gost12-256", "GOST12-256");
}
#[test]
fn rhash_gost12_512() {
    rhash_same_digests("gost12-512", "--gost12-512", "GOST12-512");
}

// The algorithms fixity implements by hand (no vetted crate has them), against rhash
// on the random tree and on every size around their block and padding boundaries:
// HAS-160 and EDON-R 256 use 64-byte blocks (length field from byte 56), EDON-R 512
// 128-byte ones (from byte 120), Snefru-256 and Snefru-128 take 32 and 48 message
// bytes per block.

#[test]
fn rhash_has160() {
    rhash_same_digests("has160", "--has160", "HAS-160");
}
#[test]
fn rhash_edonr256() {
    rhash_same_digests("edonr256", "--edonr256", "EDON-R256");
}
#[test]
fn rhash_edonr512() {
    rhash_same_digests("edonr512", "--edonr512", "EDON-R512");
}
#[test]
fn rhash_snefru128() {
    rhash_same_digests("snefru128", "--snefru128", "SNEFRU-128");
}
#[test]
fn rhash_snefru256() {
    rhash_same_digests("snefru256", "--snefru256", "SNEFRU-256");
}

/// Files of every boundary size, named by their size, in argument order.
fn boundary_files(dir: &Path) -> Vec<String> {
    let sizes = [
        0,
        1,
        31,
        32,
        33,
        47,
        48,
        49,
        55,
        56,
        63,
        64,
        65,
        95,
        96,
        97,
        111,
        112,
        119,
        120,
        127,
        128,
        129,
        255,
        256,
        257,
        1000,
        (1 << 20) + 3,
    ];
    let mut rng = Rng(seed() | 1);
    sizes
        .iter()
        .map(|&size| {
            let name = format!("b{size:07}");
            let mut data = vec![0u8; size];
            rng.fill(&mut data);
            util::write(dir, &name, &data);
            name
        })
        .collect()
}

/// `rhash --bsd --FLAG` and `fixity hash --tag -a ALGO` print the same lines (tag
/// included) for every boundary size, and each checks the other's manifest.
fn rhash_bsd_boundaries(algo: &str, flag: &str, listed: &str) {
    if !need("rhash") {
        return;
    }
    if !rhash_has(listed) {
        util::skip(&format!("rhash {flag}"), "this rhash does not support it");
        return;
    }
    let dir = util::tempdir();
    let files = boundary_files(dir.path());
    let mut args = vec!["--bsd", flag, "--"];
    args.extend(files.iter().map(String::as_str));
    let theirs = tool_ok(dir.path(), "rhash", &args);
    let mut args = vec!["hash", "--tag", "-a", algo, "--"];
    args.extend(files.iter().map(String::as_str));
    let ours = fixity_ok(dir.path(), &args);
    assert_bytes_eq(&format!("fixity hash --tag -a {algo} vs rhash --bsd {flag}"), &theirs, &ours);

    util::write(dir.path(), "theirs.txt", &theirs);
    let out = util::run(dir.path(), ["check", "theirs.txt"]);
    assert!(out.status.success(), "fixity check of rhash's manifest: {}", text(&out.stderr));
    util::write(dir.path(), "ours.txt", &ours);
    let out = tool_output(dir.path(), "rhash", &["--check", "ours.txt"]);
    assert!(
        out.status.success(),
        "rhash --check rejected fixity's manifest ({:?}):\n{}{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn rhash_bsd_has160_boundaries() {
    rhash_bsd_boundaries("has160", "--has160", "HAS-160");
}
#[test]
fn rhash_bsd_edonr256_boundaries() {
    rhash_bsd_boundaries("edonr256", "--edonr256", "EDON-R256");
}
#[test]
fn rhash_bsd_edonr512_boundaries() {
    rhash_bsd_boundaries("edonr512", "--edonr512", "EDON-R512");
}
#[test]
fn rhash_bsd_snefru128_boundaries() {
    rhash_bsd_boundaries("snefru128", "--snefru128", "SNEFRU-128");
}
#[test]
fn rhash_bsd_snefru256_boundaries() {
    rhash_bsd_boundaries("snefru256", "--snefru256", "SNEFRU-256");
}

// ------------------------------------------------------------------ xxhsum

/// `xxhsum -H# FILES` and `fixity hash -a ALGO R` give the same digests.
fn xxhsum_same_digests(algo: &str, variant: &str) {
    if !need("xxhsum") {
        return;
    }
    let dir = util::tempdir();
    let files = random_tree(dir.path(), true);
    let mut args = vec![variant, "--"];
    args.extend(files.iter().map(String::as_str));
    let out = tool_output(dir.path(), "xxhsum", &args);
    if !out.status.success() && out.stdout.is_empty() {
        util::skip(
            &format!("xxhsum {variant}"),
            &format!("this xxhsum refuses it: {}", text(&out.stderr).trim()),
        );
        return;
    }
    let peer = parse_digests(&out.stdout);
    assert_eq!(
        peer.len(),
        files.len(),
        "xxhsum {variant} printed {} lines for {} files",
        peer.len(),
        files.len()
    );
    let ours = parse_digests(&fixity_ok(dir.path(), &["hash", "-a", algo, "R"]));
    assert_same_digests(&format!("fixity hash -a {algo} vs xxhsum {variant}"), &peer, &ours);
}

#[test]
fn xxhsum_h0() {
    xxhsum_same_digests("xxh32", "-H0");
}
#[test]
fn xxhsum_xxh64() {
    xxhsum_same_digests("xxh64", "-H1");
}
#[test]
fn xxhsum_xxh128() {
    xxhsum_same_digests("xxh128", "-H2");
}
#[test]
fn xxhsum_xxh3() {
    xxhsum_same_digests("xxh3", "-H3");
}

// ------------------------------------------------------------------ b3sum

/// b3sum prints GNU-style lines: fixity's blake3 output must be byte-identical, and
/// each must verify the other's manifest.
#[test]
fn b3sum_same_output_and_manifests() {
    if !need("b3sum") {
        return;
    }
    let dir = util::tempdir();
    let files = random_tree(dir.path(), true);
    let mut args = vec!["--"];
    args.extend(files.iter().map(String::as_str));
    let expected = tool_ok(dir.path(), "b3sum", &args);
    let got = fixity_ok(dir.path(), &["hash", "-a", "blake3", "R"]);
    assert_bytes_eq("fixity hash -a blake3 R vs b3sum", &expected, &got);
    // blake3 is the default algorithm.
    let got = fixity_ok(dir.path(), &["hash", "R"]);
    assert_bytes_eq("fixity hash R (default blake3) vs b3sum", &expected, &got);

    std::fs::write(dir.path().join("ours.b3"), &got).unwrap();
    let out = tool_output(dir.path(), "b3sum", &["--check", "ours.b3"]);
    assert!(
        out.status.success(),
        "b3sum --check rejected fixity's manifest:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    std::fs::write(dir.path().join("theirs.b3"), &expected).unwrap();
    let out = util::run(dir.path(), ["check", "theirs.b3"]);
    let expected_ok: String = files.iter().map(|f| format!("{f}: OK\n")).collect();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "fixity check theirs.b3: {:?}\n{}",
        out.status,
        text(&out.stderr)
    );
    assert_bytes_eq("fixity check of b3sum's manifest", expected_ok.as_bytes(), &out.stdout);
}

// ------------------------------------------------------------------ SFV

/// `fixity hash -a crc32 --sfv FILES`, skipping its comment lines, as name -> crc.
fn sfv_map(sfv: &[u8]) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for line in text(sfv).lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() || line.starts_with(';') {
            continue;
        }
        let (name, crc) = line.rsplit_once(' ').unwrap_or_else(|| panic!("bad SFV line {line:?}"));
        map.insert(name.to_string(), crc.to_ascii_lowercase());
    }
    map
}

fn fixity_sfv(dir: &Path, files: &[String]) -> Vec<u8> {
    let mut args = vec!["hash", "-a", "crc32", "--sfv", "--"];
    args.extend(files.iter().map(String::as_str));
    fixity_ok(dir, &args)
}

/// cksfv verifies fixity's SFV; fixity verifies cksfv's.
#[test]
fn cksfv_round_trip() {
    if !need("cksfv") {
        return;
    }
    let dir = util::tempdir();
    let files = random_tree(dir.path(), false);
    let sfv = fixity_sfv(dir.path(), &files);
    std::fs::write(dir.path().join("ours.sfv"), &sfv).unwrap();
    let out = tool_output(dir.path(), "cksfv", &["-q", "-f", "ours.sfv"]);
    assert!(
        out.status.success(),
        "cksfv -f rejected fixity's SFV ({:?}):\n{}{}\nSFV:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr),
        text(&sfv)
    );

    let mut args = vec!["--"];
    args.extend(files.iter().map(String::as_str));
    let theirs = tool_ok(dir.path(), "cksfv", &args);
    assert_same_digests("fixity --sfv vs cksfv digests", &sfv_map(&theirs), &sfv_map(&sfv));
    std::fs::write(dir.path().join("theirs.sfv"), &theirs).unwrap();
    let out = util::run(dir.path(), ["check", "theirs.sfv"]);
    let expected_ok: String = files.iter().map(|f| format!("{f}: OK\n")).collect();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "fixity check of cksfv's SFV: {:?}\n{}",
        out.status,
        text(&out.stderr)
    );
    assert_bytes_eq("fixity check of cksfv's SFV", expected_ok.as_bytes(), &out.stdout);

    // A damaged file is caught.
    let victim =
        files.iter().find(|f| std::fs::metadata(dir.path().join(f)).unwrap().len() > 0).unwrap();
    let mut data = std::fs::read(dir.path().join(victim)).unwrap();
    data[0] ^= 0x80;
    std::fs::write(dir.path().join(victim), &data).unwrap();
    let out = util::run(dir.path(), ["check", "theirs.sfv"]);
    assert_eq!(out.status.code(), Some(1), "fixity check after damaging {victim}");
    assert!(
        text(&out.stdout).contains(&format!("{victim}: FAILED\n")),
        "no FAILED line for {victim}:\n{}",
        text(&out.stdout)
    );
}

/// rhash verifies fixity's SFV; fixity verifies rhash's.
#[test]
fn rhash_sfv_round_trip() {
    if !need("rhash") {
        return;
    }
    let dir = util::tempdir();
    let files = random_tree(dir.path(), true);
    let sfv = fixity_sfv(dir.path(), &files);
    std::fs::write(dir.path().join("ours.sfv"), &sfv).unwrap();
    let out = tool_output(dir.path(), "rhash", &["--check", "ours.sfv"]);
    assert!(
        out.status.success(),
        "rhash --check rejected fixity's SFV ({:?}):\n{}{}\nSFV:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr),
        text(&sfv)
    );

    let mut args = vec!["--sfv", "--"];
    args.extend(files.iter().map(String::as_str));
    let theirs = tool_ok(dir.path(), "rhash", &args);
    assert_same_digests("fixity --sfv vs rhash --sfv digests", &sfv_map(&theirs), &sfv_map(&sfv));
    std::fs::write(dir.path().join("theirs.sfv"), &theirs).unwrap();
    let out = util::run(dir.path(), ["check", "theirs.sfv"]);
    let expected_ok: String = files.iter().map(|f| format!("{f}: OK\n")).collect();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "fixity check of rhash's SFV: {:?}\n{}",
        out.status,
        text(&out.stderr)
    );
    assert_bytes_eq("fixity check of rhash's SFV", expected_ok.as_bytes(), &out.stdout);
}

/// A manifest can also be handed over on stdin from a peer: `sha256sum FILES | fixity
/// check -a sha256` (and `-` named explicitly).
#[test]
fn fixity_checks_piped_sha256sum_manifest() {
    if !need("sha256sum") {
        return;
    }
    let dir = util::tempdir();
    let files = random_tree(dir.path(), true);
    let mut args = vec!["--"];
    args.extend(files.iter().map(String::as_str));
    let manifest = tool_ok(dir.path(), "sha256sum", &args);
    let expected_ok: String = files.iter().map(|f| format!("{f}: OK\n")).collect();
    for extra in [&[][..], &["-"][..]] {
        let mut fargs: Vec<OsString> = vec!["check".into(), "-a".into(), "sha256".into()];
        fargs.extend(extra.iter().map(OsString::from));
        let out = util::run_stdin(dir.path(), &fargs, &manifest);
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "fixity check -a sha256 {extra:?} < manifest: {:?}\n{}",
            out.status,
            text(&out.stderr)
        );
        assert_bytes_eq(
            "fixity check of piped sha256sum manifest",
            expected_ok.as_bytes(),
            &out.stdout,
        );
    }
}

/// Unreadable files and directories: `fixity: PATH: Permission denied` on stderr, exit 1,
/// the run goes on; for files named on the command line exactly what sha256sum prints.
/// Skipped (visibly) when permissions are not enforced, as for root.
#[test]
fn permission_denied_like_sha256sum() {
    use std::os::unix::fs::PermissionsExt;
    let dir = util::tempdir();
    let d = dir.path();
    util::write(d, "T/a-ok", b"ok\n");
    util::write(d, "T/b-secret", b"secret\n");
    util::write(d, "T/c-locked/inner", b"inner\n");
    util::write(d, "T/d-ok", b"ok too\n");
    std::fs::set_permissions(d.join("T/b-secret"), std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(d.join("T/c-locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let enforced = std::fs::File::open(d.join("T/b-secret")).is_err();
    // Give the locked directory back its permissions however the test ends, so the
    // temporary directory can be removed.
    struct Unlock<'a>(&'a Path);
    impl Drop for Unlock<'_> {
        fn drop(&mut self) {
            let _ = std::fs::set_permissions(self.0, std::fs::Permissions::from_mode(0o755));
        }
    }
    let locked = d.join("T/c-locked");
    let _unlock = Unlock(&locked);
    if !enforced {
        util::skip("permission-denied cases", "permissions are not enforced (running as root?)");
        return;
    }
    if need("sha256sum") {
        let want = tool_output(d, "sha256sum", &["T/a-ok", "T/b-secret", "T/d-ok"]);
        let got = util::run(d, ["hash", "-a", "sha256", "T/a-ok", "T/b-secret", "T/d-ok"]);
        let want_err = text(&want.stderr).replace("sha256sum:", "fixity:");
        assert_bytes_eq("unreadable file operand: stdout", &want.stdout, &got.stdout);
        assert_bytes_eq("unreadable file operand: stderr", want_err.as_bytes(), &got.stderr);
        assert_eq!(got.status.code(), want.status.code(), "unreadable file operand: exit code");
    }
    let got = util::run(d, ["hash", "-a", "sha256", "T"]);
    let err = text(&got.stderr);
    assert_eq!(got.status.code(), Some(1), "tree with unreadable entries: exit code\n{err}");
    assert!(err.contains("fixity: T/b-secret: Permission denied\n"), "stderr: {err}");
    assert!(err.contains("fixity: T/c-locked: Permission denied\n"), "stderr: {err}");
    let out = text(&got.stdout);
    assert!(
        out.contains("  T/a-ok\n") && out.contains("  T/d-ok\n"),
        "the readable files are still hashed:\n{out}"
    );
}

// ------------------------------------------------------------------ rhash: TTH, BTIH, AICH, ED2K

/// Parses `TAG (name) = digest` lines (any run of spaces after the tag) into
/// (tag, name) -> lowercase digest.
fn parse_tagged(out: &[u8]) -> BTreeMap<(String, String), String> {
    let mut map = BTreeMap::new();
    for line in text(out).lines().filter(|l| !l.is_empty()) {
        let (Some(open), Some(eq)) = (line.find(" ("), line.rfind(") = ")) else {
            panic!("unparsable tagged line {line:?}");
        };
        let tag = line[..open].trim().to_string();
        map.insert((tag, line[open + 2..eq].to_string()), line[eq + 4..].to_ascii_lowercase());
    }
    map
}

/// The file-structured algorithms at the sizes where their structure changes: eD2k
/// chunks and AICH parts (9,728,000 bytes), AICH blocks (184,320), TTH leaves (1024),
/// BTIH's piece length (16 KiB below 16 MiB, 32 KiB from it), plus the random tree.
/// rhash prints TTH and AICH in base32 (lowercase), and so does fixity.
#[test]
fn rhash_tth_btih_aich_ed2k_at_boundaries() {
    if !need("rhash") {
        return;
    }
    for tag in ["TTH", "BTIH", "AICH", "ED2K"] {
        if !rhash_has(tag) {
            util::skip(&format!("rhash {tag}"), "this rhash does not support it");
            return;
        }
    }
    let dir = util::tempdir();
    let mut files = random_tree(dir.path(), false);
    const PART: u64 = 9_728_000;
    const BLOCK: u64 = 184_320;
    let sizes = [
        0,
        1,
        1023,
        1024,
        1025,
        3 * 1024,
        BLOCK - 1,
        BLOCK,
        BLOCK + 1,
        PART - 1,
        PART,
        PART + 1,
        2 * PART,
        3 * PART + BLOCK + 1,
        (16 << 20) - 1,
        16 << 20,
    ];
    std::fs::create_dir(dir.path().join("B")).unwrap();
    let mut rng = Rng(seed() ^ 0xb0b);
    let mut data = vec![0u8; (3 * PART + BLOCK + 1) as usize];
    rng.fill(&mut data);
    for size in sizes {
        let rel = format!("B/b-{size}");
        std::fs::write(dir.path().join(&rel), &data[..size as usize]).unwrap();
        files.push(rel);
    }
    let mut args = vec!["--bsd", "--tth", "--btih", "--aich", "--ed2k", "--"];
    args.extend(files.iter().map(String::as_str));
    let peer = parse_tagged(&tool_ok(dir.path(), "rhash", &args));
    assert_eq!(peer.len(), 4 * files.len(), "rhash printed {} lines", peer.len());
    let ours =
        parse_tagged(&fixity_ok(dir.path(), &["hash", "-a", "tth,btih,aich,ed2k", "R", "B"]));
    let mut problems = Vec::new();
    for (key, d) in &peer {
        match ours.get(key) {
            Some(o) if o == d => {}
            Some(o) => problems.push(format!("  {key:?}: rhash {d}, fixity {o}")),
            None => problems.push(format!("  {key:?}: rhash {d}, fixity printed no line")),
        }
    }
    assert_eq!(ours.len(), peer.len(), "line counts differ");
    assert!(problems.is_empty(), "fixity vs rhash (seed {}):\n{}", seed(), problems.join("\n"));
}

/// Standard input: rhash names it `(stdin)` with length 0 in the BTIH info dictionary.
#[test]
fn rhash_btih_of_stdin() {
    if !need("rhash") {
        return;
    }
    let dir = util::tempdir();
    let mut data = vec![0u8; 100_000];
    Rng(seed() | 1).fill(&mut data);
    let peer = Command::new("rhash")
        .args(["--bsd", "--btih", "--ed2k", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(&data)?;
            c.wait_with_output()
        })
        .expect("run rhash");
    let peer = parse_tagged(&peer.stdout);
    let peer: Vec<&String> = peer.values().collect();
    let out = util::run_stdin(dir.path(), ["hash", "-a", "btih,ed2k", "-"], &data);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ours = parse_tagged(&out.stdout);
    let ours: Vec<&String> = ours.values().collect();
    // Both sorted by (tag, name): BTIH, ED2K (the names differ: `(stdin)` and `-`).
    assert_eq!(ours, peer);
}
