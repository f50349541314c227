//! `fixity export`: the catalog as a checksum manifest (GNU, BSD tag, SFV, JSON lines,
//! hashdeep, cfv `.csv`, or the lines of cksum, sum, b3sum and xxhsum), in path order,
//! with paths relative to the tree so `cd TREE && fixity check FILE` works (hashdeep's
//! start with `./`, as `cd TREE && hashdeep -l -r .` writes them, for `hashdeep -a`).

use super::Status;
use crate::cli::ExportArgs;
use anyhow::{Context, bail};
use fixity::algo::{self, Algorithm};
use fixity::catalog::sqlite::Catalog;
use fixity::catalog::{OpenOptions, StoreSpec, open_store};
use fixity::formats::cksum::{self, Shape};
use fixity::formats::{self, Format, WriteOptions, b3sum, cfv_csv, hashdeep, json, sfv, xxhsum};
use fixity::output::AtomicFile;
use fixity::pathtext::{path_bytes, quote_env};
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::OsStringExt;

/// What the lines look like.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    Lines(Format),
    Json,
    Hashdeep,
    CfvCsv,
    Sum(Shape),
    B3sum,
    Xxhsum,
}

impl Layout {
    /// How a manifest of this layout is called in messages.
    fn what(self) -> &'static str {
        match self {
            Layout::Lines(Format::Sfv) => "SFV",
            Layout::Hashdeep => "a hashdeep file",
            Layout::CfvCsv => "a cfv .csv file",
            _ => "a manifest",
        }
    }
}

/// The layout `--format NAME` asks for, checked against the catalog's algorithm.
fn layout(format: &str, algo: &'static Algorithm) -> anyhow::Result<Layout> {
    let holds = |what: &str| -> anyhow::Result<Layout> {
        bail!("{what}; the catalog holds {} digests (`fixity scan -a` sets them)", algo.name)
    };
    let name = format.to_ascii_lowercase();
    let layout = match name.as_str() {
        "gnu" => Layout::Lines(Format::Gnu),
        "bsd" | "tag" => Layout::Lines(Format::Bsd),
        "sfv" if algo.name != "crc32" => return holds("SFV holds CRC32 only"),
        "sfv" => Layout::Lines(Format::Sfv),
        "json" => Layout::Json,
        "hashdeep" if hashdeep::column_name(algo).is_none() => {
            return holds(&format!("hashdeep files hold {} only", hashdeep::COLUMNS.join(", ")));
        }
        "hashdeep" => Layout::Hashdeep,
        "cfv-csv" | "csv" if algo.name != cfv_csv::algorithm().name => {
            return holds("cfv's .csv files hold CRC32 only");
        }
        "cfv-csv" | "csv" => Layout::CfvCsv,
        "cksum" | "sum" | "sysv" => {
            let wanted = if name == "cksum" { "cksum" } else { name.as_str() };
            if algo.name != wanted {
                return holds(&format!("{name} lines hold the {wanted} checksum only"));
            }
            Layout::Sum(Shape::of(wanted).expect("a cksum shape"))
        }
        "xxhsum" if !xxhsum::supports(algo) => {
            return holds(&format!("xxhsum lines hold {}", xxhsum::ALGORITHMS.join(", ")));
        }
        "xxhsum" => Layout::Xxhsum,
        tool => {
            // md5sum, sha256sum, b2sum, b3sum, xxh128sum ...: that tool's lines.
            let wanted = tool
                .strip_suffix("sum")
                .and_then(|a| algo::lookup(if a == "b2" { "blake2b" } else { a }))
                .with_context(|| {
                    format!(
                        "unknown format {format:?} (gnu, bsd, sfv, json, hashdeep, cfv-csv, \
                         cksum, sum, sysv, xxhsum, or a tool such as sha256sum or b3sum)"
                    )
                })?;
            if wanted.name != algo.name {
                bail!(
                    "the catalog holds {} digests, not {}: use --format gnu or bsd",
                    algo.name,
                    wanted.name
                );
            }
            match tool {
                "b3sum" => Layout::B3sum,
                _ if xxhsum::supports(algo) => Layout::Xxhsum,
                _ => Layout::Lines(Format::Gnu),
            }
        }
    };
    Ok(layout)
}

pub fn run(args: ExportArgs) -> anyhow::Result<Status> {
    let path = args.catalog.clone().unwrap_or_else(|| Catalog::default_path(&args.path));
    let how = OpenOptions { read_only: true, ..OpenOptions::default() };
    let store = open_store(&StoreSpec::Sqlite(path), &how)?;
    let algo = store.algorithm();
    let layout = layout(&args.format, algo)?;
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
    match layout {
        Layout::Lines(Format::Sfv) => out.write_all(&sfv::header())?,
        Layout::Hashdeep => {
            // Invoked from the tree, whose paths the lines hold.
            let tree = std::path::absolute(&args.path)
                .with_context(|| format!("cannot find {}", quote_env(path_bytes(&args.path))))?;
            let argv: Vec<Vec<u8>> = std::env::args_os().map(OsStringExt::into_vec).collect();
            // SAFETY: geteuid has no preconditions and cannot fail.
            let root = unsafe { libc::geteuid() } == 0;
            let mut head = Vec::new();
            hashdeep::write_header(&[algo], path_bytes(&tree), &argv.join(&b' '), root, &mut head);
            out.write_all(&head)?;
        }
        _ => {}
    }
    let one_line = matches!(layout, Layout::Lines(Format::Sfv) | Layout::Hashdeep | Layout::CfvCsv);
    let mut after: Option<Vec<u8>> = None;
    let mut line = Vec::new();
    let mut skipped_newline = 0u64;
    loop {
        let page = store.records_page(after.as_deref(), 4096)?;
        let Some(last) = page.last() else { break };
        after = Some(last.path.clone());
        for row in page.iter().filter(|r| r.missing_since.is_none()) {
            line.clear();
            let digest = row.digest;
            let (name, size) = (&row.path, row.size.unwrap_or(0));
            match layout {
                _ if one_line && name.contains(&b'\n') => {
                    skipped_newline += 1;
                    crate::ui::error(&format!(
                        "{}: {} cannot hold a name with a newline",
                        quote_env(name),
                        layout.what()
                    ));
                }
                Layout::Lines(f) => formats::write_record(
                    f,
                    WriteOptions::default(),
                    algo,
                    &digest,
                    name,
                    &mut line,
                ),
                Layout::Json => json::write_file(name, size, &[(algo, digest)], &mut line),
                Layout::Hashdeep => {
                    // As `cd TREE && hashdeep -l -r .` names them, so that audit matches.
                    let dotted = [&b"./"[..], name].concat();
                    hashdeep::write(size, &[digest], &dotted, &mut line)
                }
                Layout::CfvCsv => cfv_csv::write(name, size, &digest, &mut line),
                Layout::Sum(shape) => {
                    cksum::write(shape, &digest, size, Some(name), b'\n', &mut line)
                }
                Layout::B3sum => b3sum::write(digest.as_bytes(), Some(name), &mut line),
                Layout::Xxhsum => xxhsum::write(algo, &digest, name, false, false, &mut line),
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
