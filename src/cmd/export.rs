//! `fixity export`: the catalog as a checksum manifest (GNU, BSD tag, SFV, JSON lines,
//! hashdeep, cfv `.csv`, or the lines of cksum, sum, b3sum and xxhsum), in path order,
//! with paths relative to the tree so `cd TREE && fixity check FILE` works (hashdeep's
//! start with `./`, as `cd TREE && hashdeep -l -r .` writes them, for `hashdeep -a`);
//! or, with `--format premis`, PREMIS 3 XML (`fixity::report::premis`), which needs the
//! catalog's history rather than a manifest writer.

use super::Status;
use crate::cli::ExportArgs;
use anyhow::{Context, anyhow, bail};
use fixity::algo::{self, Algorithm};
use fixity::catalog::postgres::{is_url, mask};
use fixity::catalog::{OpenOptions, StoreSpec, open_store};
use fixity::formats::{FileEntry, Invocation, OutputFormat, WriteOptions, xxhsum};
use fixity::output::AtomicFile;
use fixity::pathtext::{path_bytes, quote_env};
use std::io::{self, BufWriter, Write};

/// The format `--format NAME` asks for, checked against the catalog's algorithm: the
/// format's writer decides what it can hold; a tool's name (`sha256sum`, `b3sum`) asks
/// for that tool's lines, of its own algorithm.
fn format(asked: &str, algo: &'static Algorithm) -> anyhow::Result<OutputFormat> {
    let name = asked.to_ascii_lowercase();
    // `b3sum` names a format and a tool: as a tool's name it asks for blake3, checked below.
    if let Some(format) = OutputFormat::named(&name).filter(|_| name != "b3sum") {
        return Ok(format);
    }
    // md5sum, sha256sum, b2sum, b3sum, xxh128sum ...: that tool's lines.
    let wanted = algo::by_tool(&name)
        .or_else(|| name.strip_suffix("sum").and_then(algo::lookup))
        .with_context(|| {
        format!(
            "unknown format {asked:?} ({}, premis, or a tool such as sha256sum or b3sum)",
            OutputFormat::names()
        )
    })?;
    if wanted.name != algo.name {
        bail!(
            "the catalog holds {} digests, not {}: use --format gnu or bsd",
            algo.name,
            wanted.name
        );
    }
    Ok(match name.as_str() {
        "b3sum" => OutputFormat::B3sum,
        _ if xxhsum::supports(algo) => OutputFormat::Xxhsum,
        _ => OutputFormat::Gnu,
    })
}

pub fn run(args: ExportArgs) -> anyhow::Result<Status> {
    let spec = super::catalog_spec(args.catalog.as_deref(), &args.path, args.host.as_deref());
    if args.host.is_some() && !matches!(spec, StoreSpec::Postgres(_)) {
        bail!("--host names a tree in a PostgreSQL catalog: pass --catalog postgresql://...");
    }
    let how = OpenOptions { read_only: true, ..OpenOptions::default() };
    let store = open_store(&spec, &how)?;
    if args.format.eq_ignore_ascii_case("premis") {
        return premis(store.as_ref(), &args);
    }
    let algo = store.algorithm();
    let format = format(&args.format, algo)?;
    // rhash's layouts choose their algorithms (ed2k links hold ED2K): the catalog's one
    // must be what the layout writes.
    let holds = format.algorithms(Some(vec![algo]));
    if holds.len() != 1 || holds[0].name != algo.name {
        let names: Vec<_> = holds.iter().map(|a| a.name).collect();
        bail!(
            "the catalog holds {} digests; {} lines hold {}: use --format gnu or bsd",
            algo.name,
            format.name(),
            names.join(", ")
        );
    }
    let mut opts = WriteOptions::default();
    if format == OutputFormat::Hashdeep {
        // Invoked from the tree, whose paths the lines hold.
        let tree = fixity::sys::absolute(&args.path)
            .with_context(|| format!("cannot find {}", quote_env(path_bytes(&args.path))))?;
        opts.invocation = Invocation::current(path_bytes(&tree));
        // The command line is written into the manifest: never a catalog's password.
        let words: Vec<Vec<u8>> = std::env::args_os()
            .map(|w| match w.to_str().filter(|w| is_url(w.as_bytes())) {
                Some(url) => mask(url).into_bytes(),
                None => w.into_encoded_bytes(),
            })
            .collect();
        opts.invocation.command = words.join(&b' ');
    }
    let mut writer =
        format.writer(vec![algo], opts).map_err(|r| anyhow!(r.catalog_message(algo)))?;
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
    let failed = || super::write_failed(args.output.as_deref());
    let mut line = Vec::new();
    writer.header(&mut line);
    out.write_all(&line).with_context(failed)?;
    let mut pages = fixity::catalog::RecordPages::after(None);
    let mut skipped_newline = 0u64;
    while let Some(page) = pages.next(&*store)? {
        for row in page.iter().filter(|r| r.missing_since.is_none()) {
            line.clear();
            let digests = [row.digest];
            // hashdeep's names as `cd TREE && hashdeep -l -r .` writes them, so that audit
            // matches.
            let dotted;
            let name = if format == OutputFormat::Hashdeep {
                dotted = [&b"./"[..], &row.path].concat();
                &dotted
            } else {
                &row.path
            };
            let mtime = Some(row.mtime_ns.div_euclid(1_000_000_000) as i64);
            let size = row.size.unwrap_or(0);
            let file = FileEntry { name, size, mtime, digests: &digests };
            if let Err(e) = writer.record(&file, &mut line) {
                skipped_newline += 1;
                crate::ui::error(&e.message(&quote_env(&row.path)));
            }
            out.write_all(&line).with_context(failed)?;
        }
    }
    line.clear();
    writer.footer(&mut line);
    out.write_all(&line).with_context(failed)?;
    out.flush().with_context(failed)?;
    drop(out);
    if let Some(f) = atomic {
        f.commit().with_context(failed)?;
    }
    Ok(if skipped_newline > 0 { Status::Failed } else { Status::Ok })
}

/// `--format premis`: PREMIS 3 XML, from the library's writer (`fixity::report::premis`),
/// to standard output or atomically to `-o FILE`.
fn premis(store: &dyn fixity::catalog::Store, args: &ExportArgs) -> anyhow::Result<Status> {
    use fixity::report::premis::{PremisError, write_premis};
    let version = env!("CARGO_PKG_VERSION");
    let fail = |e: PremisError| match e {
        PremisError::Store(e) => anyhow::Error::from(e),
        PremisError::Write(e) => {
            anyhow::Error::new(e).context(super::write_failed(args.output.as_deref()))
        }
    };
    match &args.output {
        Some(p) => {
            let cannot = || format!("cannot write {}", quote_env(path_bytes(p)));
            let mut file = AtomicFile::create(p).with_context(cannot)?;
            let mut out = BufWriter::new(&mut file);
            write_premis(store, version, &mut out).map_err(fail)?;
            out.flush().with_context(cannot)?;
            drop(out);
            file.commit().with_context(cannot)?;
        }
        None => {
            let stdout = io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            write_premis(store, version, &mut out).map_err(fail)?;
            out.flush().context("write error")?;
        }
    }
    Ok(Status::Ok)
}
