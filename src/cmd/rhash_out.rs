//! `fixity hash` in rhash's formats (`--format rhash|rhash-simple|rhash-sfv|rhash-bsd|
//! magnet|ed2k-link`, `--printf`, `--template`): their options, checked against the rest
//! of the command line, and the writer they make.

use crate::cli::HashArgs;
use anyhow::{Context, bail};
use fixity::algo::{self, Algorithm};
use fixity::formats::rhash::{Case, Enc, Style};
use fixity::formats::template::Template;
use fixity::formats::{ManifestWriter, OutputFormat, WriteOptions};
use fixity::pathtext::{path_bytes, quote_env};
use fixity::sys::OsStrExt;

/// The digest encoding of fixity's own line formats: `--base64` gives `cksum --base64`'s
/// lines (BSD, or GNU with `--untagged`), the digest in padded base64.
pub fn line_encoding(args: &HashArgs) -> Option<fixity::digest::Encoding> {
    args.rhash.base64.then_some(fixity::digest::Encoding::Base64)
}

/// The writer the arguments ask for, or `None` for fixity's own formats. `opts` carries
/// what the caller has set already (standard input, SFV's header).
pub fn writer(
    args: &HashArgs,
    opts: &WriteOptions,
) -> anyhow::Result<Option<Box<dyn ManifestWriter>>> {
    let r = &args.rhash;
    let layout = args.format.filter(|f| f.is_rhash());
    let template = match (&r.printf, &r.template) {
        (Some(t), _) => Some(t.as_bytes().to_vec()),
        (None, Some(file)) => Some(
            std::fs::read(file)
                .with_context(|| format!("cannot read template {}", quote_env(path_bytes(file))))?,
        ),
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
        // --base64 on GNU and BSD lines is `cksum --base64`'s: `line_encoding` above.
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
    let opts = WriteOptions { rhash: Style { enc, case }, ..opts.clone() };
    let writer = match template {
        Some(text) => {
            if enc != Enc::Default || case != Case::Default {
                bail!(
                    "incompatible formatting options: --printf/--template set the encoding and case of each digest themselves"
                );
            }
            Template::parse(&text).map_err(anyhow::Error::msg)?.writer(asked, &opts)
        }
        None => {
            let format: OutputFormat = layout.expect("checked above");
            let algos = format.algorithms(Some(asked));
            format.writer(algos, opts).map_err(|r| anyhow::anyhow!(r.hash_message()))?
        }
    };
    Ok(Some(writer))
}
