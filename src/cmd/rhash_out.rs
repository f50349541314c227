//! `fixity hash` in rhash's formats (`--format rhash|rhash-simple|rhash-sfv|rhash-bsd|
//! magnet|ed2k-link`, `--printf`, `--template`): which algorithms they need, and the
//! printer state (rhash's SFV header lists every file before the first line, so that
//! layout is collected and written at the end).

use crate::cli::{HashArgs, HashFormat};
use anyhow::{Context, bail};
use fixity::algo::{self, Algorithm};
use fixity::digest::Digest;
use fixity::formats::rhash::{self, Case, Enc, FileInfo, Layout, Style};
use fixity::formats::template::Template;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::pipeline::Hashed;
use std::os::unix::ffi::OsStrExt;

enum Kind {
    Lines(Layout),
    Printf(Template),
}

/// Writes rhash-format output for one run.
pub struct RhashOut {
    kind: Kind,
    style: Style,
    /// The algorithms to compute, in rhash's order.
    pub algos: Vec<&'static Algorithm>,
    /// SFV: (path, size, mtime) for the header, and the lines after it.
    header: Option<Vec<rhash::HeaderEntry>>,
    body: Vec<u8>,
}

fn find(name: &str) -> anyhow::Result<&'static Algorithm> {
    rhash::algorithm(name)
        .with_context(|| format!("this format needs {name}, which fixity does not compute yet"))
}

/// The digest encoding of fixity's own line formats: `--base64` gives `cksum --base64`'s
/// lines (BSD, or GNU with `--untagged`), the digest in padded base64.
pub fn line_encoding(args: &HashArgs) -> Option<fixity::digest::Encoding> {
    args.rhash.base64.then_some(fixity::digest::Encoding::Base64)
}

impl RhashOut {
    /// The writer the arguments ask for, or `None` for fixity's own formats.
    pub fn from_args(args: &HashArgs) -> anyhow::Result<Option<RhashOut>> {
        let r = &args.rhash;
        let layout = match args.format {
            Some(HashFormat::Rhash) => Some(Layout::Default),
            Some(HashFormat::RhashSimple) => Some(Layout::Simple),
            Some(HashFormat::RhashSfv) => Some(Layout::Sfv),
            Some(HashFormat::RhashBsd) => Some(Layout::Bsd),
            Some(HashFormat::Magnet) => Some(Layout::Magnet),
            Some(HashFormat::Ed2kLink) => Some(Layout::Ed2kLink),
            _ => None,
        };
        let template = match (&r.printf, &r.template) {
            (Some(t), _) => Some(t.as_bytes().to_vec()),
            (None, Some(file)) => Some(std::fs::read(file).with_context(|| {
                format!("cannot read template {}", quote_env(path_bytes(file)))
            })?),
            (None, None) => None,
        };
        let enc = if r.hex {
            Enc::Hex
        } else if r.base32 {
            Enc::Base32
        } else if r.base64 {
            Enc::Base64
        } else {
            Enc::Default
        };
        let case = if r.uppercase {
            Case::Upper
        } else if r.lowercase {
            Case::Lower
        } else {
            Case::Default
        };
        if layout.is_none() && template.is_none() {
            // --base64 on GNU and BSD lines is `cksum --base64`'s: `line_encoding` below.
            if matches!(enc, Enc::Hex | Enc::Base32) || case != Case::Default {
                bail!(
                    "--hex, --base32, --uppercase and --lowercase go with rhash's formats (--format rhash...) only"
                );
            }
            return Ok(None);
        }
        if args.tag || args.sfv || args.json || args.binary || args.zero {
            bail!("rhash formats do not combine with --tag, --sfv, --json, -b or -z");
        }
        let asked: Vec<&'static Algorithm> = match &args.algorithm {
            Some(list) => algo::parse_list(list).map_err(anyhow::Error::msg)?,
            None => Vec::new(),
        };
        let (kind, mut algos) = match template {
            Some(text) => {
                if enc != Enc::Default || case != Case::Default {
                    bail!(
                        "incompatible formatting options: --printf/--template set the encoding and case of each digest themselves"
                    );
                }
                let t = Template::parse(&text).map_err(anyhow::Error::msg)?;
                let mut algos = t.algorithms();
                for a in asked {
                    if !algos.contains(&a) {
                        algos.push(a);
                    }
                }
                (Kind::Printf(t), algos)
            }
            None => {
                let layout = layout.expect("checked above");
                let algos = match layout {
                    Layout::Ed2kLink => vec![find("ed2k")?, find("aich")?],
                    _ if !asked.is_empty() => asked,
                    _ => layout
                        .default_algorithms()
                        .iter()
                        .map(|n| find(n))
                        .collect::<anyhow::Result<_>>()?,
                };
                (Kind::Lines(layout.resolve(&algos)), algos)
            }
        };
        rhash::sort_rhash_order(&mut algos);
        let header = match kind {
            Kind::Lines(Layout::Sfv) if !r.no_header => Some(Vec::new()),
            _ => None,
        };
        Ok(Some(RhashOut { kind, style: Style { enc, case }, algos, header, body: Vec::new() }))
    }

    /// Whether there is anything to hash at all (a printf template without digests still
    /// reads each file, for its size).
    pub fn algorithms(&self) -> Vec<&'static Algorithm> {
        if self.algos.is_empty() {
            vec![algo::lookup("crc32").expect("registered")]
        } else {
            self.algos.clone()
        }
    }

    /// Appends what is printed for one file to `line` (or keeps it for the end). `Err` with
    /// a message when the name cannot be written.
    pub fn file(&mut self, name: &[u8], h: &Hashed, line: &mut Vec<u8>) -> Result<(), String> {
        let digests: Vec<(&'static Algorithm, Digest)> = self
            .algorithms()
            .into_iter()
            .zip(h.digests.iter().copied())
            .filter(|(a, _)| self.algos.contains(a))
            .collect();
        let mtime = h.mtime_ns.map(|ns| ns.div_euclid(1_000_000_000) as i64);
        // Standard input is "(stdin)" to rhash, and its SFV header leaves it out.
        let stdin = name == b"-";
        let name: &[u8] = if stdin { b"(stdin)" } else { name };
        let file = FileInfo { path: name, size: h.size, mtime, digests: &digests };
        match &self.kind {
            Kind::Printf(t) => t.render(&file, line),
            Kind::Lines(layout) => {
                if layout.needs_one_line_names() && name.contains(&b'\n') {
                    return Err(format!(
                        "{}: rhash's line formats cannot hold a name with a newline",
                        quote_env(name)
                    ));
                }
                rhash::write(*layout, self.style, &file, line);
                if let Some(h) = self.header.as_mut() {
                    if !stdin {
                        h.push((name.to_vec(), file.size, mtime));
                    }
                    self.body.append(line);
                }
            }
        }
        Ok(())
    }

    /// What is left to write at the end: the SFV header and the lines kept for it.
    pub fn finish(self) -> Vec<u8> {
        match self.header {
            Some(files) => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs() as i64);
                let mut out = rhash::sfv_header(now, &files);
                out.extend_from_slice(&self.body);
                out
            }
            None => self.body,
        }
    }
}
