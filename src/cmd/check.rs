//! `fixity check`: verify files against manifests with the stdout, stderr and exit status
//! of coreutils' `sha256sum -c` (program name aside). The arguments become a
//! [`CheckPlan`]; the library's check job ([`fixity::check::run`]) emits one event per
//! line, which this module renders as coreutils lines or JSON, with a progress bar.

use super::{Status, engine_config};
use crate::cli::{CheckArgs, ReadArgs};
use crate::ui::{self, Progress};
use fixity::algo::{self, Algorithm};
use fixity::check::{CheckPlan, Counts, Event, Outcome, Verdict, plural};
use fixity::digest::Digest;
use fixity::formats::coreutils::result_line;
use fixity::formats::json;
use fixity::pathtext::quote_env;
use fixity::sys::OsStrExt;
use std::ffi::OsString;
use std::io::{self, Write};

/// `fixity check MANIFEST...`.
pub fn run(args: CheckArgs) -> anyhow::Result<Status> {
    let plan = plan(&args)?;
    let show = Show { quiet: args.quiet, status: args.status, warn: args.warn, json: args.json };
    execute(&plan, show, &args.read)
}

/// The arguments as a check plan: `-a NAME`, or `-a md5,sha1` for lines with several
/// digests (rhash's `name  d1  d2`); no manifest is standard input.
pub(crate) fn plan(args: &CheckArgs) -> anyhow::Result<CheckPlan> {
    let (forced, columns) = match &args.algorithm {
        Some(list) if list.contains(',') => {
            let algos = algo::parse_list(list).map_err(anyhow::Error::msg)?;
            let leaked: &'static [&'static Algorithm] = Box::leak(algos.into_boxed_slice());
            (None, Some(leaked))
        }
        Some(n) => (
            Some(algo::lookup(n).ok_or_else(|| {
                anyhow::anyhow!("unknown algorithm '{n}' (`fixity algorithms` lists them)")
            })?),
            None,
        ),
        None => (None, None),
    };
    let manifests: Vec<OsString> =
        if args.manifests.is_empty() { vec![OsString::from("-")] } else { args.manifests.clone() };
    let manifests: Vec<OsString> =
        manifests.iter().flat_map(|m| fixity::sys::expand_wildcards(m)).collect();
    Ok(CheckPlan {
        manifests,
        forced,
        columns,
        zero: args.zero,
        confine: args.confine,
        ignore_missing: args.ignore_missing,
        strict: args.strict,
        coreutils: args.coreutils,
        cksum_tags: args.cksum_tags,
    })
}

/// What the renderer shows of a check: the options that change the output, not what is
/// checked or how.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Show {
    /// `--quiet`: nothing for files that match.
    pub quiet: bool,
    /// `--status`: nothing at all; the exit status tells.
    pub status: bool,
    /// `--warn`: a warning for each improperly formatted line.
    pub warn: bool,
    /// `--json`: JSON lines instead of coreutils' lines.
    pub json: bool,
}

/// Runs `plan` with the read options `read` and renders its events as `show` says.
pub(crate) fn execute(plan: &CheckPlan, show: Show, read: &ReadArgs) -> anyhow::Result<Status> {
    let first = plan.manifests.iter().find(|m| *m != "-").map(std::path::Path::new);
    let mut cfg = engine_config(Some(first.unwrap_or(std::path::Path::new("."))), read);
    let progress = Progress::new(read.progress, !read.no_progress);
    cfg.read.progress = progress.counter();
    let stdout = io::stdout();
    let mut r = Renderer {
        plan,
        show,
        out: io::BufWriter::with_capacity(64 * 1024, stdout.lock()),
        progress,
        status: Status::Ok,
        ambiguous_said: false,
        files: 0,
        line: Vec::with_capacity(256),
        write_err: None,
    };
    fixity::check::run(plan, &cfg, &mut |event| r.event(event));
    r.progress.finish();
    if let Some(e) = r.write_err {
        return Err(anyhow::Error::new(e).context("write error"));
    }
    r.out.flush()?;
    Ok(r.status)
}

/// Renders a check's events as coreutils' lines (stdout: results; stderr: warnings and
/// errors) or JSON lines, with the progress bar; keeps the exit status.
struct Renderer<'a, W: Write> {
    plan: &'a CheckPlan,
    show: Show,
    out: W,
    progress: Progress,
    status: Status,
    /// The ambiguity error is given once per manifest.
    ambiguous_said: bool,
    /// Files read, for the progress bar.
    files: u64,
    /// The stdout bytes of the current event.
    line: Vec<u8>,
    write_err: Option<io::Error>,
}

impl<W: Write> Renderer<'_, W> {
    /// Renders one event; false stops the check (stdout could not be written).
    fn event(&mut self, event: Event) -> bool {
        self.line.clear();
        let (plan, show) = (self.plan, self.show);
        match event {
            Event::Checked { manifest, lineno, name, sums, bytes, outcome } => {
                if let Some(size) = bytes {
                    self.files += 1;
                    self.progress.file_done(size, self.files);
                }
                self.checked(&plan.manifests[manifest], lineno, &name, &sums, &outcome);
            }
            Event::Malformed { manifest, lineno, cksum_tag, why } => {
                self.malformed(&plan.manifests[manifest], lineno, cksum_tag, why);
            }
            Event::Ambiguous { manifest, lineno, fits } => {
                self.ambiguous(&plan.manifests[manifest], lineno, &fits);
            }
            // A note: not under --status.
            Event::Outside { .. } if self.show.status => {}
            Event::Outside { manifest, lineno } => {
                let _ = self.out.flush();
                ui::error(&format!(
                    "{}: {lineno}: note: this manifest names files outside its \
                     directory (absolute or ..); --confine refuses such lines",
                    manifest_name(&plan.manifests[manifest])
                ));
            }
            Event::Refused { manifest, lineno, name } => {
                let _ = self.out.flush();
                ui::error(&format!(
                    "{}: {lineno}: {}: refused: the path leaves the manifest's directory",
                    manifest_name(&plan.manifests[manifest]),
                    quote_env(&name)
                ));
                if show.json {
                    let why = "outside the manifest's directory";
                    json::write_check(&name, "", "refused", Some(why), &mut self.line);
                }
            }
            Event::ManifestUnreadable { manifest, error } => {
                let _ = self.out.flush();
                let mname = manifest_name(&plan.manifests[manifest]);
                let why = match error {
                    Some(e) => fixity::read::io_message(&e),
                    None => "read error".to_string(),
                };
                ui::error(&format!("{mname}: {why}"));
                if show.json {
                    let mbytes = manifest_bytes(&plan.manifests[manifest]);
                    json::write_manifest_done(
                        mbytes,
                        "unreadable",
                        &[],
                        Some(&why),
                        &mut self.line,
                    );
                }
                self.status = self.status.max(Status::Failed);
                self.ambiguous_said = false;
            }
            Event::ManifestDone { manifest, counts, verdict } => {
                let _ = self.out.flush();
                summarize(&counts, &manifest_name(&plan.manifests[manifest]), plan, self.show);
                if show.json {
                    let word = match verdict {
                        Verdict::Clean => "clean",
                        Verdict::Failed => "failed",
                        Verdict::Ambiguous => "ambiguous",
                    };
                    let c = &counts;
                    let numbers = [
                        ("ok", c.ok),
                        ("failed", c.mismatched),
                        ("unreadable", c.unreadable),
                        ("ignored", c.ignored_missing),
                        ("malformed", c.malformed),
                        ("ambiguous", c.ambiguous),
                        ("refused", c.refused),
                    ];
                    let mbytes = manifest_bytes(&plan.manifests[manifest]);
                    json::write_manifest_done(mbytes, word, &numbers, None, &mut self.line);
                }
                self.status = self.status.max(match verdict {
                    Verdict::Clean => Status::Ok,
                    Verdict::Failed => Status::Failed,
                    Verdict::Ambiguous => Status::Usage,
                });
                self.ambiguous_said = false;
            }
        }
        super::emit(&mut self.out, &self.line, &mut self.write_err)
    }

    /// A listed file's result: `name: OK`, `name: FAILED`, `name: FAILED open or read`
    /// (with the reason on stderr), or its JSON line.
    fn checked(
        &mut self,
        manifest: &OsString,
        lineno: u64,
        name: &[u8],
        sums: &[(&'static Algorithm, Digest)],
        outcome: &Outcome,
    ) {
        let (show, line) = (self.show, &mut self.line);
        let algo = algo_label(sums);
        match outcome {
            Outcome::Ok => {
                if show.json {
                    json::write_check(name, &algo, "ok", None, line);
                } else if !show.quiet && !show.status {
                    result_line(name, "OK", line);
                }
            }
            Outcome::Failed => {
                if show.json {
                    json::write_check(name, &algo, "failed", None, line);
                } else if !show.status {
                    result_line(name, "FAILED", line);
                }
            }
            Outcome::IgnoredMissing => {}
            Outcome::Escapes => {
                ui::error(&format!(
                    "{}: {lineno}: {}: refused: the path escapes the tree through a symbolic \
                     link",
                    manifest_name(manifest),
                    quote_env(name)
                ));
                if show.json {
                    let why = "escapes the tree through a symbolic link";
                    json::write_check(name, &algo, "refused", Some(why), line);
                }
            }
            Outcome::Missing(e) | Outcome::Changed(e) | Outcome::Unreadable(e) => {
                // stdout is flushed before anything goes to stderr, so that both through
                // one pipe read as coreutils' (its stdout is line buffered).
                let _ = self.out.flush();
                ui::error(&format!("{}: {}", quote_env(name), e.message()));
                if show.json {
                    json::write_check(name, &algo, outcome.key(), Some(&e.message()), line);
                } else if !show.status {
                    result_line(name, "FAILED open or read", line);
                }
            }
        }
    }

    /// An improperly formatted line: a JSON line, and coreutils' warning under `--warn`.
    fn malformed(
        &mut self,
        manifest: &OsString,
        lineno: u64,
        cksum_tag: Option<&'static str>,
        why: Option<String>,
    ) {
        let (plan, show) = (self.plan, self.show);
        if show.json {
            let what = why.as_deref().unwrap_or("not a checksum line in any format fixity reads");
            let mbytes = manifest_bytes(manifest);
            json::write_line_problem(mbytes, lineno, "malformed", what, &mut self.line);
        }
        if show.warn {
            let _ = self.out.flush();
            let tag = match cksum_tag {
                Some(t) => format!("{t} "),
                None => plan
                    .forced
                    .or_else(|| algo::by_file_name(manifest.as_bytes()))
                    .map(|a| format!("{} ", a.tag))
                    .unwrap_or_default(),
            };
            // coreutils' words; fixity adds what it found wrong with a line that a format
            // of its own (hashdeep, cfv .csv) recognized.
            let why = why.filter(|_| !plan.coreutils).map(|w| format!(": {w}"));
            ui::error(&format!(
                "{}: {lineno}: improperly formatted {tag}checksum line{}",
                manifest_name(manifest),
                why.unwrap_or_default()
            ));
        }
    }

    /// A line whose digest fits several algorithms: a JSON line, and the error (once per
    /// manifest) that asks for `-a`.
    fn ambiguous(&mut self, manifest: &OsString, lineno: u64, fits: &[&'static Algorithm]) {
        let names: Vec<&str> = fits.iter().map(|a| a.name).collect();
        if self.show.json {
            let detail = format!("the digest fits {}: name one with -a", names.join(", "));
            let mbytes = manifest_bytes(manifest);
            json::write_line_problem(mbytes, lineno, "ambiguous", &detail, &mut self.line);
        }
        if !self.ambiguous_said {
            self.ambiguous_said = true;
            let _ = self.out.flush();
            ui::error(&format!(
                "{}: {lineno}: a {}-digit digest fits {}: name the algorithm with -a",
                manifest_name(manifest),
                fits[0].hex_len(),
                names.join(", ")
            ));
        }
    }
}

/// The algorithm names of a line, as JSON reports them (`md5,sha256` for several).
fn algo_label(sums: &[(&'static Algorithm, Digest)]) -> String {
    sums.iter().map(|(a, _)| a.name).collect::<Vec<_>>().join(",")
}

fn manifest_bytes(m: &OsString) -> &[u8] {
    if m == "-" { b"-" } else { m.as_bytes() }
}

fn manifest_name(m: &OsString) -> String {
    if m == "-" { quote_env(b"standard input") } else { quote_env(m.as_bytes()) }
}

/// Prints the end-of-manifest warnings (the verdict is the check job's).
fn summarize(c: &Counts, mname: &str, plan: &CheckPlan, show: Show) {
    if c.ambiguous > 0 {
        return;
    }
    if c.properly_formatted == 0 {
        ui::error(&format!("{mname}: no properly formatted checksum lines found"));
        return;
    }
    if show.status {
        return;
    }
    if c.malformed > 0 {
        let (v, l) = (plural(c.malformed, "line is", "lines are"), c.malformed);
        ui::error(&format!("WARNING: {l} {v} improperly formatted"));
    }
    if c.unreadable > 0 {
        let (l, v) = (c.unreadable, plural(c.unreadable, "listed file", "listed files"));
        ui::error(&format!("WARNING: {l} {v} could not be read"));
    }
    if c.mismatched > 0 {
        let (l, v) =
            (c.mismatched, plural(c.mismatched, "computed checksum", "computed checksums"));
        ui::error(&format!("WARNING: {l} {v} did NOT match"));
    }
    // coreutils says so when no file matched (a mismatch is no verified file).
    if plan.ignore_missing && c.ok == 0 {
        ui::error(&format!("{mname}: no file was verified"));
    }
    if c.refused > 0 {
        let (l, v) = (c.refused, plural(c.refused, "line was", "lines were"));
        ui::error(&format!("WARNING: {l} {v} refused (paths outside the manifest's directory)"));
    }
}
