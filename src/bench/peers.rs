//! The tools people compare fixity with: which of them compute an algorithm, the command
//! line that runs each over a file or tree (the way people run them: `find | xargs`, a
//! parallel `xargs -P`, `rhash -r`, `hashdeep -r` ...), and a parser for their output so
//! their digests can be checked against fixity's.

use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::formats::{LineKind, Manifest};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// One way of running a peer tool.
#[derive(Clone, Debug)]
pub(crate) struct PeerCommand {
    /// What the table shows: `sha256sum (xargs -P2)`, `rhash -r`.
    pub name: String,
    /// The program that must be installed.
    pub program: &'static str,
    /// The shell command (run with `sh -c`).
    pub command: String,
    /// The command whose output is checked against fixity's digests: the same tool
    /// without `xargs -P`, whose processes would interleave partial lines in one pipe.
    pub check_command: String,
    /// Whether `program` was found (and accepts this algorithm).
    pub installed: bool,
}

/// Quotes `s` for a POSIX shell.
pub(crate) fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,".contains(&b)) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Whether `program` is on PATH.
pub(crate) fn installed(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {} >/dev/null 2>&1", shell_quote(program)))
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether coreutils' `cksum` takes `-a` (coreutils 9 and later).
fn cksum_has_a() -> bool {
    Command::new("cksum")
        .args(["-a", "sha256", "/dev/null"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Every peer command that computes `algo`, for `path` (a directory holding `files` files,
/// or one file), with `cores` for the parallel variants. Commands whose program is
/// missing are included with `installed: false`, so they can be listed as such.
pub(crate) fn commands_for(
    algo: &Algorithm,
    path: &str,
    is_dir: bool,
    files: u64,
    cores: usize,
) -> Vec<PeerCommand> {
    let p = shell_quote(path);
    let list =
        if is_dir { format!("find {p} -type f -print0") } else { format!("printf '%s\\0' {p}") };
    // Enough batches that `xargs -P` keeps every core busy to the end.
    let per_batch = (files / (cores as u64 * 8).max(1)).clamp(1, 5000);
    let jobs = cores.max(2);
    let mut out = Vec::new();
    let mut add = |name: String, program: &'static str, command: String| {
        let check_command = serial(&command);
        out.push(PeerCommand { name, program, command, check_command, installed: false });
    };
    let coreutils = match algo.name {
        "md5" => Some("md5sum"),
        "sha1" => Some("sha1sum"),
        "sha224" => Some("sha224sum"),
        "sha256" => Some("sha256sum"),
        "sha384" => Some("sha384sum"),
        "sha512" => Some("sha512sum"),
        "blake2b" => Some("b2sum"),
        _ => None,
    };
    if let Some(tool) = coreutils {
        add(format!("{tool} (xargs)"), tool, format!("{list} | xargs -0 {tool}"));
        add(
            format!("{tool} (xargs -P{jobs})"),
            tool,
            format!("{list} | xargs -0 -P{jobs} -n {per_batch} {tool}"),
        );
        let a = algo.name;
        add(format!("cksum -a {a} (xargs)"), "cksum", format!("{list} | xargs -0 cksum -a {a}"));
    }
    let rhash = match algo.name {
        "crc32" | "crc32c" | "md4" | "md5" | "sha1" | "sha224" | "sha256" | "sha384" | "sha512"
        | "sha3-224" | "sha3-256" | "sha3-384" | "sha3-512" | "blake2s" | "blake2b"
        | "ripemd160" | "whirlpool" | "tiger" | "gost94" | "gost94-cryptopro" | "gost12-256"
        | "gost12-512" => Some(algo.name),
        _ => None,
    };
    if let Some(r) = rhash {
        add("rhash -r".into(), "rhash", format!("rhash -r --simple --{r} {p}"));
    }
    if matches!(algo.name, "md5" | "sha1" | "sha256") {
        add("hashdeep -r".into(), "hashdeep", format!("hashdeep -r -c {} {p}", algo.name));
    }
    if algo.name == "blake3" {
        add("b3sum (xargs)".into(), "b3sum", format!("{list} | xargs -0 b3sum"));
    }
    let xxh = match algo.name {
        "xxh32" => Some(0),
        "xxh64" => Some(1),
        "xxh128" => Some(2),
        "xxh3" => Some(3),
        _ => None,
    };
    if let Some(h) = xxh {
        add(
            format!("xxhsum -H{h} (xargs -P{jobs})"),
            "xxhsum",
            format!("{list} | xargs -0 -P{jobs} -n {per_batch} xxhsum -H{h}"),
        );
    }
    if algo.name == "crc32" {
        add("cksfv (xargs)".into(), "cksfv", format!("{list} | xargs -0 cksfv -q"));
    }
    let cfv = match algo.name {
        "crc32" => Some("sfv"),
        "md5" => Some("md5"),
        "sha1" => Some("sha1"),
        _ => None,
    };
    if let Some(t) = cfv {
        let rr = if is_dir { "-rr " } else { "" };
        add("cfv".into(), "cfv", format!("cfv -C {rr}-t {t} -f - {p}"));
    }
    let openssl = match algo.name {
        "md5" | "sha1" | "sha224" | "sha256" | "sha384" | "sha512" | "sha3-256" | "sha3-512" => {
            Some(algo.name.to_string())
        }
        "blake2b" => Some("blake2b512".into()),
        "blake2s" => Some("blake2s256".into()),
        _ => None,
    };
    if let Some(o) = openssl {
        add(
            "openssl dgst (xargs)".into(),
            "openssl",
            format!("{list} | xargs -0 openssl dgst -{o} -r"),
        );
    }
    let has_cksum_a = out.iter().any(|c| c.program == "cksum") && cksum_has_a();
    for c in &mut out {
        c.installed = if c.program == "cksum" { has_cksum_a } else { installed(c.program) };
    }
    out
}

/// `command` with its `xargs -P N -n M` made plain `xargs` (one process at a time).
fn serial(command: &str) -> String {
    let mut words: Vec<&str> = command.split(' ').collect();
    if let Some(i) = words.iter().position(|w| w.starts_with("-P")) {
        words.remove(i);
        if words.get(i) == Some(&"-n") {
            words.drain(i..i + 2);
        }
    }
    words.join(" ")
}

/// Reads the digests out of a peer's output: GNU, BSD-tag, SFV, xxhsum and openssl `-r`
/// lines, and hashdeep's CSV. Paths are returned as the tool printed them, except that an
/// absolute path under `cwd` (hashdeep prints those) is made relative to it again.
pub fn parse_output(out: &[u8], cwd: &Path) -> HashMap<Vec<u8>, Digest> {
    let relative = |p: Vec<u8>| same_name(&p, cwd);
    let mut map = HashMap::new();
    let mut manifest = Manifest::new(false);
    let mut hashdeep = false;
    for line in out.split(|&b| b == b'\n') {
        if line.starts_with(b"%%%% HASHDEEP") {
            hashdeep = true;
            continue;
        }
        if hashdeep {
            if line.starts_with(b"%%%%") || line.starts_with(b"##") || line.is_empty() {
                continue;
            }
            // size,digest,path (the path may hold commas; it is last).
            let mut parts = line.splitn(3, |&b| b == b',');
            let (_, Some(hex), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            if let Some(d) = Digest::from_hex(hex) {
                map.insert(relative(path.to_vec()), d);
            }
            continue;
        }
        if let LineKind::Record(r) = manifest.parse_line(line)
            && let Some(d) = r.digest.decode_as(crate::digest::Encoding::Hex)
        {
            map.insert(relative(r.name), d);
        }
    }
    map
}

/// A file's name as the comparison keys it, whoever printed it: relative to `cwd` when it
/// lies below it (hashdeep prints absolute paths; fixity and `find` keep an absolute
/// argument absolute), without leading `./` (rhash drops it, `find ./d` keeps it).
pub(crate) fn same_name(name: &[u8], cwd: &Path) -> Vec<u8> {
    let cwd = crate::pathtext::path_bytes(cwd);
    let mut rest = match name.strip_prefix(cwd) {
        Some(r) if r.first() == Some(&b'/') => &r[1..],
        _ => name,
    };
    while let Some(r) = rest.strip_prefix(b"./") {
        rest = r;
    }
    rest.to_vec()
}

/// How a peer's digests compare with fixity's.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Agreement {
    /// Files both computed, with equal digests.
    pub matched: u64,
    /// Files both computed, with different digests (first few names).
    pub mismatched: Vec<String>,
    /// How many files fixity hashed that the peer did not list.
    pub missing: u64,
}

impl Agreement {
    /// Compares `peer` with fixity's `ours`.
    pub(crate) fn of(
        ours: &HashMap<Vec<u8>, Digest>,
        peer: &HashMap<Vec<u8>, Digest>,
    ) -> Agreement {
        let mut a = Agreement { matched: 0, mismatched: Vec::new(), missing: 0 };
        let mut bad = 0u64;
        for (path, d) in ours {
            match peer.get(path) {
                Some(p) if p.ct_eq(d) => a.matched += 1,
                Some(_) => {
                    bad += 1;
                    if a.mismatched.len() < 5 {
                        a.mismatched.push(String::from_utf8_lossy(path).into_owned());
                    }
                }
                None => a.missing += 1,
            }
        }
        if bad as usize > a.mismatched.len() {
            a.mismatched.push(format!("... {} in all", bad));
        }
        a
    }

    /// A short verdict for tables: `agrees`, `DISAGREES (3 files)`, `agrees (9 of 10 listed)`,
    /// `NOT COMPARED (0 of 10 listed)` when none of the peer's lines named a file fixity hashed.
    pub(crate) fn verdict(&self) -> String {
        let bad = self.mismatched.len();
        if bad > 0 {
            format!("DISAGREES ({} file{})", bad, if bad == 1 { "" } else { "s" })
        } else if self.matched == 0 && self.missing > 0 {
            format!("NOT COMPARED (0 of {} listed)", self.missing)
        } else if self.missing > 0 {
            format!("agrees ({} of {} listed)", self.matched, self.matched + self.missing)
        } else {
            "agrees".into()
        }
    }

    /// Whether any file was compared at all.
    pub fn compared(&self) -> bool {
        self.matched > 0 || !self.mismatched.is_empty() || self.missing == 0
    }

    /// Whether any digest differed.
    pub fn disagrees(&self) -> bool {
        !self.mismatched.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::lookup;

    fn d(hex: &str) -> Digest {
        Digest::from_hex(hex.as_bytes()).unwrap()
    }

    #[test]
    fn parses_every_peer_output_format() {
        let cwd = Path::new("/tmp");
        let sha = "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7";
        // coreutils / b3sum / rhash --simple
        let m = parse_output(format!("{sha}  pt/x\n").as_bytes(), cwd);
        assert_eq!(m[&b"pt/x".to_vec()], d(sha));
        // openssl dgst -r
        let m = parse_output(format!("{sha} *pt/x\n").as_bytes(), cwd);
        assert_eq!(m[&b"pt/x".to_vec()], d(sha));
        // cksum -a sha256 (BSD tag)
        let m = parse_output(format!("SHA256 (pt/x) = {sha}\n").as_bytes(), cwd);
        assert_eq!(m[&b"pt/x".to_vec()], d(sha));
        // hashdeep CSV with absolute paths under the working directory
        let hd = format!(
            "%%%% HASHDEEP-1.0\n%%%% size,sha256,filename\n## Invoked from: /tmp\n## \n2,{sha},/tmp/pt/x\n2,{sha},/tmp/pt/a,b\n"
        );
        let m = parse_output(hd.as_bytes(), cwd);
        assert_eq!(m[&b"pt/x".to_vec()], d(sha));
        assert_eq!(m[&b"pt/a,b".to_vec()], d(sha));
        // xxhsum 0.8 (-H3 prints a BSD tag; -H1/-H2 GNU lines)
        let m = parse_output(b"XXH3 (pt/x) = e841f27363849a18\n", cwd);
        assert_eq!(m[&b"pt/x".to_vec()], d("e841f27363849a18"));
        // cksfv / cfv SFV with comments, upper and lower case
        let sfv = b"; Generated by cksfv\n;   2  11:45.59 2026-11-23 pt/x\npt/x DDEAA107\npt/s/y f6c7f2c4\n";
        let m = parse_output(sfv, cwd);
        assert_eq!(m[&b"pt/x".to_vec()], d("ddeaa107"));
        assert_eq!(m[&b"pt/s/y".to_vec()], d("f6c7f2c4"));
    }

    #[test]
    fn names_compare_alike_however_they_were_given() {
        let cwd = Path::new("/tmp/b");
        for name in ["d/x", "./d/x", "././d/x", "/tmp/b/d/x", "/tmp/b/./d/x"] {
            assert_eq!(same_name(name.as_bytes(), cwd), b"d/x", "{name}");
        }
        assert_eq!(same_name(b"/tmp/bd/x", cwd), b"/tmp/bd/x", "not below the directory");
        assert_eq!(same_name(b"/elsewhere/x", cwd), b"/elsewhere/x");
    }

    #[test]
    fn agreement_counts_matches_mismatches_and_gaps() {
        let ours: HashMap<Vec<u8>, Digest> =
            [(b"a".to_vec(), d("00")), (b"b".to_vec(), d("11")), (b"c".to_vec(), d("22"))].into();
        let same: HashMap<_, _> = ours.clone();
        assert_eq!(Agreement::of(&ours, &same).verdict(), "agrees");
        let mut partial = ours.clone();
        partial.remove(b"c".as_slice());
        assert_eq!(Agreement::of(&ours, &partial).verdict(), "agrees (2 of 3 listed)");
        let none = Agreement::of(&ours, &HashMap::new());
        assert_eq!(
            (none.verdict().as_str(), none.compared()),
            ("NOT COMPARED (0 of 3 listed)", false)
        );
        let mut wrong = ours.clone();
        wrong.insert(b"b".to_vec(), d("12"));
        let a = Agreement::of(&ours, &wrong);
        assert!(a.disagrees());
        assert_eq!(a.mismatched, vec!["b".to_string()]);
        assert_eq!(a.verdict(), "DISAGREES (1 file)");
    }

    #[test]
    fn commands_cover_the_peers_of_each_algorithm() {
        let names = |a: &str| -> Vec<String> {
            commands_for(lookup(a).unwrap(), "D 1", true, 1000, 2)
                .into_iter()
                .map(|c| c.name)
                .collect()
        };
        let sha = names("sha256");
        for want in [
            "sha256sum (xargs)",
            "sha256sum (xargs -P2)",
            "rhash -r",
            "hashdeep -r",
            "openssl dgst (xargs)",
        ] {
            assert!(sha.contains(&want.to_string()), "{sha:?}");
        }
        assert!(names("blake3").contains(&"b3sum (xargs)".to_string()));
        assert!(names("crc32").contains(&"cksfv (xargs)".to_string()));
        assert!(names("crc32").contains(&"cfv".to_string()));
        assert!(names("xxh3").contains(&"xxhsum -H3 (xargs -P2)".to_string()));
        let cmd = &commands_for(lookup("md5").unwrap(), "D 1", true, 1000, 2)[1].command;
        assert_eq!(cmd, "find 'D 1' -type f -print0 | xargs -0 -P2 -n 62 md5sum");
        let check = &commands_for(lookup("md5").unwrap(), "D 1", true, 1000, 2)[1].check_command;
        assert_eq!(check, "find 'D 1' -type f -print0 | xargs -0 md5sum", "no interleaved output");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
