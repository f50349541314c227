//! `fixity dups`: groups of files with the same content, from the tree's catalog
//! (`fixity::dups::from_catalog`, nothing read) or by reading the tree (`--read`,
//! `fixity::dups::read_tree`). This file renders the job's events: each group on stdout
//! as fdupes and jdupes print them (its names one a line, a blank line after it), under
//! a line that says the size, the count and the waste; or one JSON object per group
//! (`--json`). Files left out and errors go to stderr as they come; the summary and its
//! notes after the groups (not with `-q`).

use super::Status;
use crate::cli::DupsArgs;
use crate::ui;
use anyhow::{Context, bail};
use fixity::catalog::{OpenOptions, StoreSpec, open_store};
use fixity::digest::hex_encode;
use fixity::dups::{self, Event, Left, Options, Summary};
use fixity::formats::json::path_fields;
use fixity::pathtext::{escape_into, path_bytes, quote_env};
use fixity::units::human_bytes;
use fixity::walk::Exclude;
use serde_json::{Map, Value};
use std::io::{BufWriter, Write};

pub fn run(args: DupsArgs) -> anyhow::Result<Status> {
    super::tree_dir(&args.path)?;
    let mut patterns = super::scrub::ignore_file_patterns(&args.path)?;
    patterns.extend(args.exclude.iter().cloned());
    let exclude = Exclude::new(&patterns).context("bad exclude pattern")?;
    let mut opts = Options {
        min_size: args.min_size,
        exclude,
        temp_dir: args.temp_dir.clone().unwrap_or_else(std::env::temp_dir),
        ..Options::default()
    };
    // From the catalog: the tree the directory is in (its catalog found upward), and
    // the subtree it is, whose files' duplicates among themselves are grouped.
    let mut root = args.path.clone();
    let store = if args.read_tree {
        None
    } else {
        let (host, catalog) = (args.host.as_deref(), args.catalog.as_deref());
        let found = match super::tree::locate(&args.path, catalog, host, args.find, false) {
            Ok(f) => f,
            Err(e) => bail!("{e} (`fixity dups --read` reads the tree instead)"),
        };
        super::tree::say(&found, args.quiet);
        let mut catalog = args.catalog.clone();
        if found.found_above || found.is_subtree() {
            (root, catalog, opts.within) = (found.root, Some(found.catalog), found.subtree);
        }
        let spec = super::catalog_spec(catalog.as_deref(), &root, host);
        if args.host.is_some() && !matches!(spec, StoreSpec::Postgres(_)) {
            bail!("--host names a tree in a PostgreSQL catalog: pass --catalog postgresql://...");
        }
        if let StoreSpec::Sqlite(file) = &spec
            && !file.exists()
        {
            bail!(
                "{}: no catalog (run `fixity scan` on the tree first, or `fixity dups --read` \
                 to read it)",
                quote_env(path_bytes(file))
            );
        }
        let how = OpenOptions { read_only: true, ..OpenOptions::default() };
        Some(open_store(&spec, &how)?)
    };
    let mut cfg = super::engine_config(Some(&args.path), &args.io);
    let progress = ui::Progress::new(args.io.progress, !args.io.no_progress);
    cfg.read.progress = progress.counter();
    let stdout = std::io::stdout();
    let mut r = Renderer {
        out: BufWriter::new(stdout.lock()),
        json: args.json,
        verbose: args.io.verbose,
        bar: progress.handle(),
        failed: None,
        first_name: Vec::new(),
        files_open: false,
        links_open: false,
        first_file: true,
    };
    let summary = match &store {
        None => dups::read_tree(&args.path, &opts, &cfg, &mut |e| r.event(e)),
        Some(store) => dups::from_catalog(store.as_ref(), &root, &opts, &cfg, &mut |e| r.event(e)),
    };
    progress.finish();
    let summary = summary?;
    if args.json {
        let mut line = serde_json::to_vec(&serde_json::json!({
            "root": String::from_utf8_lossy(path_bytes(&args.path)),
            "summary": &summary,
        }))?;
        line.push(b'\n');
        r.write(&line);
    }
    if let Some(e) = r.failed.take() {
        return Err(e).context("write error");
    }
    r.out.flush().context("write error")?;
    if !args.quiet && !args.json {
        notes(&summary);
    }
    Ok(if summary.errors > 0 { Status::Failed } else { Status::Ok })
}

/// Turns the job's events into text or JSON lines.
struct Renderer<W: Write> {
    out: W,
    json: bool,
    verbose: bool,
    bar: Option<indicatif::ProgressBar>,
    /// The first write error on stdout; nothing more is written after it.
    failed: Option<std::io::Error>,
    /// The current file's first name (the one its links refer to), escaped for text.
    first_name: Vec<u8>,
    /// JSON: a file's object, its links' array, are open; the next file is the first.
    files_open: bool,
    links_open: bool,
    first_file: bool,
}

impl<W: Write> Renderer<W> {
    fn write(&mut self, bytes: &[u8]) {
        if self.failed.is_none()
            && let Err(e) = self.out.write_all(bytes)
        {
            self.failed = Some(e);
        }
    }

    fn event(&mut self, e: Event<'_>) {
        match e {
            Event::Error { path, message } => {
                ui::error(&format!("{}: {message}", quote_env(path)));
                if self.json {
                    let mut obj = path_fields(path);
                    obj.insert("error".into(), Value::from(message));
                    self.object(obj);
                }
            }
            Event::Left { path, why } => {
                let name = match why {
                    Left::Changed => "changed",
                    Left::Gone => "gone",
                    Left::Finding(class) => class.name(),
                };
                if self.verbose {
                    let why = match why {
                        Left::Changed => "changed since the last scan".to_string(),
                        Left::Gone => "gone since the last scan".to_string(),
                        Left::Finding(class) => format!("{} (a standing finding)", class.name()),
                    };
                    ui::error(&format!("{}: left out: {why}", quote_env(path)));
                }
                if self.json {
                    let mut obj = path_fields(path);
                    obj.insert("left_out".into(), Value::from(name));
                    self.object(obj);
                }
            }
            Event::Reading { files, bytes } => {
                if let Some(bar) = &self.bar {
                    bar.set_length(bytes);
                }
                if self.verbose && files > 0 {
                    ui::error(&format!(
                        "reading {} ({}) whole: their size and ends match another file's",
                        ui::count(files, "file"),
                        human_bytes(bytes)
                    ));
                }
            }
            Event::Group(g) => {
                if self.json {
                    let mut obj = Map::new();
                    obj.insert("size".into(), Value::from(g.size));
                    obj.insert("count".into(), Value::from(g.files));
                    obj.insert("links".into(), Value::from(g.links));
                    obj.insert("wasted".into(), Value::from(g.wasted()));
                    obj.insert("algorithm".into(), Value::from(g.algorithm));
                    obj.insert("digest".into(), Value::from(hex_encode(&g.digest, false)));
                    let mut text = serde_json::to_vec(&Value::Object(obj)).expect("in memory");
                    text.pop();
                    text.extend_from_slice(b",\"files\":[");
                    self.write(&text);
                    self.first_file = true;
                } else {
                    let links = match g.links {
                        0 => String::new(),
                        n => format!(" ({} more, not counted)", ui::count(n, "link")),
                    };
                    let line = format!(
                        "{} of {} bytes ({}) each, {} wasted{links}\n",
                        ui::count(g.files, "file"),
                        g.size,
                        human_bytes(g.size),
                        human_bytes(g.wasted()),
                    );
                    self.write(line.as_bytes());
                }
            }
            Event::Name { path, link } => {
                if self.json {
                    self.json_name(path, link);
                    return;
                }
                let mut line = Vec::with_capacity(path.len() + 1);
                text_name(path, &mut line);
                if link {
                    line.extend_from_slice(b" (a link to ");
                    line.extend_from_slice(&self.first_name);
                    line.extend_from_slice(b", not counted)");
                } else {
                    self.first_name.clear();
                    text_name(path, &mut self.first_name);
                }
                line.push(b'\n');
                self.write(&line);
            }
            Event::GroupEnd => {
                if self.json {
                    self.close_file();
                    self.write(b"]}\n");
                } else {
                    self.write(b"\n");
                }
            }
        }
    }

    /// One JSON object on a line of its own.
    fn object(&mut self, obj: Map<String, Value>) {
        let mut line = serde_json::to_vec(&Value::Object(obj)).expect("in memory");
        line.push(b'\n');
        self.write(&line);
    }

    /// A name in a group's `files`: a file `{"path": ...` (left open for its links), or a
    /// link in its file's `links`.
    fn json_name(&mut self, path: &[u8], link: bool) {
        let mut text = serde_json::to_vec(&Value::Object(path_fields(path))).expect("in memory");
        if link {
            let lead: &[u8] = if self.links_open { b"," } else { b",\"links\":[" };
            self.links_open = true;
            self.write(lead);
            self.write(&text);
            return;
        }
        self.close_file();
        if !self.first_file {
            self.write(b",");
        }
        self.first_file = false;
        text.pop();
        self.write(&text);
        self.files_open = true;
    }

    /// Closes the JSON object of the file before (and its links' array).
    fn close_file(&mut self) {
        if self.links_open {
            self.write(b"]");
            self.links_open = false;
        }
        if self.files_open {
            self.write(b"}");
            self.files_open = false;
        }
    }
}

/// A name on a line of its own, as checksum lines hold one: as it is, unless it holds a
/// backslash, a newline or a carriage return; then escaped, after a `\`.
fn text_name(path: &[u8], out: &mut Vec<u8>) {
    if path.iter().any(|b| matches!(b, b'\\' | b'\n' | b'\r')) {
        out.push(b'\\');
        escape_into(path, out);
    } else {
        out.extend_from_slice(path);
    }
}

/// The summary and its notes, on stderr.
fn notes(s: &Summary) {
    let read = if s.files_read == 0 {
        "nothing read".to_string()
    } else {
        format!("{} read ({})", ui::count(s.files_read, "file"), human_bytes(s.bytes_read))
    };
    if s.groups == 0 {
        ui::error(&format!(
            "no duplicates among {}; {read}",
            ui::count(s.files_considered, "file")
        ));
    } else {
        let links = match s.links {
            0 => String::new(),
            1 => " (1 more name is a link, not counted)".to_string(),
            n => format!(" ({n} more names are links, not counted)"),
        };
        ui::error(&format!(
            "{} of duplicates among {}: {} files, {} ({} bytes) wasted{links}; {read}",
            ui::count(s.groups, "group"),
            ui::count(s.files_considered, "file"),
            s.files,
            human_bytes(s.wasted_bytes),
            s.wasted_bytes
        ));
    }
    if s.changed_since_scan > 0 {
        ui::error(&format!(
            "{} changed since the last scan, left out: run fixity scan (-v lists them)",
            ui::count(s.changed_since_scan, "file")
        ));
    }
    if s.left_out_findings > 0 {
        ui::error(&format!(
            "{} with a standing finding (corrupt, unreadable) left out: the catalog's digest \
             is not what they hold now (-v lists them; fixity status shows them)",
            ui::count(s.left_out_findings, "file")
        ));
    }
    if let (true, Some(algo)) = (s.confirmed_by_reading, s.catalog_algorithm) {
        ui::error(&format!(
            "the catalog's {algo} digests are not proof of equal content (not cryptographic): \
             the files they paired were read and grouped by BLAKE3"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_newlines_or_backslashes_are_escaped() {
        let mut out = Vec::new();
        text_name(b"a/b c", &mut out);
        assert_eq!(out, b"a/b c");
        out.clear();
        text_name(b"a\nb\\c", &mut out);
        assert_eq!(out, b"\\a\\nb\\\\c");
    }
}
