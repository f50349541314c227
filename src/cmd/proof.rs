//! `fixity status --proof` (the current head of a tree's chain of proofs, as a text to
//! sign) and `fixity audit-proof` (where a catalog and its files part from a kept head).

use super::Status;
use crate::cli::{AuditProofArgs, StatusArgs};
use crate::ui;
use anyhow::{Context, bail};
use fixity::catalog::{OpenOptions, open_store};
use fixity::clock::format_rfc3339_ms;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::proof::{Break, Statement, hex};
use fixity::proof_audit::sign::{SignError, Signer, verify};
use fixity::proof_audit::{FileCause, Finding, Options, Summary};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// Prints the current head of the tree's chain.
pub fn status(args: &StatusArgs) -> anyhow::Result<Status> {
    let url = args.catalog.as_deref().and_then(super::pg_url);
    if url.is_none() && args.host.is_some() {
        bail!("--host names trees in a PostgreSQL catalog: pass --catalog postgresql://...");
    }
    let Some(tree) = args.path.clone().or_else(|| url.is_none().then(|| PathBuf::from("."))) else {
        bail!("--proof shows one tree's head: name it (fixity status --proof TREE --catalog URL)");
    };
    let spec = super::catalog_spec(args.catalog.as_deref(), &tree, args.host.as_deref());
    let store = open_store(&spec, &OpenOptions { read_only: true, ..OpenOptions::default() })?;
    let Some(entry) = store.last_proof()? else {
        bail!(
            "{}: no proof yet: the chain of proofs begins with the next run that records (scan, \
             verify, accept ...)",
            quote_env(path_bytes(store.location()))
        );
    };
    let st = Statement::of(&store.proof_identity(), &entry);
    let mut out = Vec::new();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &statement_json(&st))?;
        out.push(b'\n');
    } else {
        out.extend(st.render().bytes());
    }
    std::io::stdout().write_all(&out).context("cannot write to standard output")?;
    Ok(Status::Ok)
}

/// A statement's fields as JSON, and its text (what is signed).
fn statement_json(st: &Statement) -> serde_json::Value {
    json!({
        "host": (!st.host.is_empty()).then_some(&st.host),
        "tree": (!st.tree.is_empty()).then(|| String::from_utf8_lossy(&st.tree)),
        "seq": st.seq,
        "at": format_rfc3339_ms(st.at),
        "at_ms": st.at,
        "files": st.files,
        "root": hex(&st.root),
        "prev": hex(&st.prev),
        "head": hex(&st.head),
        "statement": st.render(),
    })
}

/// Audits the tree against the head in `--head`.
pub fn audit(args: AuditProofArgs) -> anyhow::Result<Status> {
    let url = args.catalog.as_deref().and_then(super::pg_url);
    if url.is_none() && args.host.is_some() {
        bail!("--host names trees in a PostgreSQL catalog: pass --catalog postgresql://...");
    }
    let shown = quote_env(path_bytes(&args.head));
    let text = std::fs::read(&args.head).with_context(|| format!("cannot read {shown}"))?;
    let text = String::from_utf8(text)
        .map_err(|_| anyhow::anyhow!("{shown}: not a fixity head (not UTF-8)"))?;
    let kept = Statement::parse(&text).with_context(|| shown.clone())?;
    let spec = super::catalog_spec(args.catalog.as_deref(), &args.path, args.host.as_deref());
    let store = open_store(&spec, &OpenOptions { read_only: true, ..OpenOptions::default() })?;

    let mut breaks: Vec<Finding> = Vec::new();
    let signer = match (&args.allowed_signers, &args.identity, &args.minisign_key) {
        (Some(f), Some(id), _) => Some(Signer::Ssh {
            allowed_signers: f.clone(),
            identity: id.clone(),
            signature: args.signature.clone(),
        }),
        (_, _, Some(k)) => {
            Some(Signer::Minisign { public_key: k.clone(), signature: args.signature.clone() })
        }
        _ if args.signature.is_some() => {
            bail!("--signature goes with --allowed-signers and --identity, or --minisign-key")
        }
        _ => None,
    };
    let mut out = std::io::stdout().lock();
    let mut on = |f: &Finding| {
        if !args.json {
            let _ = writeln!(out, "{}", line(f));
        }
        breaks.push(f.clone());
    };
    let mut signed = None;
    if let Some(signer) = &signer {
        match verify(signer, &args.head) {
            Ok(()) => signed = Some(true),
            Err(SignError::Refused(why)) => {
                signed = Some(false);
                on(&Finding::Signature(why));
            }
            Err(e @ SignError::CannotRun(_)) => bail!("{e}"),
        }
    }
    let opts = Options { root: &args.path, read: !args.no_read };
    let mut sum = fixity::proof_audit::run(store.as_ref(), &kept, &opts, &mut on)?;
    sum.breaks += u64::from(signed == Some(false));
    drop(out);
    if args.json {
        let v = json!({
            "head": statement_json(&kept),
            "signature": signed.map(|ok| if ok { "good" } else { "bad" }),
            "intact": sum.breaks == 0,
            "breaks": breaks.iter().map(break_json).collect::<Vec<_>>(),
            "summary": sum,
        });
        let mut o = Vec::new();
        serde_json::to_writer_pretty(&mut o, &v)?;
        o.push(b'\n');
        std::io::stdout().write_all(&o).context("cannot write to standard output")?;
    }
    ui::error(&verdict(&kept, &sum, signed));
    Ok(if sum.breaks == 0 { Status::Ok } else { Status::Failed })
}

/// The last line on standard error.
fn verdict(kept: &Statement, sum: &Summary, signed: Option<bool>) -> String {
    let sig = match signed {
        Some(true) => "signature good, ",
        Some(false) => "signature BAD, ",
        None => "",
    };
    let read = match sum.files_read {
        0 => String::new(),
        n => format!(", {} read", ui::count(n, "file")),
    };
    let last = sum.last_seq.map_or("none".to_string(), |s| s.to_string());
    let state = match sum.breaks {
        0 => "intact".to_string(),
        n => format!("BROKEN ({})", ui::count(n, "break")),
    };
    format!(
        "audit-proof: {state}: head {} of a chain of {} (last {last}), {sig}{}{read}",
        kept.seq,
        sum.entries,
        ui::count(sum.files, "record")
    )
}

/// A break as one line: what it concerns (the head, an entry, a file), then the cause.
fn line(f: &Finding) -> String {
    let (what, cause) = describe(f);
    format!("{what}: {cause}")
}

/// (what, cause) of a break.
fn describe(f: &Finding) -> (String, String) {
    let seq = |n: u64| format!("seq {n}");
    match f {
        Finding::Signature(why) => ("head".into(), format!("the signature does not verify: {why}")),
        Finding::NoChain => ("catalog".into(), "keeps no chain of proofs".into()),
        Finding::Records { seq: n, files_then, files_now } => (
            seq(*n),
            format!(
                "the catalog's records no longer give this last entry's root ({files_then} \
                 records then, {files_now} now): records changed after the last run, outside fixity"
            ),
        ),
        Finding::File { path, cause } => (
            quote_env(path),
            match cause {
                FileCause::Differs { recorded, now, stamp_as_recorded } => format!(
                    "content differs from its record (recorded {}, now {}; {})",
                    recorded.to_hex(),
                    now.to_hex(),
                    match stamp_as_recorded {
                        true => "size and mtime as recorded",
                        false => "size or mtime changed since the last run",
                    }
                ),
                FileCause::Missing => "recorded as present, not in the tree".into(),
                FileCause::Unreadable(why) => format!("cannot be read: {why}"),
            },
        ),
        Finding::Chain(b) => match b {
            Break::Forged { seq: n } => (
                "head".into(),
                format!("its fields do not give its head (seq {n}): an edited head"),
            ),
            Break::OtherTree => ("head".into(), "names another host or tree".into()),
            Break::Gap { after, next } => (
                seq(after + 1),
                format!(
                    "missing (entries {}..{} gone): runs deleted from the history",
                    after + 1,
                    next - 1
                ),
            ),
            Break::Head { seq: n } => (
                seq(*n),
                "its head does not recompute from its fields: the entry was edited".into(),
            ),
            Break::Prev { seq: n } => {
                (seq(*n), format!("its prev is not entry {}'s head: history rewritten", n - 1))
            }
            Break::RunGone { seq: n, run } => {
                (seq(*n), format!("its run (id {run}) is no longer in the catalog: a run deleted"))
            }
            Break::Beyond { seq: n, last } => (
                seq(*n),
                format!(
                    "the head kept is past the chain's end (last entry {last}): history cut \
                     short, or a forged head"
                ),
            ),
            Break::Differs { seq: n, fields } => (
                seq(*n),
                format!(
                    "the catalog's entry is not the head kept ({} differ): history rewritten, \
                     or a forged head",
                    fields.join(", ")
                ),
            ),
        },
    }
}

/// A break as JSON: its kind, the entry or path it concerns, and the line's cause.
fn break_json(f: &Finding) -> serde_json::Value {
    let kind = match f {
        Finding::Signature(_) => "signature",
        Finding::NoChain => "no_chain",
        Finding::Records { .. } => "records",
        Finding::File { .. } => "file",
        Finding::Chain(b) => match b {
            Break::Forged { .. } => "forged_head",
            Break::OtherTree => "other_tree",
            Break::Gap { .. } => "gap",
            Break::Head { .. } => "entry_edited",
            Break::Prev { .. } => "prev",
            Break::RunGone { .. } => "run_deleted",
            Break::Beyond { .. } => "beyond_chain",
            Break::Differs { .. } => "differs",
        },
    };
    let seq = match f {
        Finding::Records { seq, .. } => Some(*seq),
        Finding::Chain(
            Break::Forged { seq }
            | Break::Head { seq }
            | Break::Prev { seq }
            | Break::RunGone { seq, .. }
            | Break::Beyond { seq, .. }
            | Break::Differs { seq, .. },
        ) => Some(*seq),
        Finding::Chain(Break::Gap { after, .. }) => Some(after + 1),
        _ => None,
    };
    let path = match f {
        Finding::File { path, .. } => Some(String::from_utf8_lossy(path).into_owned()),
        _ => None,
    };
    json!({ "kind": kind, "seq": seq, "path": path, "cause": describe(f).1 })
}
