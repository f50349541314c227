//! `fixity export`: the catalog as a checksum manifest (GNU, BSD tag, SFV or JSON lines),
//! in path order, with paths relative to the tree so `cd TREE && fixity check FILE` works.

use super::Status;
use crate::cli::ExportArgs;
use anyhow::{Context, bail};
use fixity::algo;
use fixity::catalog::sqlite::Catalog;
use fixity::digest::Digest;
use fixity::formats::{self, Format, WriteOptions, json, sfv};
use fixity::output::AtomicFile;
use fixity::pathtext::{path_bytes, quote_env};
use std::io::{self, BufWriter, Write};

pub fn run(args: ExportArgs) -> anyhow::Result<Status> {
    let path = args.catalog.clone().unwrap_or_else(|| Catalog::default_path(&args.path));
    let cat = Catalog::open(&path, false, None)?;
    let algo = cat.algorithm();
    let name = args.format.to_ascii_lowercase();
    let format = match name.as_str() {
        "gnu" | "sum" => Some(Format::Gnu),
        "bsd" | "tag" => Some(Format::Bsd),
        "sfv" => Some(Format::Sfv),
        "json" => None,
        tool => {
            // md5sum, sha256sum, b2sum, b3sum, xxh128sum ...: GNU lines of that algorithm.
            let wanted = tool
                .strip_suffix("sum")
                .and_then(|a| algo::lookup(if a == "b2" { "blake2b" } else { a }))
                .with_context(|| {
                    format!(
                        "unknown format {:?} (gnu, bsd, sfv, json, or a tool such as sha256sum)",
                        args.format
                    )
                })?;
            if wanted.name != algo.name {
                bail!(
                    "the catalog holds {} digests, not {}: use --format gnu or bsd",
                    algo.name,
                    wanted.name
                );
            }
            Some(Format::Gnu)
        }
    };
    if format == Some(Format::Sfv) && algo.name != "crc32" {
        bail!("SFV holds CRC32 only; the catalog holds {} digests", algo.name);
    }
    let mut atomic = match &args.output {
        Some(p) => Some(
            AtomicFile::create(p)
                .with_context(|| format!("cannot write {}", quote_env(path_bytes(p))))?,
        ),
        None => None,
    };
    let stdout = io::stdout();
    let mut out: Box<dyn Write> = match atomic.as_mut() {
        Some(f) => Box::new(BufWriter::new(f)),
        None => Box::new(BufWriter::new(stdout.lock())),
    };
    if format == Some(Format::Sfv) {
        out.write_all(&sfv::header())?;
    }
    let reader = cat.reader()?;
    let mut after: Option<Vec<u8>> = None;
    let mut line = Vec::new();
    let mut skipped_newline = 0u64;
    loop {
        let page = reader.by_path(after.as_deref(), 4096)?;
        let Some(last) = page.last() else { break };
        after = Some(last.path.clone());
        for row in page.iter().filter(|r| r.missing_since.is_none()) {
            line.clear();
            let digest = Digest::new(&row.digest);
            match format {
                Some(Format::Sfv) if row.path.contains(&b'\n') => {
                    skipped_newline += 1;
                    crate::ui::error(&format!(
                        "{}: SFV cannot hold a name with a newline",
                        quote_env(&row.path)
                    ));
                }
                Some(f) => formats::write_record(
                    f,
                    WriteOptions::default(),
                    algo,
                    &digest,
                    &row.path,
                    &mut line,
                ),
                None => json::write_file(&row.path, row.stamp.size, &[(algo, digest)], &mut line),
            }
            out.write_all(&line).context("write error")?;
        }
    }
    out.flush().context("write error")?;
    drop(out);
    if let (Some(f), Some(p)) = (atomic, &args.output) {
        f.commit().with_context(|| format!("cannot write {}", quote_env(path_bytes(p))))?;
    }
    Ok(if skipped_newline > 0 { Status::Failed } else { Status::Ok })
}
