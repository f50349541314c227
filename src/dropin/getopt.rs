//! GNU `getopt_long` as the drop-ins need it: bundled short options (`-bc`, `-l256`),
//! long options and their unambiguous prefixes (`--stat`), `--opt=value` and
//! `--opt value`, options anywhere among the operands (permutation), `--` ends the
//! options. Errors carry glibc's message text; the caller prints it after the program
//! name, followed by its "Try ..." line.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

/// One option a program takes.
#[derive(Clone, Copy, Debug)]
pub struct Opt {
    /// The long name (without `--`), or "" when the option has only a short form.
    pub long: &'static str,
    /// The short letter, if any.
    pub short: Option<u8>,
    /// Whether it takes an argument.
    pub arg: bool,
    /// The key reported for it (usually the long name).
    pub key: &'static str,
}

/// A parsed command line: options in the order given, then the operands.
#[derive(Debug, Default)]
pub struct Parsed {
    pub opts: Vec<(&'static str, Option<OsString>)>,
    pub operands: Vec<OsString>,
}

/// Parses `args` (without argv[0]) against `spec`.
pub fn parse(spec: &[Opt], args: &[OsString]) -> Result<Parsed, String> {
    let mut p = Parsed::default();
    let mut it = args.iter();
    let mut only_operands = false;
    while let Some(arg) = it.next() {
        let bytes = arg.as_bytes();
        if only_operands || bytes == b"-" || !bytes.starts_with(b"-") {
            p.operands.push(arg.clone());
            continue;
        }
        if bytes == b"--" {
            only_operands = true;
            continue;
        }
        if let Some(long) = bytes.strip_prefix(b"--") {
            let (name, value) = match long.iter().position(|&b| b == b'=') {
                Some(i) => {
                    (&long[..i], Some(OsString::from(std::ffi::OsStr::from_bytes(&long[i + 1..]))))
                }
                None => (long, None),
            };
            let shown = String::from_utf8_lossy(name).into_owned();
            let longs = || spec.iter().filter(|o| !o.long.is_empty());
            let exact = longs().find(|o| o.long.as_bytes() == name);
            let matches: Vec<&Opt> =
                longs().filter(|o| o.long.as_bytes().starts_with(name)).collect();
            let opt = match (exact, matches.as_slice()) {
                (Some(e), _) => e,
                (None, [one]) => *one,
                (None, []) => return Err(format!("unrecognized option '--{shown}'")),
                (None, many) => {
                    let list: Vec<String> =
                        many.iter().map(|m| format!("'--{}'", m.long)).collect();
                    return Err(format!(
                        "option '--{shown}' is ambiguous; possibilities: {}",
                        list.join(" ")
                    ));
                }
            };
            if opt.arg {
                let v = match value {
                    Some(v) => v,
                    None => match it.next() {
                        Some(v) => v.clone(),
                        None => {
                            return Err(format!("option '--{}' requires an argument", opt.long));
                        }
                    },
                };
                p.opts.push((opt.key, Some(v)));
            } else if value.is_some() {
                return Err(format!("option '--{}' doesn't allow an argument", opt.long));
            } else {
                p.opts.push((opt.key, None));
            }
            continue;
        }
        let mut rest = &bytes[1..];
        while let Some((&c, tail)) = rest.split_first() {
            rest = tail;
            let Some(opt) = spec.iter().find(|o| o.short == Some(c)) else {
                return Err(format!("invalid option -- '{}'", c as char));
            };
            if opt.arg {
                let v = if !rest.is_empty() {
                    OsString::from(std::ffi::OsStr::from_bytes(rest))
                } else {
                    match it.next() {
                        Some(v) => v.clone(),
                        None => {
                            return Err(format!("option requires an argument -- '{}'", c as char));
                        }
                    }
                };
                p.opts.push((opt.key, Some(v)));
                rest = &[];
            } else {
                p.opts.push((opt.key, None));
            }
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &[Opt] = &[
        Opt { long: "algorithm", short: Some(b'a'), arg: true, key: "algorithm" },
        Opt { long: "check", short: Some(b'c'), arg: false, key: "check" },
        Opt { long: "status", short: None, arg: false, key: "status" },
        Opt { long: "strict", short: None, arg: false, key: "strict" },
        Opt { long: "", short: Some(b'r'), arg: false, key: "r" },
    ];

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_the_gnu_way() {
        let p =
            parse(SPEC, &os(&["-rc", "x", "-amd5", "--stat", "--alg=sha1", "--", "-c"])).unwrap();
        let keys: Vec<&str> = p.opts.iter().map(|o| o.0).collect();
        assert_eq!(keys, ["r", "check", "algorithm", "status", "algorithm"]);
        assert_eq!(p.opts[2].1.as_deref(), Some("md5".as_ref()));
        assert_eq!(p.opts[4].1.as_deref(), Some("sha1".as_ref()));
        assert_eq!(p.operands, os(&["x", "-c"]));
        let p = parse(SPEC, &os(&["-a", "crc", "-"])).unwrap();
        assert_eq!(p.opts[0].1.as_deref(), Some("crc".as_ref()));
        assert_eq!(p.operands, os(&["-"]));
    }

    #[test]
    fn errors_carry_glibc_messages() {
        let err = |v: &[&str]| parse(SPEC, &os(v)).unwrap_err();
        assert_eq!(
            err(&["--s"]),
            "option '--s' is ambiguous; possibilities: '--status' '--strict'"
        );
        assert_eq!(err(&["--bogus"]), "unrecognized option '--bogus'");
        assert_eq!(err(&["--check=1"]), "option '--check' doesn't allow an argument");
        assert_eq!(err(&["--algorithm"]), "option '--algorithm' requires an argument");
        assert_eq!(err(&["-a"]), "option requires an argument -- 'a'");
        assert_eq!(err(&["-rx"]), "invalid option -- 'x'");
    }
}
