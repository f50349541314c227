//! GNU `getopt_long` as the drop-ins need it: bundled short options (`-bc`, `-l256`),
//! long options and their unambiguous prefixes (`--stat`), `--opt=value` and
//! `--opt value`, options anywhere among the operands (permutation), `--` ends the
//! options. Errors carry glibc's message text; the caller prints it after the program
//! name, followed by its "Try ..." line.

use fixity::sys::OsStrExt;
use std::ffi::{OsStr, OsString};

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

/// One thing on the command line, in the order given.
#[derive(Debug)]
pub enum Item {
    /// An option (its key) and its argument, if it takes one.
    Opt(&'static str, Option<OsString>),
    /// An operand (a file).
    Operand(OsString),
}

/// The command line `args` read against `spec`, one [`Item`] at a time, as getopt reads
/// it: a caller that acts on each option as it comes (a bad value ends the program there)
/// sees the errors in the order the real tool gives them.
pub struct Args<'a> {
    spec: &'a [Opt],
    it: std::slice::Iter<'a, OsString>,
    only_operands: bool,
    /// The short options still to read of the current bundle (`-bc`).
    bundle: &'a [u8],
}

/// Reads `args` (without argv[0]) against `spec`.
pub fn args<'a>(spec: &'a [Opt], args: &'a [OsString]) -> Args<'a> {
    Args { spec, it: args.iter(), only_operands: false, bundle: &[] }
}

impl Iterator for Args<'_> {
    type Item = Result<Item, String>;

    fn next(&mut self) -> Option<Result<Item, String>> {
        if let Some((&c, tail)) = self.bundle.split_first() {
            self.bundle = tail;
            return Some(self.short(c));
        }
        loop {
            let arg = self.it.next()?;
            let bytes = arg.as_bytes();
            if self.only_operands || bytes == b"-" || !bytes.starts_with(b"-") {
                return Some(Ok(Item::Operand(arg.clone())));
            }
            if bytes == b"--" {
                self.only_operands = true;
                continue;
            }
            if let Some(long) = bytes.strip_prefix(b"--") {
                return Some(self.long(long));
            }
            self.bundle = &bytes[1..];
            return self.next();
        }
    }
}

impl Args<'_> {
    fn long(&mut self, long: &[u8]) -> Result<Item, String> {
        let (name, value) = match long.iter().position(|&b| b == b'=') {
            Some(i) => (&long[..i], Some(OsString::from(OsStr::from_bytes(&long[i + 1..])))),
            None => (long, None),
        };
        let shown = String::from_utf8_lossy(name).into_owned();
        let longs = || self.spec.iter().filter(|o| !o.long.is_empty());
        let exact = longs().find(|o| o.long.as_bytes() == name);
        let matches: Vec<&Opt> = longs().filter(|o| o.long.as_bytes().starts_with(name)).collect();
        let opt = match (exact, matches.as_slice()) {
            (Some(e), _) => e,
            (None, [one]) => *one,
            (None, []) => return Err(format!("unrecognized option '--{shown}'")),
            (None, many) => {
                let list: Vec<String> = many.iter().map(|m| format!("'--{}'", m.long)).collect();
                return Err(format!(
                    "option '--{shown}' is ambiguous; possibilities: {}",
                    list.join(" ")
                ));
            }
        };
        match (opt.arg, value) {
            (true, Some(v)) => Ok(Item::Opt(opt.key, Some(v))),
            (true, None) => match self.it.next() {
                Some(v) => Ok(Item::Opt(opt.key, Some(v.clone()))),
                None => Err(format!("option '--{}' requires an argument", opt.long)),
            },
            (false, Some(_)) => Err(format!("option '--{}' doesn't allow an argument", opt.long)),
            (false, None) => Ok(Item::Opt(opt.key, None)),
        }
    }

    fn short(&mut self, c: u8) -> Result<Item, String> {
        let Some(opt) = self.spec.iter().find(|o| o.short == Some(c)) else {
            return Err(format!("invalid option -- '{}'", c as char));
        };
        if !opt.arg {
            return Ok(Item::Opt(opt.key, None));
        }
        // The rest of the bundle is the argument (`-l256`), or else the next word.
        let value = if self.bundle.is_empty() {
            match self.it.next() {
                Some(v) => v.clone(),
                None => return Err(format!("option requires an argument -- '{}'", c as char)),
            }
        } else {
            OsString::from(OsStr::from_bytes(std::mem::take(&mut self.bundle)))
        };
        Ok(Item::Opt(opt.key, Some(value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parsed command line: options in the order given, then the operands.
    #[derive(Debug, Default)]
    struct Parsed {
        opts: Vec<(&'static str, Option<OsString>)>,
        operands: Vec<OsString>,
    }

    /// Parses the whole of `args` (without argv[0]) against `spec`; the first error ends it.
    fn parse(spec: &[Opt], args_: &[OsString]) -> Result<Parsed, String> {
        let mut p = Parsed::default();
        for item in args(spec, args_) {
            match item? {
                Item::Opt(key, value) => p.opts.push((key, value)),
                Item::Operand(o) => p.operands.push(o),
            }
        }
        Ok(p)
    }

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
