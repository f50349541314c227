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
            "fits sha256, sha3-256, gost94, gost94-cryptopro, gost12-256, blake2s, blake3: \
             name the algorithm with -a"
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
    // Tiger shares its 24 bytes with TTH: a bare list is ambiguous, a tagged one is not.
    write(d.path(), "list", line("tiger", b"x", "f").as_bytes());
    let out = run(d.path(), ["check", "list"]);
    assert!(text(&out.stderr).contains("fits tiger, tth"), "{}", text(&out.stderr));
    let tagged = format!("TIGER (f) = {}\n", lookup("tiger").unwrap().digest(b"x"));
    write(d.path(), "list", tagged.as_bytes());
    let out = run(d.path(), ["check", "m.b3", "SHA512SUMS", "list"]);
    assert_eq!(text(&out.stdout), "f: OK\nf: OK\nf: OK\n", "{}", text(&out.stderr));
    assert!(out.status.success());
    // SHA-1, RIPEMD-160, BTIH and AICH share 20 bytes: a bare SHA-1 list needs its name
    // or -a.
    write(d.path(), "list", line("sha1", b"x", "f").as_bytes());
    let out = run(d.path(), ["check", "list"]);
    assert!(
        text(&out.stderr).contains("fits sha1, ripemd160, btih, aich"),
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
    let st: Vec<&str> = v.iter().map(|o| o["status"].as_str().unwrap()).collect();
    assert_eq!(st, ["ok", "failed", "missing"]);
    assert_eq!(v[0]["algorithm"], "md5");
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
