//! `fixity bag check` against RFC 8493 rule by rule, on bags written here byte by byte:
//! tag files in other encodings, `./` paths and md5sum's `*` marker (warnings), bagit.txt's
//! exact form, fetch.txt, files listed twice, names alike but for case or normalization,
//! tag manifests; `--strict` and the JSON severities; and a differential test against
//! bagit-python over generated bags (docs/bagit.md lists every deliberate difference).

use crate::util::{self, Rng};
use std::path::Path;
use std::process::Output;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn hex(algo: &str, data: &[u8]) -> String {
    fixity::algo::lookup(algo).expect("an algorithm").digest(data).to_hex()
}

/// A tag file's text in an encoding: UTF-8, ISO-8859-1, or UTF-16 with a byte-order mark
/// (`be`: big-endian).
#[derive(Clone, Copy, Debug)]
enum Enc {
    Utf8,
    Latin1,
    Utf16 { be: bool },
}

impl Enc {
    fn label(self) -> &'static str {
        match self {
            Enc::Utf8 => "UTF-8",
            Enc::Latin1 => "ISO-8859-1",
            Enc::Utf16 { .. } => "UTF-16",
        }
    }

    fn encode(self, s: &str) -> Vec<u8> {
        match self {
            Enc::Utf8 => s.as_bytes().to_vec(),
            Enc::Latin1 => {
                s.chars().map(|c| u8::try_from(u32::from(c)).expect("a Latin-1 text")).collect()
            }
            Enc::Utf16 { be } => {
                let mut out = if be { vec![0xfe, 0xff] } else { vec![0xff, 0xfe] };
                for u in s.encode_utf16() {
                    out.extend_from_slice(&if be { u.to_be_bytes() } else { u.to_le_bytes() });
                }
                out
            }
        }
    }
}

/// A bag to write: payload (path under data/, content), the lines of each manifest (None:
/// made from the payload), and the other tag files as text.
struct Bag {
    version: &'static str,
    enc: Enc,
    bagit_txt: Option<Vec<u8>>,
    payload: Vec<(String, Vec<u8>)>,
    manifests: Vec<(&'static str, Vec<String>)>,
    fetch: Option<String>,
    tag_manifest: bool,
    manifest_bom: bool,
}

impl Bag {
    fn new(payload: &[(&str, &[u8])]) -> Bag {
        Bag {
            version: "1.0",
            enc: Enc::Utf8,
            bagit_txt: None,
            payload: payload.iter().map(|(p, c)| (p.to_string(), c.to_vec())).collect(),
            manifests: Vec::new(),
            fetch: None,
            tag_manifest: false,
            manifest_bom: false,
        }
    }

    /// `digest  data/path` for every payload file.
    fn lines(&self, algo: &str) -> Vec<String> {
        self.payload.iter().map(|(p, c)| format!("{}  data/{p}", hex(algo, c))).collect()
    }

    fn with_manifest(mut self, algo: &'static str) -> Bag {
        let lines = self.lines(algo);
        self.manifests.push((algo, lines));
        self
    }

    fn write(&self, dir: &Path) {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        for (p, c) in &self.payload {
            util::write(&dir.join("data"), p, c);
        }
        let decl = self.bagit_txt.clone().unwrap_or_else(|| {
            format!(
                "BagIt-Version: {}\nTag-File-Character-Encoding: {}\n",
                self.version,
                self.enc.label()
            )
            .into_bytes()
        });
        std::fs::write(dir.join("bagit.txt"), decl).unwrap();
        let bytes: usize = self.payload.iter().map(|(_, c)| c.len()).sum();
        let info =
            format!("Payload-Oxum: {bytes}.{}\nContact-Name: Zoë Núñez\n", self.payload.len());
        let mut tags: Vec<(String, Vec<u8>)> =
            vec![("bag-info.txt".into(), self.enc.encode(&info))];
        for (algo, lines) in &self.manifests {
            let mut body = self.enc.encode(&(lines.join("\n") + "\n"));
            if self.manifest_bom {
                body.splice(0..0, *b"\xef\xbb\xbf");
            }
            tags.push((format!("manifest-{algo}.txt"), body));
        }
        if let Some(f) = &self.fetch {
            tags.push(("fetch.txt".into(), self.enc.encode(f)));
        }
        for (name, body) in &tags {
            std::fs::write(dir.join(name), body).unwrap();
        }
        if self.tag_manifest {
            let mut listed = vec![format!(
                "{}  bagit.txt",
                hex("sha256", &std::fs::read(dir.join("bagit.txt")).unwrap())
            )];
            for (name, body) in &tags {
                listed.push(format!("{}  {name}", hex("sha256", body)));
            }
            std::fs::write(
                dir.join("tagmanifest-sha256.txt"),
                self.enc.encode(&(listed.join("\n") + "\n")),
            )
            .unwrap();
        }
    }
}

fn check(dir: &Path, extra: &[&str]) -> Output {
    let mut a = vec!["bag", "check"];
    a.extend_from_slice(extra);
    a.push("bag");
    util::run(dir, a)
}

/// Checks `bag` written in `d`: the exit code, and that stderr holds each of `says`.
fn expect(d: &Path, bag: &Bag, code: i32, says: &[&str]) -> Output {
    bag.write(&d.join("bag"));
    let out = check(d, &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr:\n{err}\nstdout:\n{}", text(&out.stdout));
    for s in says {
        assert!(err.contains(s), "{s:?} not in:\n{err}");
    }
    out
}

const PAYLOAD: &[(&str, &[u8])] = &[("café.txt", b"one\n"), ("sub/Zoë", b"two\n"), ("plain", b"")];

#[test]
fn tag_files_in_latin1_and_utf16_are_read_in_their_encoding() {
    let tmp = util::tempdir();
    let d = tmp.path();
    for enc in [Enc::Latin1, Enc::Utf16 { be: true }, Enc::Utf16 { be: false }] {
        let mut bag = Bag::new(PAYLOAD).with_manifest("sha256").with_manifest("md5");
        bag.enc = enc;
        bag.tag_manifest = true;
        let out = expect(d, &bag, 0, &["warning: the tag files are in"]);
        assert!(
            text(&out.stdout).contains("valid (3 payload files"),
            "{enc:?}: {}",
            text(&out.stdout)
        );
        // A warning is a failure with --strict, and a corrupt file is found in any encoding.
        assert_eq!(check(d, &["--strict"]).status.code(), Some(1));
        util::write(d, "bag/data/café.txt", b"ONE\n");
        let out = check(d, &[]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            text(&out.stderr).contains("data/café.txt: sha256 digest does not match"),
            "{}",
            text(&out.stderr)
        );
    }
    // An encoding fixity cannot read is a problem, naming it.
    let mut bag = Bag::new(PAYLOAD).with_manifest("sha256");
    bag.bagit_txt = Some(b"BagIt-Version: 1.0\nTag-File-Character-Encoding: KLINGON\n".to_vec());
    expect(d, &bag, 1, &["bagit.txt: 2: Tag-File-Character-Encoding 'KLINGON' is not an encoding"]);
    // Bytes that are not text in the declared encoding.
    let mut bag = Bag::new(&[("a", b"x")]).with_manifest("sha256");
    bag.bagit_txt = Some(b"BagIt-Version: 1.0\nTag-File-Character-Encoding: Shift_JIS\n".to_vec());
    bag.write(&d.join("bag"));
    let mut m = std::fs::read(d.join("bag/manifest-sha256.txt")).unwrap();
    m.push(0x82);
    std::fs::write(d.join("bag/manifest-sha256.txt"), m).unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("manifest-sha256.txt: 1: holds bytes that are not Shift_JIS text"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn dot_slash_paths_and_the_binary_marker_are_warnings() {
    let tmp = util::tempdir();
    let d = tmp.path();
    let mut bag = Bag::new(PAYLOAD);
    let mut lines = bag.lines("sha256");
    lines[0] = lines[0].replacen("  data/", "  ./data/", 1);
    lines[1] = lines[1].replacen("  data/", " *data/", 1);
    lines[2] = lines[2].replacen("  data/", "\tdata//./", 1);
    bag.manifests.push(("sha256", lines));
    let out = expect(
        d,
        &bag,
        0,
        &[
            "manifest-sha256.txt: 2: warning: 1 line with md5sum's binary marker '*'",
            "manifest-sha256.txt: 1: warning: 2 paths not in canonical form (first: ./data/café.txt)",
        ],
    );
    assert!(
        text(&out.stdout)
            .contains("valid (3 payload files, 8 bytes, 3 files verified with sha256; 2 warnings)"),
        "{}",
        text(&out.stdout)
    );
    // --strict: the same warnings make it invalid; --json tells them apart from problems.
    let out = check(d, &["--strict"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("invalid (0 problems, 2 warnings (--strict))"),
        "{}",
        text(&out.stdout)
    );
    let out = check(d, &["--json"]);
    let lines: Vec<serde_json::Value> =
        text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[..2].iter().all(|l| l["severity"] == "warning"));
    assert_eq!((lines[2]["valid"].as_bool(), lines[2]["warnings"].as_u64()), (Some(true), Some(2)));
    assert_eq!(lines[2]["problems"], 0);
}

#[test]
fn only_paths_that_leave_the_bag_are_refused() {
    let tmp = util::tempdir();
    let d = tmp.path();
    for (path, why) in [
        ("../outside", "refused: the path climbs out with '..', leaving the bag"),
        ("data/a/../../x", "refused: the path climbs out"),
        ("/etc/passwd", "refused: the path is absolute"),
        ("~/x", "refused: the path starts with '~', a home directory"),
        ("~root/x", "refused: the path starts with '~'"),
    ] {
        let mut bag = Bag::new(&[("a", b"x")]);
        let mut lines = bag.lines("sha256");
        lines.push(format!("{}  {path}", hex("sha256", b"")));
        bag.manifests.push(("sha256", lines));
        expect(d, &bag, 1, &[&format!("manifest-sha256.txt: 2: {path}: {why}")]);
    }
}

#[test]
fn the_bag_declaration_has_the_exact_form() {
    let tmp = util::tempdir();
    let d = tmp.path();
    let good = b"BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n";
    for (decl, says) in [
        (
            [&b"\xef\xbb\xbf"[..], good].concat(),
            "bagit.txt: 1: begins with a byte-order mark: the bag declaration must not have one",
        ),
        (
            b"BagIt-Version : 1.0\nTag-File-Character-Encoding: UTF-8\n".to_vec(),
            "bagit.txt: 1: not 'BagIt-Version: VALUE' (blanks around the label",
        ),
        (
            b"BagIt-Version:  1.0\nTag-File-Character-Encoding: UTF-8\n".to_vec(),
            "more than one space or tab after the colon",
        ),
        (
            b"Tag-File-Character-Encoding: UTF-8\nBagIt-Version: 1.0\n".to_vec(),
            "bagit.txt: 1: not 'BagIt-Version: VALUE' (another label, or none",
        ),
        (
            [&good[..], b"Extra: x\n"].concat(),
            "bagit.txt: 3 lines: the bag declaration is exactly two",
        ),
        (b"BagIt-Version: 1.0\r\nTag-File-Character-Encoding: UTF-8".to_vec(), ""),
        (b"BagIt-Version: 1.0\rTag-File-Character-Encoding: UTF-8\r".to_vec(), ""),
    ] {
        let mut bag = Bag::new(&[("a", b"x")]).with_manifest("sha256");
        bag.bagit_txt = Some(decl);
        expect(d, &bag, if says.is_empty() { 0 } else { 1 }, &[says]);
    }
    // Before BagIt 1.0 blanks around the colon were allowed: a warning there.
    let mut bag = Bag::new(&[("a", b"x")]).with_manifest("sha256");
    bag.bagit_txt = Some(b"BagIt-Version :  0.97\nTag-File-Character-Encoding : UTF-8\n".to_vec());
    expect(d, &bag, 0, &["bagit.txt: 1: warning: not 'BagIt-Version: VALUE'"]);
    // Other tag files in UTF-8 must not begin with a byte-order mark either.
    let mut bag = Bag::new(&[("a", b"x")]).with_manifest("sha256");
    bag.manifest_bom = true;
    expect(d, &bag, 1, &["manifest-sha256.txt: 1: begins with a byte-order mark"]);
}

#[test]
fn fetch_txt_is_validated_line_by_line_and_unfetched_files_are_named() {
    let tmp = util::tempdir();
    let d = tmp.path();
    for (line, says) in [
        (
            "https://example.org/x 3 ../../etc/cron.d/x",
            "fetch.txt: 1: ../../etc/cron.d/x: refused: the path climbs out",
        ),
        (
            "https://example.org/x 3 /etc/passwd",
            "fetch.txt: 1: /etc/passwd: refused: the path is absolute",
        ),
        (
            "https://example.org/x 3 ~/.bashrc",
            "fetch.txt: 1: ~/.bashrc: refused: the path starts with '~'",
        ),
        ("https://example.org/x 3 ~root/.ssh/authorized_keys", "starts with '~'"),
        (
            "https://example.org/x 3 bag-info.txt",
            "not a payload path (fetch.txt lists only files under data/)",
        ),
        ("example.org/x 3 data/a", "fetch.txt: 1: 'example.org/x' is not an absolute URI"),
        ("https://example.org/x three data/a", "the length 'three' is neither digits nor '-'"),
        ("https://example.org/x", "expected 'url length filepath'"),
    ] {
        let mut bag = Bag::new(&[("a", b"abc")]).with_manifest("sha256");
        bag.fetch = Some(format!("{line}\n"));
        expect(d, &bag, 1, &[says]);
    }
    // A file to fetch, listed in the manifests but not here yet: the bag is not complete,
    // and the check says where it comes from.
    let mut bag = Bag::new(&[("a", b"abc")]);
    let mut lines = bag.lines("sha256");
    lines.push(format!("{}  data/big file.tif", hex("sha256", b"big")));
    bag.manifests.push(("sha256", lines));
    bag.fetch = Some(
        "https://example.org/a 3 data/a\nhttps://example.org/big%20file - data/big file.tif\n"
            .into(),
    );
    let out = expect(
        d,
        &bag,
        1,
        &[
            "fetch.txt: 2: data/big file.tif: not fetched yet (from https://example.org/big%20file): the bag is complete once it is here",
        ],
    );
    assert!(
        text(&out.stdout).contains("invalid (1 problem, 1 file to fetch)"),
        "{}",
        text(&out.stdout)
    );
    let out = check(d, &["--json"]);
    let verdict: serde_json::Value =
        serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(verdict["to_fetch"][0]["path"], "data/big file.tif");
    // Fetched: complete and valid. A length that does not match is a warning.
    util::write(d, "bag/data/big file.tif", b"big");
    std::fs::write(d.join("bag/bag-info.txt"), "Payload-Oxum: 6.2\n").unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::write(d.join("bag/fetch.txt"), "https://example.org/a 4 data/a\n").unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr)
            .contains("fetch.txt: 1: warning: data/a: fetch.txt gives 4 bytes, the file has 3"),
        "{}",
        text(&out.stderr)
    );
    // A file to fetch that a payload manifest does not list.
    std::fs::write(d.join("bag/fetch.txt"), "https://example.org/c 1 data/c\n").unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("fetch.txt: 1: data/c: not listed in manifest-sha256.txt"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_file_listed_twice_is_invalid_from_bagit_1_0_and_a_warning_before() {
    let tmp = util::tempdir();
    let d = tmp.path();
    let mut bag = Bag::new(&[("a", b"x"), ("b", b"y")]);
    let mut lines = bag.lines("sha256");
    lines.push(lines[0].replacen("data/a", "./data/a", 1));
    bag.manifests.push(("sha256", lines.clone()));
    expect(
        d,
        &bag,
        1,
        &[
            "manifest-sha256.txt: 3: data/a: listed again (first on line 1): a manifest lists each file exactly once",
        ],
    );
    bag.version = "0.97";
    expect(d, &bag, 0, &["manifest-sha256.txt: 3: warning: data/a: listed again"]);
    // Another digest the second time is a problem in any version.
    lines[2] = format!("{}  data/a", hex("sha256", b"other"));
    bag.manifests = vec![("sha256", lines)];
    expect(d, &bag, 1, &["data/a: listed again with another digest (first on line 1)"]);
}

#[test]
fn names_alike_but_for_case_or_normalization() {
    let tmp = util::tempdir();
    let d = tmp.path();
    // Two files that are one on a case-insensitive file system: a warning.
    let bag = Bag::new(&[("Readme.txt", b"1"), ("README.txt", b"2")]).with_manifest("sha256");
    expect(d, &bag, 0, &["warning: data/README.txt and data/Readme.txt differ only in case"]);
    let nfc = "Nu\u{fa}\u{f1}ez";
    let nfd = "Nu\u{75}\u{301}n\u{303}ez";
    let bag = Bag::new(&[(nfc, b"1"), (nfd, b"2")]).with_manifest("sha256");
    expect(d, &bag, 0, &["differ only in Unicode normalization"]);
    // A manifest in NFD for a file named in NFC on disk: that file, with a warning.
    let mut bag = Bag::new(&[(nfc, b"1")]);
    bag.manifests.push(("sha256", vec![format!("{}  data/{nfd}", hex("sha256", b"1"))]));
    let out = expect(d, &bag, 0, &["another Unicode normalization of the name: read as that file"]);
    assert!(text(&out.stdout).contains("1 files verified"), "{}", text(&out.stdout));
}

#[test]
fn tag_manifests_list_the_payload_manifests_and_no_payload() {
    let tmp = util::tempdir();
    let d = tmp.path();
    let mut bag = Bag::new(&[("a", b"x")]).with_manifest("sha256");
    bag.tag_manifest = true;
    bag.write(&d.join("bag"));
    let good = check(d, &[]);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stderr));
    assert!(!text(&good.stderr).contains("warning"), "{}", text(&good.stderr));
    let tm = d.join("bag/tagmanifest-sha256.txt");
    let listed = std::fs::read_to_string(&tm).unwrap();
    // Without the payload manifest: invalid; without bag-info.txt: a warning.
    let without = |name: &str| {
        listed.lines().filter(|l| !l.ends_with(name)).map(|l| format!("{l}\n")).collect::<String>()
    };
    std::fs::write(&tm, without("manifest-sha256.txt")).unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(
            "tagmanifest-sha256.txt: does not list the payload manifest manifest-sha256.txt"
        ),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(&tm, without("bag-info.txt")).unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("warning: does not list the tag file bag-info.txt"),
        "{}",
        text(&out.stderr)
    );
    // A payload file in a tag manifest.
    std::fs::write(&tm, format!("{listed}{}  data/a\n", hex("sha256", b"x"))).unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("data/a: a tag manifest must not list payload files"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn bag_info_elements_have_the_exact_form_and_one_payload_oxum() {
    let tmp = util::tempdir();
    let d = tmp.path();
    let bag = Bag::new(&[("a", b"x")]).with_manifest("sha256");
    bag.write(&d.join("bag"));
    let info = d.join("bag/bag-info.txt");
    std::fs::write(&info, "Payload-Oxum: 1.1\nContact-Name:Jo\nPayload-Oxum: 1.1\n").unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("bag-info.txt: 2: not 'Label: value' (no space or tab after the colon"),
        "{err}"
    );
    assert!(
        err.contains(
            "bag-info.txt: 3: Payload-Oxum again (first on line 1): it must not be repeated"
        ),
        "{err}"
    );
    // Continuation lines and an empty value are the RFC's form.
    std::fs::write(&info, "Payload-Oxum: 1.1\nExternal-Description: one\n  two\nContact-Name:\n")
        .unwrap();
    assert_eq!(check(d, &[]).status.code(), Some(0));
}

// ---- differential against bagit-python ----

/// A generated bag and what it holds that fixity and bagit-python judge differently on
/// purpose (docs/bagit.md, "Differences from bagit-python").
struct Case {
    bag: Bag,
    deliberate: Option<&'static str>,
}

const NAMES: &[&str] =
    &["a.txt", "sp ace.txt", "café", "sub/Zoë.txt", "sub/deep/x", ".hidden", "n-1"];

fn generate(rng: &mut Rng) -> Case {
    let n = 1 + rng.below(4);
    let mut payload: Vec<(&str, Vec<u8>)> = Vec::new();
    for _ in 0..n {
        let name = *rng.pick(NAMES);
        if payload.iter().any(|(p, _)| *p == name) {
            continue;
        }
        let len = rng.below(40);
        payload.push((name, (0..len).map(|_| rng.next() as u8).collect()));
    }
    let refs: Vec<(&str, &[u8])> = payload.iter().map(|(p, c)| (*p, c.as_slice())).collect();
    let mut bag = Bag::new(&refs);
    bag.version = if rng.chance(20) { "0.97" } else { "1.0" };
    bag.enc = *rng.pick(&[
        Enc::Utf8,
        Enc::Utf8,
        Enc::Latin1,
        Enc::Utf16 { be: true },
        Enc::Utf16 { be: false },
    ]);
    let mut deliberate = None;
    let algos = if rng.chance(30) { &["sha256", "md5"][..] } else { &["sha256"][..] };
    let mut popped = 0;
    for algo in algos {
        let mut lines = bag.lines(algo);
        for l in lines.iter_mut() {
            match rng.below(10) {
                0 => *l = l.replacen("  data/", "  ./data/", 1),
                1 => *l = l.replacen("  data/", " *data/", 1),
                2 => *l = l.replacen("  ", "\t", 1),
                3 => {
                    let (digest, path) = l.split_once("  ").expect("a line");
                    *l = format!("{}  {path}", digest.to_uppercase());
                }
                _ => {}
            }
        }
        if rng.chance(8) {
            lines.pop();
            popped += 1;
        }
        if rng.chance(10)
            && let Some(again) = lines.first().cloned()
        {
            lines.push(again);
        }
        bag.manifests.push((algo, lines));
    }
    if bag.version == "1.0" && popped == 1 && algos.len() == 2 {
        deliberate = Some("a file left out of one of two payload manifests (1.0: every manifest)");
    }
    if rng.chance(10) {
        // A file changed after bagging.
        if let Some((_, c)) = bag.payload.first_mut() {
            c.push(b'!');
        }
    }
    if rng.chance(30) {
        let (p, c) = &bag.payload[0];
        let length = if rng.chance(50) { c.len().to_string() } else { "-".into() };
        let path = match rng.below(8) {
            0 => "../outside".to_string(),
            1 => "/etc/passwd".to_string(),
            2 => "~/x".to_string(),
            _ => format!("data/{p}"),
        };
        bag.fetch = Some(format!("https://example.org/{} {length} {path}\n", rng.below(100)));
    }
    if rng.chance(4) {
        bag.bagit_txt = Some(
            [
                &b"\xef\xbb\xbf"[..],
                format!(
                    "BagIt-Version: {}\nTag-File-Character-Encoding: {}\n",
                    bag.version,
                    bag.enc.label()
                )
                .as_bytes(),
            ]
            .concat(),
        );
    }
    if bag.version == "1.0" && rng.chance(5) {
        bag.bagit_txt = Some(
            format!("BagIt-Version : 1.0\nTag-File-Character-Encoding: {}\n", bag.enc.label())
                .into_bytes(),
        );
        deliberate = Some("bagit.txt with blanks before the colon (1.0: exact form)");
    }
    if matches!(bag.enc, Enc::Utf8) && rng.chance(5) {
        bag.manifest_bom = true;
        deliberate = Some("a UTF-8 manifest with a byte-order mark (MUST NOT)");
    }
    bag.tag_manifest = rng.chance(40);
    Case { bag, deliberate }
}

#[test]
fn generated_bags_are_judged_as_bagit_python_judges_them() {
    let Some(_) = crate::bag::bagit_py() else {
        return util::missing("bagit.py", "not installed (pip install bagit)");
    };
    let tmp = util::tempdir();
    let what = "bags judged by fixity against bagit-python";
    util::random_cases(80, 0xba61_7000_0000_0001, what, |seed, first, step, count| {
        let root = tmp.path().join(format!("t{first}"));
        let mut diffs = Vec::new();
        for i in (first..count).step_by(step) {
            let mut rng = Rng(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let case = generate(&mut rng);
            case.bag.write(&root.join("bag"));
            let ours = util::run(&root, ["bag", "check", "bag"]);
            let theirs = crate::bag::bagit_py()
                .unwrap()
                .args(["--validate", "bag"])
                .current_dir(&root)
                .output()
                .unwrap();
            let (a, b) = (ours.status.code() == Some(0), theirs.status.success());
            match (a == b, case.deliberate) {
                (true, None) | (false, Some(_)) => {}
                (true, Some(why)) if a => diffs.push(format!("case {i:#x}: expected to differ ({why}), both valid")),
                (true, Some(_)) => {} // invalid for another reason too
                (false, None) => diffs.push(format!(
                    "case {i:#x} (seed {seed:#x}): fixity {} (exit {:?}), bagit-python {}\nfixity: {}\nbagit-python: {}",
                    if a { "valid" } else { "invalid" },
                    ours.status.code(),
                    if b { "valid" } else { "invalid" },
                    text(&ours.stderr),
                    text(&theirs.stderr).lines().rev().take(4).collect::<Vec<_>>().join(" | "),
                )),
            }
        }
        diffs
    });
}

#[test]
fn a_bag_needs_a_data_directory_and_a_payload_manifest() {
    let tmp = util::tempdir();
    let d = tmp.path();
    let bag = Bag::new(&[("a", b"x")]).with_manifest("sha256");
    bag.write(&d.join("bag"));
    std::fs::remove_file(d.join("bag/manifest-sha256.txt")).unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("manifest-ALG.txt: no payload manifest"),
        "{}",
        text(&out.stderr)
    );
    bag.write(&d.join("bag"));
    std::fs::remove_dir_all(d.join("bag/data")).unwrap();
    std::fs::write(d.join("bag/data"), b"a file").unwrap();
    let out = check(d, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("bag/data: not a directory"), "{}", text(&out.stderr));
}
