//! Command dispatch and what the commands share: the engine settings from the read
//! options, and the exit status.

mod algorithms;
mod audit;
mod bag;
mod bench;
pub(crate) mod check;
mod dups;
mod embedded;
mod exclude;
mod export;
pub(crate) mod hash;
mod import;
mod manual;
pub(crate) mod monitor;
mod proof;
mod remote;
mod repair;
mod report;
mod resolve;
mod rhash_out;
mod roles;
mod scrub;
mod shard;
mod status;
pub(crate) mod tree;
mod update;

use crate::cli::{CatalogCommand, Cli, Command, ReadArgs};
use fixity::catalog::StoreSpec;
use fixity::catalog::postgres::{PgSpec, is_url};
use fixity::catalog::sqlite::Catalog;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::pipeline::Config;
use fixity::read::{OpenMode, io_message};
use fixity::sources::{Source, Sources};
use fixity::storage::Devices;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Exit statuses, as coreutils uses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Everything checked out.
    Ok = 0,
    /// A mismatch, an unreadable or missing file, a bad manifest line under --strict.
    Failed = 1,
    /// Usage: the command could not be carried out as asked. (As a monitoring plugin,
    /// `status --nagios`: CRITICAL; 1 is WARNING there.)
    Usage = 2,
    /// A monitoring plugin could not judge (`status --nagios`: UNKNOWN).
    Unknown = 3,
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Status> {
    match cli.command {
        Command::Hash(a) if a.plan.is_some() => shard::part(a),
        Command::Hash(a) if a.rhash.update.is_some() => update::run(a),
        Command::Hash(a) if a.rhash.embed_crc => embedded::embed(a),
        Command::Hash(a) => hash::run(a),
        Command::Check(a) if a.check_embedded => embedded::run(a),
        Command::Check(a) if a.audit => audit::run(a),
        Command::Check(a) => check::run(a),
        Command::Algorithms(a) => algorithms::run(a),
        Command::Scan(a) => scrub::run(fixity::scrub::Mode::Scan, a.common, None, None, false),
        Command::Verify(a) if a.remote.remote.is_some() => remote::run(a.common, a.remote),
        Command::Verify(a) => {
            scrub::run(fixity::scrub::Mode::Verify, a.common, a.max_bytes, a.max_duration, a.repair)
        }
        Command::Import(a) => import::run(a),
        Command::Status(a) if a.proof => proof::status(&a),
        Command::Status(a) => status::run(a),
        Command::Export(a) => export::run(a),
        Command::Report(a) => report::run(a),
        #[cfg(feature = "serve")]
        Command::Serve(a) => crate::serve::run(a),
        Command::AuditProof(a) => proof::audit(a),
        Command::Protect(a) => repair::protect(a),
        Command::Repair(a) => repair::repair(a),
        Command::Dups(a) => dups::run(a),
        Command::Accept(a) => resolve::accept(a),
        Command::Forget(a) => resolve::forget(a),
        Command::Catalog(CatalogCommand::InitRoles(a)) => roles::init_roles(a),
        Command::Bench(b) => bench::run(b),
        Command::Bag(b) => bag::run(b),
        Command::Plan(a) => shard::plan(a),
        Command::Merge(a) => shard::merge(a),
        Command::Completions(a) => manual::completions(a),
        Command::Man(a) => manual::man(a),
    }
}

/// The catalog of the tree at `root`: `--catalog` (`catalog`) or the tree's own
/// `.fixity/catalog.db`. A PostgreSQL URL names the tree of `host` (else this machine) in
/// that database.
pub(crate) fn catalog_spec(catalog: Option<&Path>, root: &Path, host: Option<&str>) -> StoreSpec {
    match catalog.and_then(pg_url) {
        Some(url) => StoreSpec::Postgres(PgSpec::new(url, host, root)),
        None => StoreSpec::Sqlite(
            catalog.map_or_else(|| Catalog::default_path(root), Path::to_path_buf),
        ),
    }
}

/// The PostgreSQL URL `catalog` is, if it is one.
///
/// A URL holding a password is taken, with a warning (once): every user of the machine
/// sees a command line in `ps`.
pub(crate) fn pg_url(catalog: &Path) -> Option<&str> {
    let url = catalog.to_str().filter(|c| is_url(c.as_bytes()))?;
    static WARNED: std::sync::Once = std::sync::Once::new();
    if fixity::catalog::postgres::mask(url) != url {
        WARNED.call_once(|| {
            crate::ui::error(
                "warning: the password in --catalog's URL is visible to every user of this \
                 machine (ps): put it in ~/.pgpass (mode 0600) or a service file \
                 (~/.pg_service.conf, --catalog 'postgresql://?service=NAME'), as libpq reads them",
            )
        });
    }
    Some(url)
}

/// Engine settings for data under `first` and wherever the run goes, adjusted by the
/// user's options. The storage policy is decided per device (`--storage auto`: by
/// probing; `ssd`, `hdd`: as told); `first`'s device is decided now, so that the number
/// of workers fits it, the others when the run meets them. Under `--verbose` each
/// decision is said on stderr as it is made.
fn engine_config(first: Option<&Path>, args: &ReadArgs) -> Config {
    let mut devices = Devices::new(args.storage.forced());
    if args.verbose {
        devices = devices.observe(|note| crate::ui::error(&format!("storage: {note}")));
    }
    if let Some(first) = first {
        devices.survey(first);
    }
    let budget = args.buffer_memory.unwrap_or(fixity::pipeline::DEFAULT_BUFFER_BUDGET);
    let (mut cfg, note) = Config::for_devices(Arc::new(devices)).bounded(args.jobs, budget);
    if let Some(note) = note {
        eprintln!("fixity: {note}");
    }
    if args.no_mmap {
        cfg.read.mmap_threshold = None;
    }
    cfg
}

/// What a failed write of a command's output says before its cause: "cannot write FILE"
/// for an output file (`-o FILE`: a full disk names the file), "write error" for standard
/// output (as coreutils words it).
fn write_failed(output: Option<&Path>) -> String {
    match output {
        Some(p) => format!("cannot write {}", quote_env(path_bytes(p))),
        None => "write error".to_string(),
    }
}

/// Writes one finished record of a pipeline's sink to `out`; on a write error keeps it in
/// `err` and returns false, which stops the pipeline (the caller reports the error).
fn emit<W: std::io::Write + ?Sized>(
    out: &mut W,
    line: &[u8],
    err: &mut Option<std::io::Error>,
) -> bool {
    if line.is_empty() {
        return true;
    }
    match out.write_all(line) {
        Ok(()) => true,
        Err(e) => {
            *err = Some(e);
            false
        }
    }
}

/// Walks the named paths (none: nothing, not standard input) and hands each file found to
/// `keep`; says what the walk leaves out and where it cannot go on, as `hash` does.
/// Returns whether a walk error happened. For the commands that list their files before
/// acting on them (`--update`, `--embed-crc`).
fn list_files(sources: &Sources, keep: &mut dyn FnMut(Vec<u8>, PathBuf, OpenMode)) -> bool {
    let mut failed = false;
    if sources.paths.is_empty() {
        return failed;
    }
    sources.each(&mut |source| {
        match source {
            Source::File { name, path, mode } => keep(name, path, mode),
            Source::Skipped { path, why } => {
                crate::ui::error(&format!("{}: {why}", quote_env(path_bytes(&path))))
            }
            Source::Error { path, error } => {
                failed = true;
                let msg = io_message(&error);
                crate::ui::error(&format!("{}: {msg}", quote_env(path_bytes(&path))));
            }
        }
        true
    });
    failed
}

/// Refuses a tree that is not a directory, saying why: it does not exist (or cannot be
/// looked at), or it is something else.
pub(crate) fn tree_dir(root: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(root) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => anyhow::bail!("{}: not a directory", quote_env(path_bytes(root))),
        Err(e) => {
            anyhow::bail!("{}: {}", quote_env(path_bytes(root)), fixity::read::io_message(&e))
        }
    }
}
