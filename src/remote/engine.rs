//! The comparison: the listing (keys in byte order) merged with the catalog's records
//! (paths in byte order), a page at a time, so memory is bounded by the page whatever the
//! number of objects. Per page: the listing's ETags first; HEADs (with checksum mode, and
//! part 1's size for a multipart object) for what they cannot prove; one local read for
//! the digests neither the record nor the kept extras hold, checked against the record so a
//! file edited or rotten since is never taken for the recorded content; downloads with
//! `--download`. Each page's events go out in key order before its extras are kept.

use super::object::{self, Head, Listed, Offer, Verdict};
use super::{Class, Event, ObjectStore, Options, Proof, RemoteError};
use crate::algo::Algorithm;
use crate::catalog::{Extra, Record, Store, StoreError};
use crate::confine::Refused;
use crate::device::Stamp;
use crate::pathtext::bytes_path;
use crate::pipeline::hash_file;
use crate::read::{OpenMode, ReadError, ReadOptions};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

/// Items settled and reported at once at most: a page of the listing, or this many
/// records with no object between two keys (memory stays bounded however many there are).
const BATCH: usize = 4096;

/// Problem paths a summary keeps (the rest are counted).
const PROBLEMS_KEPT: usize = 100;

/// What a comparison found, in all.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    pub remote: String,
    /// Objects and records per class.
    pub counts: BTreeMap<&'static str, u64>,
    /// Objects proven equal, per proof.
    pub proofs: BTreeMap<&'static str, u64>,
    /// Objects listed under the prefix (directory markers and the tree's `.fixity/` left
    /// out: `skipped`).
    pub objects: u64,
    pub skipped: u64,
    /// Local files read for digests no record held, and their bytes.
    pub files_read: u64,
    pub bytes_read: u64,
    /// Objects downloaded (`--download`) and their bytes.
    pub downloaded: u64,
    pub bytes_downloaded: u64,
    /// Requests made (listing pages, HEADs, downloads).
    pub requests: u64,
    pub seconds: f64,
    /// Every object and record was compared (false: the listing or the catalog failed
    /// part way; the counts are those of what was compared).
    pub complete: bool,
    /// The first findings.
    pub problems: Vec<Problem>,
}

/// A finding a summary keeps.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Problem {
    /// The path (lossy where it is not UTF-8).
    pub path: String,
    pub class: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Summary {
    fn count(&mut self, e: &Event) {
        *self.counts.entry(e.class.name()).or_default() += 1;
        if let (Class::Ok, Some(p)) = (e.class, e.proof) {
            *self.proofs.entry(p.name()).or_default() += 1;
        }
        if e.class.is_finding() && self.problems.len() < PROBLEMS_KEPT {
            let path = String::from_utf8_lossy(&e.path).into_owned();
            self.problems.push(Problem { path, class: e.class.name(), note: e.note.clone() });
        }
    }

    /// Findings made (differs, missing, unprovable, errors).
    pub fn findings(&self) -> u64 {
        Class::ALL
            .iter()
            .filter(|c| c.is_finding())
            .map(|c| self.counts.get(c.name()).copied().unwrap_or(0))
            .sum()
    }
}

/// One object or record of a page, on its way to a verdict.
struct Item {
    rel: Vec<u8>,
    record: Option<Record>,
    listed: Option<Listed>,
    head: Option<Head>,
    /// Local digests known: the record's and the kept extras that describe its version.
    known: Vec<(&'static Algorithm, Vec<u8>)>,
    extras_looked: bool,
    /// The local file could not serve (edited, missing, unreadable): not read again.
    unreadable: bool,
    /// New extras to keep once the page is reported.
    kept: Vec<Extra>,
    notes: Vec<String>,
    done: Option<Event>,
}

impl Item {
    fn new(rel: Vec<u8>, record: Option<Record>, listed: Option<Listed>) -> Item {
        Item {
            rel,
            record,
            listed,
            head: None,
            known: Vec::new(),
            extras_looked: false,
            unreadable: false,
            kept: Vec::new(),
            notes: Vec::new(),
            done: None,
        }
    }

    fn finish(&mut self, class: Class, proof: Option<Proof>, note: Option<String>) {
        self.done = Some(Event { path: self.rel.clone(), class, proof, note });
    }

    fn offers(&mut self) -> Vec<Offer> {
        let listed = self.listed.as_ref().expect("an object");
        object::offers(listed, self.head.as_ref(), &mut self.notes)
    }

    fn judge(&self, offers: &[Offer]) -> Verdict {
        object::judge(offers, &|a| self.known_digest(a))
    }

    /// The local digest known for `a` (by row, or by name for a row made again).
    fn known_digest(&self, a: &'static Algorithm) -> Option<Vec<u8>> {
        let same = |k: &&'static Algorithm| std::ptr::eq(*k, a) || k.name == a.name;
        self.known.iter().find(|(k, _)| same(k)).map(|(_, d)| d.clone())
    }

    /// Settles the item as different when the object's `size` is not the recorded one.
    fn size_differs(&mut self, size: u64) -> bool {
        let recorded = self.record.as_ref().and_then(|r| r.size);
        match recorded.filter(|&r| r != size) {
            Some(r) => {
                let note = format!("size: remote {size} bytes, recorded {r}");
                self.finish(Class::Differs, Some(Proof::Size), Some(note));
                true
            }
            None => false,
        }
    }

    /// Settles the item on `verdict` if it proves something.
    fn settle(&mut self, verdict: &Verdict) -> bool {
        match verdict {
            Verdict::Same(p) => self.finish(Class::Ok, Some(*p), None),
            Verdict::Differs(p, note) => self.finish(Class::Differs, Some(*p), Some(note.clone())),
            Verdict::Unknown(_) => return false,
        }
        true
    }
}

/// Compares the objects under the remote's prefix with the records of `store` (the
/// catalog of the tree at `root`), calling `on` for each object and record in key order.
/// `Err` only when the comparison cannot go on (the listing or the catalog failed); each
/// object's own trouble is an event.
pub fn compare(
    store: &mut dyn Store,
    root: &Path,
    remote: &mut dyn ObjectStore,
    prefix: &str,
    opts: &Options,
    on: &mut dyn FnMut(&Event),
) -> Result<Summary, Box<Failed>> {
    compare_under(store, root, remote, (prefix, b""), opts, on)
}

/// [`compare`] of the subtree `within` (a directory's path below the root; empty: the
/// whole tree) only: its records, and the objects `remote` lists (opened on the prefix
/// of the subtree's keys), keyed `prefix` and the records' paths.
pub fn compare_under(
    store: &mut dyn Store,
    root: &Path,
    remote: &mut dyn ObjectStore,
    (prefix, within): (&str, &[u8]),
    opts: &Options,
    on: &mut dyn FnMut(&Event),
) -> Result<Summary, Box<Failed>> {
    let started = std::time::Instant::now();
    let mut sum = Summary { remote: remote.describe(), ..Summary::default() };
    let done = merge(store, root, remote, (prefix, within), opts, on, &mut sum);
    sum.requests = remote.requests();
    sum.seconds = started.elapsed().as_secs_f64();
    sum.complete = done.is_ok();
    match done {
        Ok(()) => Ok(sum),
        Err(error) => Err(Box::new(Failed { error, summary: sum })),
    }
}

/// A comparison cut short: why, and what it had compared (reported already).
#[derive(Debug)]
pub struct Failed {
    pub error: RemoteError,
    pub summary: Summary,
}

/// The comparison proper (see [`compare`]).
fn merge(
    store: &mut dyn Store,
    root: &Path,
    remote: &mut dyn ObjectStore,
    (prefix, within): (&str, &[u8]),
    opts: &Options,
    on: &mut dyn FnMut(&Event),
    sum: &mut Summary,
) -> Result<(), RemoteError> {
    let base = crate::sys::open_dir(root)
        .map_err(|e| RemoteError::Fatal(format!("cannot open {}: {e}", root.display())))?;
    let (from, until) = crate::catalog::below(within);
    let mut records = store.records(from.as_deref())?;
    let mut last_key: Option<String> = None;
    loop {
        let page = remote.next_page()?;
        let last_page = page.is_none();
        let mut items = Vec::new();
        for listed in page.unwrap_or_default() {
            if last_key.as_ref().is_some_and(|k| *k >= listed.key) {
                return Err(RemoteError::Fatal(format!(
                    "the listing is not in byte order ({:?} after {:?}): cannot merge it with the catalog",
                    listed.key,
                    last_key.unwrap_or_default()
                )));
            }
            last_key = Some(listed.key.clone());
            let rel = listed.key.strip_prefix(prefix).map(|r| r.as_bytes().to_vec());
            let Some(rel) = rel.filter(|r| from.as_ref().is_none_or(|f| r.starts_with(f))) else {
                sum.skipped += 1;
                continue;
            };
            sum.objects += 1;
            // Directory markers, and the tree's own .fixity directory (never content).
            if rel.is_empty() || rel.ends_with(b"/") || rel.starts_with(b".fixity/") {
                sum.objects -= 1;
                sum.skipped += 1;
                continue;
            }
            while let Some(r) = records.next_before(Some(&rel)) {
                items.push(unlisted(r));
                if items.len() >= BATCH {
                    let batch = std::mem::take(&mut items);
                    flush(batch, store, &base, root, remote, opts, sum, on)?;
                }
            }
            let record = records.other(&rel);
            items.push(Item::new(rel, record, Some(listed)));
        }
        if last_page {
            while let Some(r) = records.next_before(until.as_deref()) {
                items.push(unlisted(r));
                if items.len() >= BATCH {
                    let batch = std::mem::take(&mut items);
                    flush(batch, store, &base, root, remote, opts, sum, on)?;
                }
            }
        }
        if let Some(e) = records.error() {
            return Err(e.into());
        }
        flush(items, store, &base, root, remote, opts, sum, on)?;
        if last_page {
            break;
        }
    }
    Ok(())
}

/// Settles `items` (a page, or a batch of it), reports them in order, then keeps the
/// digests their reads computed.
#[allow(clippy::too_many_arguments)]
fn flush(
    mut items: Vec<Item>,
    store: &mut dyn Store,
    base: &File,
    root: &Path,
    remote: &dyn ObjectStore,
    opts: &Options,
    sum: &mut Summary,
    on: &mut dyn FnMut(&Event),
) -> Result<(), RemoteError> {
    settle_page(&mut items, store, base, root, remote, opts, sum)?;
    for it in &items {
        let e = it.done.as_ref().expect("every item settled");
        sum.count(e);
        on(e);
    }
    // Reported first, then kept.
    for it in items.into_iter().filter(|i| !i.kept.is_empty()) {
        match store.keep_extras(&it.rel, &it.kept) {
            Ok(()) | Err(StoreError::Refused(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    store.commit()?;
    Ok(())
}

/// A record with no object under the prefix.
fn unlisted(r: Record) -> Item {
    let mut it = Item::new(r.path.clone(), None, None);
    let note = if std::str::from_utf8(&r.path).is_err() {
        Some("the name is not UTF-8: no S3 key can hold it".to_string())
    } else if r.missing_since.is_some() {
        Some("also missing from the tree".to_string())
    } else {
        None
    };
    it.finish(Class::Missing, None, note);
    it
}

/// Gives every item of a page its verdict.
fn settle_page(
    items: &mut [Item],
    store: &dyn Store,
    base: &File,
    root: &Path,
    remote: &dyn ObjectStore,
    opts: &Options,
    sum: &mut Summary,
) -> Result<(), RemoteError> {
    // 1. What the listing proves, with the record's digest and the kept extras.
    let mut reads = Vec::new();
    for (i, it) in items.iter_mut().enumerate().filter(|(_, i)| i.done.is_none()) {
        let Some(rec) = &it.record else {
            it.finish(Class::Extra, None, None);
            continue;
        };
        let digest = rec.digest.as_bytes().to_vec();
        let algo = rec.algo;
        if it.size_differs(it.listed.as_ref().expect("an object").size) {
            continue;
        }
        it.known.push((algo, digest));
        // A listing's ETag that does not match proves nothing yet: it may be an SSE-KMS
        // ETag, or one of another part size; the HEAD tells. Only a match settles here.
        let offers = it.offers();
        if let v @ Verdict::Same(_) = it.judge(&offers) {
            it.settle(&v);
            continue;
        }
        look_up_extras(it, store)?;
        match it.judge(&offers) {
            v @ Verdict::Same(_) => {
                it.settle(&v);
            }
            Verdict::Unknown(mut need) if !need.is_empty() => {
                // The full-object checksums the listing names come in the same read.
                let named = &it.listed.as_ref().expect("an object").checksums;
                let named: Vec<_> = named.iter().filter_map(|n| crate::algo::lookup(n)).collect();
                for a in named {
                    if !need.iter().any(|x| std::ptr::eq(*x, a)) && it.known_digest(a).is_none() {
                        need.push(a);
                    }
                }
                reads.push((i, offers, need));
            }
            _ => {}
        }
    }
    // 2. One local read per file for what the listing's ETag needs (a match needs no
    // HEAD), on every core.
    read_and_judge(items, reads, base, root, sum, false);
    // 3. HEADs for the rest.
    let asks: Vec<usize> = (0..items.len()).filter(|&i| items[i].done.is_none()).collect();
    let keys: Vec<(String, bool)> = asks
        .iter()
        .map(|&i| {
            let l = items[i].listed.as_ref().expect("an object");
            let multipart =
                l.etag.as_deref().and_then(|e| e.split_once('-')).is_some_and(|(_, n)| n != "1");
            (l.key.clone(), multipart)
        })
        .collect();
    let heads = if keys.is_empty() { Vec::new() } else { remote.head_many(&keys) };
    let mut reads = Vec::new();
    for (&i, head) in asks.iter().zip(heads) {
        let it = &mut items[i];
        match head {
            Err(RemoteError::Gone) => {
                it.finish(Class::Missing, None, Some("deleted while the comparison ran".into()));
                continue;
            }
            Err(e) => {
                it.finish(Class::Error, None, Some(e.to_string()));
                continue;
            }
            Ok(h) => it.head = Some(h),
        }
        if it.size_differs(it.head.as_ref().map_or(0, |h| h.size)) {
            continue;
        }
        let offers = it.offers();
        match it.judge(&offers) {
            Verdict::Unknown(need) if !need.is_empty() && !it.unreadable => {
                reads.push((i, offers, need))
            }
            Verdict::Unknown(_) => {}
            v => {
                it.settle(&v);
            }
        }
    }
    // 4. A read for what the HEAD offers and the first read did not compute.
    read_and_judge(items, reads, base, root, sum, true);
    // 5. Downloads, when asked for, of what is still unproven.
    let rest: Vec<usize> = (0..items.len()).filter(|&i| items[i].done.is_none()).collect();
    if opts.download && !rest.is_empty() {
        let keys: Vec<(String, Vec<&'static Algorithm>)> = rest
            .iter()
            .map(|&i| {
                let it = &items[i];
                (
                    it.listed.as_ref().expect("an object").key.clone(),
                    vec![it.record.as_ref().expect("a record").algo],
                )
            })
            .collect();
        for (&i, got) in rest.iter().zip(remote.download_many(&keys)) {
            let it = &mut items[i];
            let rec = it.record.as_ref().expect("a record");
            match got {
                Ok((bytes, d)) => {
                    sum.downloaded += 1;
                    sum.bytes_downloaded += bytes;
                    if d[0].ct_eq(&rec.digest) {
                        it.finish(Class::Ok, Some(Proof::Download), None);
                    } else {
                        let note = format!(
                            "download: {} {} of the remote content, recorded {}",
                            rec.algo.name,
                            d[0].to_hex(),
                            rec.digest.to_hex()
                        );
                        it.finish(Class::Differs, Some(Proof::Download), Some(note));
                    }
                }
                Err(RemoteError::Gone) => {
                    it.finish(Class::Missing, None, Some("deleted while the comparison ran".into()))
                }
                Err(e) => it.finish(Class::Error, None, Some(e.to_string())),
            }
        }
    }
    for it in items.iter_mut().filter(|i| i.done.is_none()) {
        let mut notes = std::mem::take(&mut it.notes);
        if notes.is_empty() {
            notes.push("the object offers no ETag or checksum fixity can compare".into());
        }
        if !opts.download {
            notes.push("--download hashes it while streaming".into());
        }
        it.finish(Class::Unprovable, None, Some(notes.join("; ")));
    }
    Ok(())
}

/// Reads each file once (in parallel) for the digests it needs, keeps them, and judges
/// the offers again; `settle_differs`: a proven difference settles the item (after the
/// HEAD), else only a match does (a listing's ETag may not be an MD5 at all).
fn read_and_judge(
    items: &mut [Item],
    reads: Vec<(usize, Vec<Offer>, Vec<&'static Algorithm>)>,
    base: &File,
    root: &Path,
    sum: &mut Summary,
    settle_differs: bool,
) {
    let read: Vec<Result<Vec<Vec<u8>>, String>> = reads
        .par_iter()
        .map(|(i, _, need)| {
            read_local(base, root, items[*i].record.as_ref().expect("a record"), need)
        })
        .collect();
    for ((i, offers, need), got) in reads.into_iter().zip(read) {
        let it = &mut items[i];
        match got {
            Ok(digests) => {
                sum.files_read += 1;
                let rec = it.record.as_ref().expect("a record");
                sum.bytes_read += rec.size.unwrap_or(0);
                for (a, d) in need.iter().zip(digests) {
                    it.kept.push(Extra {
                        algo: a.name.to_string(),
                        digest: d.clone(),
                        size: rec.size.unwrap_or(0),
                        mtime_ns: rec.mtime_ns as i64,
                    });
                    it.known.push((*a, d));
                }
                match it.judge(&offers) {
                    v @ Verdict::Same(_) => {
                        it.settle(&v);
                    }
                    v @ Verdict::Differs(..) if settle_differs => {
                        it.settle(&v);
                    }
                    _ => {}
                }
            }
            Err(why) => {
                it.unreadable = true;
                it.notes.push(why);
            }
        }
    }
}

/// Adds the kept extras that describe the record's version to what is known.
fn look_up_extras(it: &mut Item, store: &dyn Store) -> Result<(), RemoteError> {
    if it.extras_looked {
        return Ok(());
    }
    it.extras_looked = true;
    let rec = it.record.as_ref().expect("a record");
    let stamp = |x: &Extra| Stamp::sized(x.size, x.mtime_ns as i128);
    for x in store.extras(&it.rel)? {
        let same = rec.size.is_none_or(|s| s == x.size) && rec.mtime_ns == stamp(&x).mtime_ns;
        if let (true, Some(a)) = (same, crate::algo::lookup(&x.algo)) {
            it.known.push((a, x.digest));
        }
    }
    Ok(())
}

/// Reads the file of `rec` beneath the tree once, with the record's algorithm and `need`:
/// the digests of `need` when the file is the recorded version (same size and mtime, and
/// the record's digest), else why not.
fn read_local(
    base: &File,
    root: &Path,
    rec: &Record,
    need: &[&'static Algorithm],
) -> Result<Vec<Vec<u8>>, String> {
    if rec.missing_since.is_some() {
        return Err(
            "the file is missing from the tree, and no digest kept proves the object".into()
        );
    }
    let rel = bytes_path(&rec.path);
    let f = crate::confine::open_under(base, &rel).map_err(|e| match e {
        Refused::Io(e) => format!("cannot open the local file: {}", crate::read::io_message(&e)),
        Refused::Escapes | Refused::Swapped => "the local path leads out of the tree".to_string(),
    })?;
    let edited = "the local file changed since it was recorded: run fixity scan";
    let m = f.metadata().map_err(|e| format!("cannot stat the local file: {e}"))?;
    let stamp = Stamp::of(&m);
    if !m.is_file() || !rec.describes(&stamp, 0) {
        return Err(edited.into());
    }
    let mut algos = vec![rec.algo];
    algos.extend_from_slice(need);
    let mut buf = Vec::new();
    let path = root.join(&rel);
    match hash_file(
        &f,
        &path,
        OpenMode::Walked { follow: false },
        &algos,
        &mut buf,
        &ReadOptions::default(),
        None,
    ) {
        Ok(h) if h.digests[0].ct_eq(&rec.digest) => {
            Ok(h.digests[1..].iter().map(|d| d.as_bytes().to_vec()).collect())
        }
        Ok(_) => {
            Err("the local file no longer has the recorded content (corrupt?): run fixity verify"
                .into())
        }
        Err(ReadError::Changed) => Err(edited.into()),
        Err(e) => Err(format!("cannot read the local file: {}", e.message())),
    }
}

#[cfg(test)]
mod tests;
