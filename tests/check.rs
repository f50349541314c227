//! `fixity check`: how the algorithm is found, SFV and mixed manifests, JSON results.

use crate::util::{run, tempdir, write};
use fixity::algo::lookup;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn line(alg: &str, data: &[u8], name: &str) -> String {
    format!("{}  {name}\n", lookup(alg).unwrap().digest(data))
}

#[test]
fn ambiguous_length_asks_for_an_algorithm() {
    let d = tempdir();
    write(d.path(), "f", b"x");
    write(d.path(), "list.txt", line("sha256", b"x", "f").as_bytes());
    let out = run(d.path(), ["check", "list.txt"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "fits sha256, sha3-256, sm3, gost94, gost94-cryptopro, gost12-256, edonr256, \
             snefru256, blake2s, blake3: name the algorithm with -a"
        ),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing is guessed");
    let out = run(d.path(), ["check", "-a", "sha256", "list.txt"]);
    assert_eq!(text(&out.stdout), "f: OK\n");
    assert!(out.status.success());
}

#[test]
fn algorithm_from_extension_or_tag() {
    let d = tempdir();
    write(d.path(), "f", b"x");
    write(d.path(), "m.b3", line("blake3", b"x", "f").as_bytes());
    write(d.path(), "SHA512SUMS", line("sha512", b"x", "f").as_bytes());
    // Tiger shares its 24 bytes with TTH, but TTH is written in base32 (as rhash does): 48
    // hex digits are Tiger's, 39 base32 characters TTH's.
    let tth = lookup("tth").unwrap().digest(b"x").to_base32().to_lowercase();
    let bare = format!("{}{tth}  f\n", line("tiger", b"x", "f"));
    write(d.path(), "bare", bare.as_bytes());
    let out = run(d.path(), ["check", "bare"]);
    assert_eq!(text(&out.stdout), "f: OK\nf: OK\n", "{}", text(&out.stderr));
    let tagged = format!("TIGER (f) = {}\n", lookup("tiger").unwrap().digest(b"x"));
    write(d.path(), "list", tagged.as_bytes());
    let out = run(d.path(), ["check", "m.b3", "SHA512SUMS", "list"]);
    assert_eq!(text(&out.stdout), "f: OK\nf: OK\nf: OK\n", "{}", text(&out.stderr));
    assert!(out.status.success());
    // SHA-1, RIPEMD-160, HAS-160 and BTIH share 40 hex digits: a bare SHA-1 list needs its
    // name or -a.
    write(d.path(), "list", line("sha1", b"x", "f").as_bytes());
    let out = run(d.path(), ["check", "list"]);
    assert!(
        text(&out.stderr).contains("fits sha1, ripemd160, has160, btih: "),
        "{}",
        text(&out.stderr)
    );
    write(d.path(), "list.sha1", line("sha1", b"x", "f").as_bytes());
    assert!(run(d.path(), ["check", "list.sha1"]).status.success());
}

#[test]
fn mixed_tags_in_one_manifest() {
    let d = tempdir();
    write(d.path(), "a", b"1");
    write(d.path(), "b", b"2");
    let out = run(d.path(), ["hash", "-a", "md5,sha256,xxh128,crc32c", "a", "b"]);
    write(d.path(), "all.txt", &out.stdout);
    let out = run(d.path(), ["check", "all.txt"]);
    assert_eq!(text(&out.stdout).matches(": OK").count(), 8, "{}", text(&out.stderr));
    write(d.path(), "b", b"3");
    let out = run(d.path(), ["check", "--quiet", "all.txt"]);
    assert_eq!(text(&out.stdout), "b: FAILED\nb: FAILED\nb: FAILED\nb: FAILED\n");
    assert_eq!(text(&out.stderr), "fixity: WARNING: 4 computed checksums did NOT match\n");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn sfv_files_with_comments() {
    let d = tempdir();
    write(d.path(), "some file.bin", b"123456789");
    write(d.path(), "x.sfv", b"; made by hand\n;\nsome file.bin CBF43926\n");
    let out = run(d.path(), ["check", "x.sfv"]);
    assert_eq!(text(&out.stdout), "some file.bin: OK\n", "{}", text(&out.stderr));
    // Same content under another name: the leading `;` comment says SFV.
    write(d.path(), "list", b"; made by hand\nsome file.bin cbf43926\n");
    let out = run(d.path(), ["check", "list"]);
    assert_eq!(text(&out.stdout), "some file.bin: OK\n", "{}", text(&out.stderr));
}

#[test]
fn xxhsum_prefixed_lines() {
    let d = tempdir();
    write(d.path(), "f", b"abc");
    let dg = lookup("xxh3").unwrap().digest(b"abc");
    write(d.path(), "m.xxh3", format!("XXH3_{dg}  f\n").as_bytes());
    let out = run(d.path(), ["check", "m.xxh3"]);
    assert_eq!(text(&out.stdout), "f: OK\n", "{}", text(&out.stderr));
}

#[test]
fn json_results() {
    let d = tempdir();
    write(d.path(), "ok", b"1");
    write(d.path(), "bad", b"2");
    let m = format!(
        "{}{}{}",
        line("md5", b"1", "ok"),
        line("md5", b"1", "bad"),
        line("md5", b"1", "gone")
    );
    write(d.path(), "m.md5", m.as_bytes());
    let out = run(d.path(), ["check", "--json", "m.md5"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Vec<serde_json::Value> =
        text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let st: Vec<&str> = v.iter().filter_map(|o| o["status"].as_str()).collect();
    assert_eq!(st, ["ok", "failed", "missing"]);
    assert_eq!(v[0]["algorithm"], "md5");
    // Then the manifest's verdict and counts (a missing file counts as unreadable, as
    // coreutils counts it).
    assert_eq!(v.len(), 4);
    assert_eq!(
        (v[3]["manifest"].as_str(), v[3]["verdict"].as_str()),
        (Some("m.md5"), Some("failed"))
    );
    assert_eq!(
        v[3]["counts"],
        serde_json::json!({"ok": 1, "failed": 1, "unreadable": 1,
        "ignored": 0, "malformed": 0, "ambiguous": 0, "refused": 0})
    );
    let none = run(d.path(), ["check", "--json", "no.md5"]);
    assert_eq!(none.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&none.stdout).unwrap();
    assert_eq!(
        (v["verdict"].as_str(), v["detail"].as_str()),
        (Some("unreadable"), Some("No such file or directory"))
    );
}

#[test]
fn json_names_malformed_and_ambiguous_lines() {
    let d = tempdir();
    write(d.path(), "ok", b"1");
    let m = format!("{}not a checksum line\n{}", line("md5", b"1", "ok"), line("md5", b"1", "ok"));
    write(d.path(), "list", m.as_bytes());
    let out = run(d.path(), ["check", "--json", "list"]);
    let v: Vec<serde_json::Value> =
        text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(v[0]["manifest"], "list");
    assert_eq!(v[0]["line"], 1);
    assert_eq!(v[0]["status"], "ambiguous");
    assert!(v[0]["detail"].as_str().unwrap().contains("md5"), "{}", v[0]);
    assert_eq!(v[1]["line"], 2);
    assert_eq!(v[1]["status"], "malformed");
    assert_eq!(v[3]["verdict"], "ambiguous");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn base32_and_base64_digests_from_other_tools() {
    let d = tempdir();
    write(d.path(), "f", b"abc");
    let sha1 = lookup("sha1").unwrap().digest(b"abc");
    let sha256 = lookup("sha256").unwrap().digest(b"abc");
    // rhash --simple --base32 / cksum --base64 --untagged (algorithm from -a), and tagged
    // base64 (cksum -a sha256 --base64) mixed with hex in one manifest.
    let m = format!(
        "{}  f\nSHA256 (f) = {}\nSHA256 (f) = {}\n",
        sha1.to_base32().to_lowercase(),
        sha256.to_base64(),
        sha256.to_hex()
    );
    write(d.path(), "m", m.as_bytes());
    let out = run(d.path(), ["check", "-a", "sha1", "m"]);
    // -a sha1 makes the SHA256 lines malformed, as coreutils does for a tag other than -a.
    assert_eq!(text(&out.stdout), "f: OK\n", "{}", text(&out.stderr));
    let m = format!("{}  f\n", sha1.to_base64());
    write(d.path(), "m.sha1", m.as_bytes());
    let out = run(d.path(), ["check", "m.sha1"]);
    assert_eq!(text(&out.stdout), "f: OK\n", "{}", text(&out.stderr));
    let m = format!("SHA256 (f) = {}\nSHA256 (f) = {}\n", sha256.to_base64(), sha256.to_hex());
    write(d.path(), "tagged", m.as_bytes());
    let out = run(d.path(), ["check", "tagged"]);
    assert_eq!(text(&out.stdout), "f: OK\nf: OK\n", "{}", text(&out.stderr));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn mixed_formats_in_one_manifest_line_by_line() {
    let d = tempdir();
    write(d.path(), "a", b"abc");
    write(d.path(), "b", b"hello");
    write(d.path(), "c", b"x");
    let md5 = |x: &[u8]| lookup("md5").unwrap().digest(x).to_hex();
    let sha256 = |x: &[u8]| lookup("sha256").unwrap().digest(x).to_hex();
    let crc = |x: &[u8]| lookup("crc32").unwrap().digest(x).to_hex();
    let m = format!(
        "%%%% HASHDEEP-1.0\n%%%% size,md5,sha256,filename\n## comment\n\
         3,{},{},a\n\
         SHA256 (b) = {}\n\
         c,1,{},\n\
         4,{},{},b\n\
         %%%% size,crc,filename\n",
        md5(b"abc"),
        sha256(b"abc"),
        sha256(b"hello"),
        crc(b"x"),
        md5(b"hello"),
        sha256(b"hello"),
    );
    write(d.path(), "mixed", m.as_bytes());
    let out = run(d.path(), ["check", "--warn", "mixed"]);
    // The last hashdeep line has the wrong size (4, not 5): FAILED though the digests match.
    assert_eq!(text(&out.stdout), "a: OK\nb: OK\nc: OK\nb: FAILED\n", "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("mixed: 8: improperly formatted checksum line: unknown column 'crc'"),
        "{err}"
    );
    assert!(err.contains("WARNING: 1 computed checksum did NOT match"), "{err}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn zero_terminated_manifest_round_trip_with_newline_name() {
    let d = tempdir();
    write(d.path(), "new\nline", b"x");
    let out = run(d.path(), ["hash", "-z", "-a", "sha1", "new\nline"]);
    write(d.path(), "m.sha1", &out.stdout);
    let out = run(d.path(), ["check", "-z", "m.sha1"]);
    assert_eq!(text(&out.stdout), "\\new\\nline: OK\n");
}

#[test]
fn many_files_checked_in_manifest_order() {
    let d = tempdir();
    for i in 0..500 {
        write(d.path(), format!("t/{i:04}"), &vec![i as u8; i * 37]);
    }
    let out = run(d.path(), ["hash", "-a", "crc32c", "-o", "m.crc32c", "t"]);
    assert!(out.status.success());
    let out = run(d.path(), ["check", "m.crc32c"]);
    let want: String = (0..500).map(|i| format!("t/{i:04}: OK\n")).collect();
    assert_eq!(text(&out.stdout), want);
}

#[test]
fn paths_outside_the_manifest_are_noticed_once_and_refused_with_confine() {
    let d = tempdir();
    write(d.path(), "top", b"t");
    write(d.path(), "w/in", b"i");
    let m = [
        line("sha256", b"t", "../top"),
        line("sha256", b"i", "in"),
        line("sha256", b"t", "../top"),
    ]
    .concat();
    write(d.path(), "w/list.sha256", m.as_bytes());
    let w = d.path().join("w");
    let out = run(&w, ["check", "list.sha256"]);
    assert_eq!(text(&out.stdout), "../top: OK\nin: OK\n../top: OK\n");
    assert_eq!(
        text(&out.stderr),
        "fixity: list.sha256: 1: note: this manifest names files outside its directory \
         (absolute or ..); --confine refuses such lines\n"
    );
    assert!(out.status.success());
    let out = run(&w, ["check", "--confine", "list.sha256"]);
    assert_eq!(text(&out.stdout), "in: OK\n");
    let err = text(&out.stderr);
    assert!(
        err.contains("list.sha256: 1: ../top: refused: the path leaves the manifest's directory"),
        "{err}"
    );
    assert!(err.contains("WARNING: 2 lines were refused"), "{err}");
    assert_eq!(out.status.code(), Some(1));
    let out = run(&w, ["check", "--status", "list.sha256"]);
    assert!(out.stderr.is_empty() && out.stdout.is_empty() && out.status.success());
}

/// BLAKE2b of a chosen output length (`b2sum -l 256`): `-a blake2b-256` hashes and checks
/// it, `BLAKE2b-256 (f) = ...` lines name it, and `-a blake2b` reads untagged lines of any
/// length from their digits as `b2sum -c` does.
#[test]
fn blake2b_of_a_chosen_length() {
    use crate::util::have;
    let d = tempdir();
    write(d.path(), "f", b"x");
    write(d.path(), "g", b"alpha\n");
    let b256 = lookup("blake2b-256").unwrap();
    let hex = |alg: &str, data: &[u8]| lookup(alg).unwrap().digest(data).to_hex();
    let out = run(d.path(), ["hash", "-a", "blake2b-256", "f", "g"]);
    let untagged =
        format!("{}  f\n{}  g\n", hex("blake2b-256", b"x"), hex("blake2b-256", b"alpha\n"));
    assert_eq!((text(&out.stdout), out.status.code()), (untagged.clone(), Some(0)));
    // Published by coreutils 9.1: `printf 'alpha\n' | b2sum -l 256`.
    assert!(
        untagged.contains("67b755180b7a98f6aa26a92770d6d674d1b24d041554a3c59ccd47bf851a9081  g")
    );
    if have("b2sum") {
        let real = std::process::Command::new("b2sum")
            .args(["-l", "256", "f", "g"])
            .current_dir(d.path())
            .output()
            .unwrap();
        assert_eq!(text(&real.stdout), untagged, "b2sum -l 256 writes the same");
    }
    let out = run(d.path(), ["hash", "-a", "BLAKE2b-160", "--tag", "f"]);
    let tagged = format!("BLAKE2b-160 (f) = {}\n", hex("blake2b-160", b"x"));
    assert_eq!(text(&out.stdout), tagged);
    assert_eq!(hex("blake2b-160", b"x").len(), 40);

    write(d.path(), "list", untagged.as_bytes());
    let out = run(d.path(), ["check", "-a", "blake2b-256", "list"]);
    assert_eq!((text(&out.stdout), out.status.code()), ("f: OK\ng: OK\n".into(), Some(0)));
    // Untagged and without -a, 64 digits fit many algorithms: never guessed.
    let out = run(d.path(), ["check", "list"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    // `-a blake2b` (and a `.b2` name) take the length from the digits, as b2sum -c does.
    let out = run(d.path(), ["check", "-a", "blake2b", "list"]);
    assert_eq!(text(&out.stdout), "f: OK\ng: OK\n", "{}", text(&out.stderr));
    write(d.path(), "list.b2", untagged.as_bytes());
    let out = run(d.path(), ["check", "list.b2"]);
    assert_eq!(text(&out.stdout), "f: OK\ng: OK\n", "{}", text(&out.stderr));

    // Tagged lines carry their length; `-a blake2b-256` refuses other lengths.
    let mixed = format!(
        "{tagged}BLAKE2b-8 (g) = {}\nBLAKE2b (f) = {}\n",
        hex("blake2b-8", b"alpha\n"),
        hex("blake2b", b"x")
    );
    write(d.path(), "tagged", mixed.as_bytes());
    let out = run(d.path(), ["check", "tagged"]);
    assert_eq!((text(&out.stdout), out.status.code()), ("f: OK\ng: OK\nf: OK\n".into(), Some(0)));
    let out = run(d.path(), ["check", "-w", "-a", "blake2b-256", "tagged", "list"]);
    assert_eq!(text(&out.stdout), "f: OK\ng: OK\n");
    assert!(
        text(&out.stderr).contains("tagged: no properly formatted checksum lines found"),
        "{}",
        text(&out.stderr)
    );
    // A shorter BLAKE2b is not a prefix of the longer one: a truncated line fails.
    let cut = format!("BLAKE2b-256 (f) = {}\n", &hex("blake2b", b"x")[..64]);
    write(d.path(), "cut", cut.as_bytes());
    let out = run(d.path(), ["check", "cut"]);
    assert_eq!((text(&out.stdout), out.status.code()), ("f: FAILED\n".into(), Some(1)));
    // A changed file fails.
    write(d.path(), "f", b"y");
    let out = run(d.path(), ["check", "-a", "blake2b-256", "list"]);
    assert_eq!((text(&out.stdout), out.status.code()), ("f: FAILED\ng: OK\n".into(), Some(1)));
    // The rows are made on demand and not listed.
    let out = run(d.path(), ["algorithms", "--no-speed"]);
    assert!(text(&out.stdout).contains("blake2b "), "{}", text(&out.stdout));
    assert!(!text(&out.stdout).contains("blake2b-256"));
    assert_eq!(b256.len, 32);
}

/// A `.cksum` list holds what `cksum` writes: `CRC SIZE NAME` lines and, from `cksum -a
/// ALG`, tagged lines of any algorithm; both are checked (it once refused the tagged ones
/// as "no properly formatted checksum lines").
#[test]
fn a_cksum_list_holds_tagged_lines_too() {
    let d = tempdir();
    write(d.path(), "a", b"hello\n");
    let sha = lookup("sha256").unwrap().digest(b"hello\n").to_hex();
    let list = format!("SHA256 (a) = {sha}\n3015617425 6 a\n");
    write(d.path(), "X.cksum", list.as_bytes());
    let out = run(d.path(), ["check", "X.cksum"]);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(out.stdout, b"a: OK\na: OK\n");
    assert_eq!(out.status.code(), Some(0));
    write(d.path(), "a", b"hellO\n");
    let out = run(d.path(), ["check", "X.cksum"]);
    assert_eq!(out.stdout, b"a: FAILED\na: FAILED\n");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_directory_named_as_manifest_says_so() {
    let d = tempdir();
    std::fs::create_dir(d.path().join("dir")).unwrap();
    // Native mode names the cause, with the exit status of any unreadable manifest.
    let out = run(d.path(), ["check", "dir"]);
    assert_eq!(text(&out.stderr), "fixity: dir: Is a directory\n");
    assert!(out.stdout.is_empty());
    let missing = run(d.path(), ["check", "no.md5"]);
    assert_eq!(text(&missing.stderr), "fixity: no.md5: No such file or directory\n");
    assert_eq!(out.status.code(), missing.status.code());
    assert_eq!(out.status.code(), Some(1));
    let json = run(d.path(), ["check", "--json", "dir"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        (v["verdict"].as_str(), v["detail"].as_str()),
        (Some("unreadable"), Some("Is a directory"))
    );
    // The md5sum drop-in says what `md5sum -c dir` says.
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_fixity"));
    let out = crate::util::run_as_tool(exe, "md5sum", d.path(), &["-c", "dir"], b"");
    assert_eq!(text(&out.stderr), "md5sum: dir: read error\n");
    assert_eq!(out.status.code(), Some(1));
}
