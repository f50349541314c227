//! `fixity import`: pick the source and the catalog, run the import job, and render its
//! events: refused entries always (they are findings), the rest with `-v`, then a
//! summary and the exit status.

use super::Status;
use crate::cli::{ImportArgs, ImportFrom, XattrName};
use crate::ui;
use anyhow::{Context, bail};
use fixity::algo::{self, Algorithm};
use fixity::catalog::sqlite::Catalog;
use fixity::catalog::{CatalogError, OpenOptions, StoreError, StoreSpec, open_store};
use fixity::formats::json;
use fixity::import::{
    self, Entry, Event, Importer, Refusal, Report, bitrot::Bitrot, chkbit::Chkbit,
    manifest::Manifests, scorch::Scorch, streams::Streams, xattrs::Names, xattrs::Xattrs,
};
use fixity::pathtext::{path_bytes, quote_env};
use fixity::walk::Exclude;
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn run(args: ImportArgs) -> anyhow::Result<Status> {
    let root = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    super::tree_dir(&root)?;
    let asked = match &args.algorithm {
        Some(name) => {
            Some(algo::lookup(name).with_context(|| format!("unknown algorithm {name:?}"))?)
        }
        None => None,
    };
    let catalog_path = args.catalog.clone().unwrap_or_else(|| Catalog::default_path(&root));
    let spec = super::catalog_spec(Some(&catalog_path), &root, None);
    let mut patterns = args.exclude.clone();
    let file = matches!(spec, StoreSpec::Sqlite(_)).then_some(catalog_path.as_path());
    patterns.extend(super::exclude::tree_patterns(&root, file)?);
    let exclude = Exclude::new(&patterns).context("bad exclude pattern")?;
    let mut source = importer(&args, &root, asked, &exclude)?;

    // The catalog's algorithm: the one it has; for a new catalog, -a or the one most of
    // the source's digests have.
    let survey = import::survey(source.as_mut()).map_err(anyhow::Error::msg)?;
    let how = OpenOptions { wait: args.wait, ..OpenOptions::default() };
    let mut store = match open_store(&spec, &how) {
        Err(e) if not_found(&e) => {
            let algorithm =
                asked.or(survey.main_algorithm()).unwrap_or_else(algo::default_algorithm);
            open_store(&spec, &OpenOptions { create: true, algorithm: Some(algorithm), ..how })?
        }
        other => other?,
    };
    let held = store.algorithm();
    if asked.is_some_and(|a| a.name != held.name) {
        bail!(
            "catalog {} holds {} digests, not {}: drop -a, or import into a new catalog \
             (--catalog NEW.db)",
            shown(&spec),
            held.name,
            asked.map_or("", |a| a.name)
        );
    }
    if !survey.algorithms.is_empty() && !survey.has(held) {
        let have: Vec<&str> = survey.algorithms.iter().map(|(a, _)| a.name).collect();
        bail!(
            "catalog {} holds {} digests; the {} source has {} digests. One catalog holds one \
             algorithm, and another algorithm's digest cannot be had without reading the file: \
             import into a new catalog (--catalog NEW.db, which takes {}), or hash the tree with \
             `fixity scan`",
            shown(&spec),
            held.name,
            source.name(),
            have.join(", "),
            have[0]
        );
    }

    let (verbose, quiet, as_json) = (args.verbose, args.quiet, args.json);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut buf = Vec::new();
    let name = source.name();
    let report = import::run(&root, store.as_mut(), source.as_mut(), &exclude, &mut |ev| {
        render(&ev, verbose, as_json, &mut buf, held, name);
    });
    let mut report = match report {
        Ok(r) => r,
        Err(e) => {
            out.write_all(&buf)?;
            out.flush()?;
            return Err(e.into());
        }
    };
    out.write_all(&buf)?;
    buf.clear();
    let walked = import::uncovered(
        &root,
        store.as_ref(),
        &exclude,
        &mut |ev| {
            render(&ev, verbose, as_json, &mut buf, held, name);
            if buf.len() > 64 * 1024 {
                let _ = out.write_all(&buf);
                buf.clear();
            }
        },
        &mut |path, why| ui::error(&format!("{}: {why}", quote_env(path_bytes(path)))),
    );
    report.uncovered = walked?;
    let failed = report.refused > 0;
    if as_json {
        let summary = serde_json::json!({
            "summary": &report,
            "root": String::from_utf8_lossy(path_bytes(&root)),
            "catalog": shown(&spec),
            "algorithm": held.name,
        });
        serde_json::to_writer(&mut buf, &summary)?;
        buf.push(b'\n');
    } else if !quiet || failed {
        summary_text(&root, &report, held, &mut buf);
    }
    out.write_all(&buf).context("write error")?;
    out.flush().context("write error")?;
    Ok(if failed { Status::Failed } else { Status::Ok })
}

/// The source `args` name (or the one the tree holds).
fn importer(
    args: &ImportArgs,
    root: &Path,
    asked: Option<&'static Algorithm>,
    exclude: &Exclude,
) -> anyhow::Result<Box<dyn Importer>> {
    let from = match args.from {
        Some(f) => f,
        None if Chkbit::found_at(root) => ImportFrom::Chkbit,
        None if root.join(import::bitrot::DB).is_file() => ImportFrom::Bitrot,
        None => bail!(
            "{} holds no chkbit index or bitrot database: say where the digests are \
             (--from xattr|streams|chkbit|bitrot|scorch|manifest)",
            quote_env(path_bytes(root))
        ),
    };
    let one = |what: &str| -> anyhow::Result<Option<PathBuf>> {
        match args.source.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one.clone())),
            _ => bail!("--from {what} reads one --source"),
        }
    };
    Ok(match from {
        ImportFrom::Xattr => {
            if !args.source.is_empty() {
                bail!("--from xattr reads the files' attributes: drop --source");
            }
            let names = match args.xattr_names {
                XattrName::Checksum => Names::Checksum,
                XattrName::Shatag => Names::Shatag,
            };
            Box::new(Xattrs::new(root, exclude.clone(), names, asked).map_err(anyhow::Error::msg)?)
        }
        ImportFrom::Streams => {
            if !args.source.is_empty() {
                bail!("--from streams reads the files' streams: drop --source");
            }
            Box::new(Streams::new(root, exclude.clone(), asked).map_err(anyhow::Error::msg)?)
        }
        ImportFrom::Chkbit => {
            if !args.source.is_empty() {
                bail!("--from chkbit reads the indexes in the tree: drop --source");
            }
            Box::new(Chkbit::new(root, exclude.clone()))
        }
        ImportFrom::Bitrot => {
            Box::new(Bitrot::new(root, one("bitrot")?.as_deref(), exclude.clone()))
        }
        ImportFrom::Scorch => match one("scorch")? {
            Some(db) => Box::new(Scorch::new(&db)),
            None => bail!("--from scorch needs its database: --source DB (scorch -d DB)"),
        },
        ImportFrom::Manifest if args.source.is_empty() => {
            bail!("--from manifest needs the manifests: --source FILE (repeat for several)")
        }
        ImportFrom::Manifest => Box::new(Manifests::new(args.source.clone())),
    })
}

/// Whether opening failed only because there is no catalog (or no such tree in it) yet.
fn not_found(e: &StoreError) -> bool {
    matches!(e, StoreError::Catalog(CatalogError::NotFound(_)))
        || matches!(e, StoreError::Catalog(CatalogError::Postgres(p)) if p.is_not_found())
}

/// The catalog as messages name it (a URL with its password masked).
fn shown(spec: &StoreSpec) -> String {
    match spec {
        StoreSpec::Postgres(t) => fixity::catalog::postgres::mask(&t.url),
        StoreSpec::Sqlite(p) | StoreSpec::Xattr(p) => quote_env(path_bytes(p)),
    }
}

/// What a refusal says beside the path.
fn detail(entry: &Entry, r: &Refusal, held: &Algorithm, source: &str) -> String {
    let what = match r {
        Refusal::Escapes(why) => format!("outside the tree: {why}"),
        Refusal::Missing => "no such file".into(),
        Refusal::NotAFile(kind) => format!("a {kind}, not a file"),
        Refusal::Size { recorded, now } => {
            format!("{source} recorded {recorded} bytes, it has {now}")
        }
        Refusal::Changed => format!("modified since {source} took its digest"),
        Refusal::Algorithm(have) if have.is_empty() => "no digest".into(),
        Refusal::Algorithm(have) => format!("a {have} digest; the catalog holds {}", held.name),
        Refusal::Malformed(why) => why.clone(),
        Refusal::Unreadable(why) => why.clone(),
        Refusal::Duplicate => "listed again; the first entry counts".into(),
    };
    if entry.at.is_empty() { what } else { format!("{what}; {}", entry.at) }
}

fn render(
    ev: &Event<'_>,
    verbose: bool,
    as_json: bool,
    out: &mut Vec<u8>,
    held: &Algorithm,
    source: &str,
) {
    let (label, path, note) = match ev {
        Event::Refused(entry, path, r) => (r.key(), *path, Some(detail(entry, r, held, source))),
        _ if !verbose => return,
        Event::Imported(p) => ("imported", *p, None),
        Event::Known(p) => ("known", *p, Some("already in the catalog; kept".to_string())),
        Event::Excluded(p) => ("excluded", *p, None),
        Event::Elsewhere(p) => ("elsewhere", *p, Some("another tree's".to_string())),
        Event::Uncovered(p) => ("no-digest", *p, Some("a scan will hash it".to_string())),
    };
    if as_json {
        json::write_finding(path, label, None, note.as_deref(), None, out);
        return;
    }
    let mut line = format!("{label:<11} {}", quote_env(path));
    if let Some(n) = note {
        line.push_str(&format!(" ({n})"));
    }
    line.push('\n');
    out.extend_from_slice(line.as_bytes());
}

fn summary_text(root: &Path, r: &Report, held: &Algorithm, out: &mut Vec<u8>) {
    let mut s = format!(
        "import {} from {}: {} imported ({}), {} refused, {} already in the catalog",
        quote_env(path_bytes(root)),
        r.source,
        ui::count(r.imported, "digest"),
        held.name,
        r.refused,
        r.known
    );
    if r.excluded > 0 {
        s.push_str(&format!(", {} excluded", r.excluded));
    }
    if r.elsewhere > 0 {
        s.push_str(&format!(", {} of other trees", r.elsewhere));
    }
    s.push('\n');
    if !r.refused_by.is_empty() {
        let by: Vec<String> = r.refused_by.iter().map(|(k, n)| format!("{k} {n}")).collect();
        s.push_str(&format!("refused: {}\n", by.join(", ")));
    }
    if r.uncovered > 0 {
        s.push_str(&format!(
            "{} of the tree {} no imported digest: `fixity scan` will hash {} (-v lists them)\n",
            ui::count(r.uncovered, "file"),
            if r.uncovered == 1 { "has" } else { "have" },
            if r.uncovered == 1 { "it" } else { "them" },
        ));
    }
    if r.imported > 0 {
        s.push_str(
            "imported digests are marked unverified until `fixity verify` reads their files \
             (`fixity status` counts them); a scan does not re-hash unchanged files\n",
        );
    }
    out.extend_from_slice(s.as_bytes());
}
