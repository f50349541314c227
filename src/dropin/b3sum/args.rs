//! b3sum's command line as clap 2 parses it: its arguments, conflicts, and the texts
//! of its errors, "Did you mean" suggestions included.

use super::NAME;
use crate::cmd::Status;
use fixity::sys::OsStrExt;
use std::ffi::{OsStr, OsString};

/// The options, with how clap shows them in messages.
pub(super) struct Arg {
    pub(super) name: &'static str,
    pub(super) short: Option<u8>,
    pub(super) value: Option<&'static str>,
}

pub(super) const ARGS: &[Arg] = &[
    Arg { name: "check", short: Some(b'c'), value: None },
    Arg { name: "derive-key", short: None, value: Some("<CONTEXT>") },
    Arg { name: "help", short: Some(b'h'), value: None },
    Arg { name: "keyed", short: None, value: None },
    Arg { name: "length", short: Some(b'l'), value: Some("<LEN>") },
    Arg { name: "no-mmap", short: None, value: None },
    Arg { name: "no-names", short: None, value: None },
    Arg { name: "num-threads", short: None, value: Some("<NUM>") },
    Arg { name: "quiet", short: None, value: None },
    Arg { name: "raw", short: None, value: None },
    Arg { name: "version", short: Some(b'V'), value: None },
];

/// Pairs that exclude each other, as (shown first, shown second) in clap's message, in
/// the order b3sum 1.2.0 reports them when several apply (`--keyed --derive-key X -c`,
/// three conflicts, it reports at random: clap 2 walks a hash map).
pub(super) const CONFLICTS: &[(&str, &str)] = &[
    ("derive-key", "check"),
    ("keyed", "check"),
    ("keyed", "derive-key"),
    ("length", "check"),
    ("raw", "check"),
    ("no-names", "check"),
];

pub(super) fn shown(a: &Arg) -> String {
    match a.value {
        Some(v) => format!("--{} {v}", a.name),
        None => format!("--{}", a.name),
    }
}

pub(super) fn arg(name: &str) -> &'static Arg {
    ARGS.iter().find(|a| a.name == name).expect("known argument")
}

/// clap 2's error: the message, a usage line naming the arguments given so far (and those
/// they require), exit 1.
pub(super) fn clap_error(msg: &str, used: &[&str], extra: Option<&str>) -> Status {
    let mut names: Vec<&str> = used.to_vec();
    if used.contains(&"quiet") {
        names.push("check");
    }
    names.extend(extra);
    names.sort();
    names.dedup();
    let mut usage = String::from(NAME);
    if used.contains(&"keyed") {
        usage.push_str(" <FILE>...");
    }
    if names.is_empty() {
        usage.push_str(" [FLAGS] [OPTIONS] [FILE]...");
    }
    for n in names {
        usage.push(' ');
        usage.push_str(&shown(arg(n)));
    }
    eprint!("error: {msg}\n\nUSAGE:\n    {usage}\n\nFor more information try --help\n");
    Status::Failed
}

/// Jaro-Winkler similarity (Winkler's prefix scale 0.1, prefix up to 4), which clap 2
/// uses to suggest a long option.
pub(super) fn jaro_winkler(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let window = (a.len().max(b.len()) / 2).saturating_sub(1);
    let mut b_used = vec![false; b.len()];
    let mut a_matches = Vec::new();
    for (i, &c) in a.iter().enumerate() {
        let lo = i.saturating_sub(window);
        let hi = (i + window + 1).min(b.len());
        if let Some(j) = (lo..hi).find(|&j| !b_used[j] && b[j] == c) {
            b_used[j] = true;
            a_matches.push(c);
        }
    }
    let m = a_matches.len();
    if m == 0 {
        return 0.0;
    }
    let b_matches: Vec<char> =
        b.iter().zip(&b_used).filter(|(_, u)| **u).map(|(c, _)| *c).collect();
    let transpositions = a_matches.iter().zip(&b_matches).filter(|(x, y)| x != y).count() / 2;
    let m = m as f64;
    let jaro = (m / a.len() as f64 + m / b.len() as f64 + (m - transpositions as f64) / m) / 3.0;
    let prefix = a.iter().zip(&b).take(4).take_while(|(x, y)| x == y).count() as f64;
    jaro + prefix * 0.1 * (1.0 - jaro)
}

/// The long option clap 2 suggests for `typed`: the most similar above 0.8.
pub(super) fn suggestion(typed: &str) -> Option<&'static str> {
    let mut best: Option<(f64, &'static str)> = None;
    for a in ARGS {
        let score = jaro_winkler(typed, a.name);
        if score > 0.8 && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, a.name));
        }
    }
    best.map(|(_, n)| n)
}

#[derive(Default)]
pub(super) struct Opts {
    pub(super) used: Vec<&'static str>,
    pub(super) length: Option<OsString>,
    pub(super) num_threads: Option<OsString>,
    pub(super) derive_key: Option<OsString>,
    pub(super) files: Vec<OsString>,
    /// The first argument given twice.
    pub(super) repeated: Option<&'static Arg>,
}

impl Opts {
    pub(super) fn has(&self, name: &str) -> bool {
        self.used.contains(&name)
    }
}

pub(super) fn parse(args: &[OsString]) -> Result<Opts, Status> {
    let mut o = Opts::default();
    let mut it = args.iter();
    let mut only_files = false;
    let take = |o: &mut Opts,
                a: &'static Arg,
                value: Option<OsString>,
                it: &mut std::slice::Iter<OsString>| {
        // clap 2 takes a repeated argument (and its value) and refuses it once the whole
        // command line is read, naming in its usage line everything given.
        if o.has(a.name) {
            o.repeated.get_or_insert(a);
        } else {
            o.used.push(a.name);
        }
        if a.value.is_some() {
            let v = match value.or_else(|| it.next().cloned()) {
                Some(v) => v,
                // A repeated option without its value is refused as repeated.
                None if o.repeated.is_some_and(|r| r.name == a.name) => return Ok(()),
                None => {
                    let msg = format!(
                        "The argument '{}' requires a value but none was supplied",
                        shown(a)
                    );
                    o.used.retain(|n| *n != a.name);
                    return Err(clap_error(&msg, &o.used, Some(a.name)));
                }
            };
            if o.repeated.is_some_and(|r| r.name == a.name) {
                return Ok(());
            }
            match a.name {
                "length" => o.length = Some(v),
                "num-threads" => o.num_threads = Some(v),
                _ => o.derive_key = Some(v),
            }
        }
        Ok(())
    };
    while let Some(a) = it.next() {
        let bytes = a.as_bytes();
        if only_files || bytes == b"-" || !bytes.starts_with(b"-") {
            o.files.push(a.clone());
            continue;
        }
        if bytes == b"--" {
            only_files = true;
            continue;
        }
        if let Some(long) = bytes.strip_prefix(b"--") {
            let (name, value) = match long.iter().position(|&b| b == b'=') {
                Some(i) => (&long[..i], Some(OsString::from(OsStr::from_bytes(&long[i + 1..])))),
                None => (long, None),
            };
            let Some(spec) = ARGS.iter().find(|s| s.name.as_bytes() == name) else {
                let typed = String::from_utf8_lossy(name);
                let hint = suggestion(&typed);
                let mut msg = format!(
                    "Found argument '{}' which wasn't expected, or isn't valid in this context",
                    a.to_string_lossy()
                );
                if let Some(h) = hint {
                    msg.push_str(&format!("\n\tDid you mean \x1b[32m--\x1b[0m\x1b[32m{h}\x1b[0m?"));
                }
                return Err(clap_error(&msg, &o.used, hint));
            };
            take(&mut o, spec, value, &mut it)?;
            continue;
        }
        let mut rest = &bytes[1..];
        while let Some((&c, tail)) = rest.split_first() {
            rest = tail;
            let Some(spec) = ARGS.iter().find(|s| s.short == Some(c)) else {
                let msg = format!(
                    "Found argument '-{}' which wasn't expected, or isn't valid in this context",
                    c as char
                );
                return Err(clap_error(&msg, &o.used, None));
            };
            let value = if spec.value.is_some() && !rest.is_empty() {
                let v = OsString::from(OsStr::from_bytes(rest));
                rest = &[];
                Some(v)
            } else {
                None
            };
            take(&mut o, spec, value, &mut it)?;
        }
    }
    if let Some(a) = o.repeated {
        let msg = format!(
            "The argument '{}' was provided more than once, but cannot be used multiple times",
            shown(a)
        );
        return Err(clap_error(&msg, &o.used, None));
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaro_winkler_matches_published_values() {
        // Winkler's examples (1990) as strsim computes them.
        assert!((jaro_winkler("MARTHA", "MARHTA") - 0.9611).abs() < 1e-4);
        assert!((jaro_winkler("DIXON", "DICKSONX") - 0.8133).abs() < 1e-4);
        assert!((jaro_winkler("DWAYNE", "DUANE") - 0.84).abs() < 1e-4);
        assert_eq!(suggestion("chek"), Some("check"));
        assert_eq!(suggestion("len"), Some("length"));
        assert_eq!(suggestion("bogus"), None);
    }
}
