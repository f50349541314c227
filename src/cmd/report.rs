//! `fixity report`: a tree's state, standing findings with their history, runs over time
//! and coverage, from its catalog: one self-contained HTML page (`--html FILE`, written
//! atomically) and/or JSON on standard output (`--json`). The library gathers and
//! writes (`fixity::report`); this file opens the catalog and picks the outputs.

use super::Status;
use crate::cli::ReportArgs;
use anyhow::{Context, bail};
use fixity::catalog::postgres::mask;
use fixity::catalog::{OpenOptions, StoreSpec, open_store};
use fixity::clock::now_ms;
use fixity::output::AtomicFile;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::report::{Options, Place, gather, html, write_json};
use std::io::{BufWriter, Write};

pub fn run(args: ReportArgs) -> anyhow::Result<Status> {
    if args.html.is_none() && !args.json {
        bail!("say what to write: --html FILE (a web page) or --json (on standard output)");
    }
    // The tree the directory is in (its catalog found upward), and the subtree it is.
    let host = args.host.as_deref();
    let found = super::tree::locate(&args.path, args.catalog.as_deref(), host, args.find, false)?;
    super::tree::say(&found, false);
    let (path, catalog) = match found.found_above || found.is_subtree() {
        true => (found.root.clone(), Some(found.catalog.clone())),
        false => (args.path.clone(), args.catalog.clone()),
    };
    let spec = super::catalog_spec(catalog.as_deref(), &path, host);
    if args.host.is_some() && !matches!(spec, StoreSpec::Postgres(_)) {
        bail!("--host names a tree in a PostgreSQL catalog: pass --catalog postgresql://...");
    }
    let how = OpenOptions { read_only: true, ..OpenOptions::default() };
    let store = open_store(&spec, &how)?;
    let place = match &spec {
        StoreSpec::Postgres(t) => {
            Place { catalog: mask(&t.url), host: Some(t.host.clone()), tree: t.tree.clone() }
        }
        StoreSpec::Sqlite(p) | StoreSpec::Xattr(p) => Place {
            catalog: p.to_string_lossy().into_owned(),
            host: None,
            tree: match found.is_subtree() {
                true => path_bytes(&super::tree::dir_of(&found)).to_vec(),
                false => path_bytes(&fixity::sys::absolute(&path).unwrap_or(path.clone())).to_vec(),
            },
        },
    };
    let within = found.subtree.clone();
    let opts = Options { max_findings: args.max_findings, max_runs: args.runs, within };
    let report = gather(store.as_ref(), &place, now_ms(), opts)?;
    if let Some(path) = &args.html {
        let cannot = || format!("cannot write {}", quote_env(path_bytes(path)));
        let mut file = AtomicFile::create(path).with_context(cannot)?;
        let mut out = BufWriter::new(&mut file);
        html::write_html(&report, &mut out).with_context(cannot)?;
        out.flush().with_context(cannot)?;
        drop(out);
        file.commit().with_context(cannot)?;
    }
    if args.json {
        let mut out = Vec::new();
        write_json(&report, &mut out)?;
        std::io::stdout().lock().write_all(&out).context("write error")?;
    }
    Ok(Status::Ok)
}
