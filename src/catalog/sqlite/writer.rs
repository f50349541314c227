//! Batched writes into the catalog: statements go into transactions of a few thousand
//! rows (or one second), each committed whole.

use super::{Catalog, Result};
use crate::catalog::Class;
use crate::catalog::below;
use crate::catalog::store::Inode;
use crate::device::Stamp;
use rusqlite::{CachedStatement, params};
use std::time::{Duration, Instant};

/// Writes into the catalog in batches (see [`Catalog::writer`]). Call
/// [`Writer::commit`] to commit the last batch; a batch never committed is rolled back
/// when the catalog closes. The batch belongs to the catalog: writers taken one after the
/// other continue the same batch.
pub(crate) struct Writer<'a> {
    pub(super) cat: &'a Catalog,
    /// The statement of the last write, kept for the next one of the same text (a batch
    /// is mostly writes of one kind): no look-up of the statement cache by the text, a
    /// hash of a few hundred bytes, per row.
    last: Option<(&'static str, CachedStatement<'a>)>,
}

impl<'a> Writer<'a> {
    pub(super) fn new(cat: &'a Catalog) -> Writer<'a> {
        Writer { cat, last: None }
    }

    /// Runs one statement in the open batch; returns how many rows it changed.
    pub(super) fn exec(&mut self, sql: &'static str, p: impl rusqlite::Params) -> Result<usize> {
        let cat = self.cat;
        let same = |(text, _): &(&'static str, _)| std::ptr::eq(*text, sql);
        if !self.last.as_ref().is_some_and(same) {
            // The statement before goes back to the cache as this one comes out of it.
            self.last = None;
            let st = cat.conn.prepare_cached(sql).map_err(|e| cat.err(e))?;
            self.last = Some((sql, st));
        }
        let Some((_, st)) = self.last.as_mut() else { unreachable!("set above") };
        let changed = Self::run(cat, |_| st.execute(p))?;
        self.due()?;
        Ok(changed)
    }

    /// Runs a statement made for this write alone (its text not fixed).
    pub(super) fn exec_text(&mut self, sql: &str, p: impl rusqlite::Params) -> Result<usize> {
        let changed = Self::run(self.cat, |c| c.prepare_cached(sql)?.execute(p))?;
        self.due()?;
        Ok(changed)
    }

    /// Runs `write` in the open batch (opening one if none is).
    fn run(
        cat: &Catalog,
        write: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<usize>,
    ) -> Result<usize> {
        if cat.pending.get() == 0 {
            cat.conn.execute_batch("BEGIN IMMEDIATE").map_err(|e| cat.err(e))?;
            cat.since.set(Instant::now());
        }
        cat.pending.set(cat.pending.get() + 1);
        write(&cat.conn).map_err(|e| cat.err(e))
    }

    /// Commits the batch when it is full or a second old.
    fn due(&mut self) -> Result<()> {
        let cat = self.cat;
        if cat.pending.get() >= 4096 || cat.since.get().elapsed() > Duration::from_secs(1) {
            self.commit()?;
        }
        Ok(())
    }

    /// Gives up the open batch (after a failed write): rolls it back if SQLite has not.
    pub(crate) fn abandon(&mut self) {
        self.cat.pending.set(0);
        if !self.cat.conn.is_autocommit() {
            let _ = self.cat.conn.execute_batch("ROLLBACK");
        }
    }

    /// Commits the current batch.
    pub(crate) fn commit(&mut self) -> Result<()> {
        if self.cat.pending.get() > 0 {
            self.cat.pending.set(0);
            self.cat.conn.execute_batch("COMMIT").map_err(|e| self.cat.err(e))?;
        }
        Ok(())
    }

    /// Records a file hashed for the first time.
    pub(crate) fn insert(
        &mut self,
        path: &[u8],
        stamp: Stamp,
        inode: impl Into<Inode>,
        digest: &[u8],
        now: i64,
    ) -> Result<()> {
        let i = InodeParams::of(stamp, inode.into());
        self.exec(
            "INSERT INTO files (path, size, mtime_ns, dev, ino, digest, first_seen, last_verified,
                                last_checked, last_result, missing_since, ctime_ns, mode, uid, gid)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?7, 'new', NULL, ?8, ?9, ?10, ?11)
             ON CONFLICT (path) DO UPDATE SET size = ?2, mtime_ns = ?3, dev = ?4, ino = ?5,
                digest = ?6, last_verified = ?7, last_checked = ?7, last_result = 'new',
                missing_since = NULL, moved_from = NULL, note = NULL, finding_since = NULL,
                found_digest = NULL, imported = NULL, ctime_ns = ?8, mode = ?9, uid = ?10,
                gid = ?11",
            params![
                path,
                stamp.size as i64,
                stamp.mtime_ns as i64,
                i.dev,
                i.ino,
                digest,
                now,
                i.ctime,
                i.mode,
                i.uid,
                i.gid
            ],
        )?;
        self.cat.inserted(self)
    }

    /// Records a new digest for a known file (an edit): `class` is what the run found.
    pub(crate) fn rehashed(
        &mut self,
        path: &[u8],
        stamp: Stamp,
        inode: impl Into<Inode>,
        digest: &[u8],
        class: Class,
        now: i64,
    ) -> Result<()> {
        let i = InodeParams::of(stamp, inode.into());
        self.exec(
            "UPDATE files SET size = ?2, mtime_ns = ?3, dev = ?4, ino = ?5, digest = ?6,
                last_verified = ?7, last_checked = ?7, last_result = ?8, missing_since = NULL,
                moved_from = NULL, note = NULL, finding_since = NULL, found_digest = NULL,
                imported = NULL, ctime_ns = ?9, mode = ?10, uid = ?11, gid = ?12
             WHERE path = ?1",
            params![
                path,
                stamp.size as i64,
                stamp.mtime_ns as i64,
                i.dev,
                i.ino,
                digest,
                now,
                class.name(),
                i.ctime,
                i.mode,
                i.uid,
                i.gid
            ],
        )
        .map(drop)
    }

    /// Records the inode of a file whose content was found as recorded but whose inode
    /// changed (a chmod, chown, rename or new link moved its ctime): its new ctime,
    /// (device, inode) and access, so the next run compares with them.
    pub(crate) fn restamped(&mut self, path: &[u8], stamp: Stamp, inode: Inode) -> Result<()> {
        let i = InodeParams::of(stamp, inode);
        self.exec(
            "UPDATE files SET dev = ?2, ino = ?3, ctime_ns = ?4, mode = ?5, uid = ?6, gid = ?7
             WHERE path = ?1",
            params![path, i.dev, i.ino, i.ctime, i.mode, i.uid, i.gid],
        )
        .map(drop)
    }

    /// Records a check of a known file that leaves its digest alone: ok (content matched:
    /// also the last-verified time), corrupt (`found`: the digest of what it holds now)
    /// or unreadable. A finding keeps when it was first found while the class stays.
    pub(crate) fn checked(
        &mut self,
        path: &[u8],
        class: Class,
        now: i64,
        (note, found): (Option<&str>, Option<&[u8]>),
    ) -> Result<()> {
        if class == Class::Ok && note.is_none() && found.is_none() {
            // What a verify writes for nearly every file: the same row, in fewer steps.
            return self
                .exec(
                    "UPDATE files SET last_checked = ?2, last_verified = ?2, last_result = 'ok',
                        note = NULL, moved_from = NULL, finding_since = NULL,
                        found_digest = NULL, imported = NULL
                     WHERE path = ?1",
                    params![path, now],
                )
                .map(drop);
        }
        self.exec(
            "UPDATE files SET last_checked = ?2, last_result = ?3, note = ?4, moved_from = NULL,
                last_verified = CASE WHEN ?3 = 'ok' THEN ?2 ELSE last_verified END,
                finding_since = CASE WHEN ?3 IN ('corrupt', 'unreadable', 'changed') THEN
                    CASE WHEN last_result = ?3 THEN finding_since ELSE ?2 END END,
                found_digest = ?5,
                imported = CASE WHEN ?3 = 'ok' THEN NULL ELSE imported END
             WHERE path = ?1",
            params![path, now, class.name(), note, found],
        )
        .map(drop)
    }

    /// Records a digest another tool took (`source`), for a file fixity has not read:
    /// never verified (last verified 0, so a verification pass reads it first), its size
    /// and mtime the file's at the import.
    pub(crate) fn imported(
        &mut self,
        path: &[u8],
        stamp: Stamp,
        inode: impl Into<Inode>,
        digest: &[u8],
        source: &'static str,
        now: i64,
    ) -> Result<()> {
        let i = InodeParams::of(stamp, inode.into());
        self.exec(
            "INSERT INTO files (path, size, mtime_ns, dev, ino, digest, first_seen, last_verified,
                                last_checked, last_result, missing_since, imported, ctime_ns,
                                mode, uid, gid)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, 0, 'ok', NULL, ?8, ?9, ?10, ?11, ?12)",
            params![
                path,
                stamp.size as i64,
                stamp.mtime_ns as i64,
                i.dev,
                i.ino,
                digest,
                now,
                source,
                i.ctime,
                i.mode,
                i.uid,
                i.gid
            ],
        )?;
        self.cat.inserted(self)
    }

    /// A file recorded as missing is back (unchanged).
    pub(crate) fn present(&mut self, path: &[u8]) -> Result<()> {
        self.exec(
            "UPDATE files SET missing_since = NULL, last_result = 'ok', finding_since = NULL,
                found_digest = NULL
             WHERE path = ?1",
            params![path],
        )
        .map(drop)
    }

    /// Records that a file is gone (keeping when it first went missing).
    pub(crate) fn missing(&mut self, path: &[u8], now: i64) -> Result<()> {
        self.exec(
            "UPDATE files SET missing_since = coalesce(missing_since, ?2), last_checked = ?2,
                last_result = 'missing'
             WHERE path = ?1",
            params![path, now],
        )
        .map(drop)
    }

    /// Forgets a file.
    pub(crate) fn delete(&mut self, path: &[u8]) -> Result<()> {
        self.exec("DELETE FROM files WHERE path = ?1", params![path]).map(drop)
    }

    /// Forgets the files recorded as missing at `rel` or below it (every missing file for
    /// an empty `rel`); returns how many.
    pub(crate) fn forget_missing(&mut self, rel: &[u8]) -> Result<usize> {
        let (lo, hi) = below(rel);
        self.exec_text(
            &format!(
                "DELETE FROM files WHERE missing_since IS NOT NULL AND {}",
                super::under_clause(rel)
            ),
            params![lo, rel, hi],
        )
    }

    /// Records that the file at `from` (missing) now lives at `to`: the row at `to`
    /// inherits `from`'s history and `from` is forgotten.
    pub(crate) fn moved(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<()> {
        self.exec(
            "UPDATE files SET last_result = 'moved', moved_from = ?1, last_checked = ?3,
                first_seen = min(first_seen, (SELECT first_seen FROM files WHERE path = ?1))
             WHERE path = ?2",
            params![from, to, now],
        )?;
        self.delete(from)
    }

    /// Records that the file at `from` (missing) is the one at `to` under another form of
    /// its name: `from`'s row, its digest and history, takes the place of `to`'s new one.
    pub(crate) fn renamed(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<()> {
        self.delete(to)?;
        self.exec(
            "UPDATE files SET path = ?2, missing_since = NULL, moved_from = ?1,
                last_result = 'moved', last_checked = ?3
             WHERE path = ?1",
            params![from, to, now],
        )
        .map(drop)
    }
}

/// The columns of an [`Inode`] and a stamp's ctime, as SQLite stores them.
struct InodeParams {
    dev: Option<i64>,
    ino: Option<i64>,
    ctime: Option<i64>,
    mode: Option<i64>,
    uid: Option<i64>,
    gid: Option<i64>,
}

impl InodeParams {
    fn of(stamp: Stamp, inode: Inode) -> InodeParams {
        let (dev, ino) = split_id(inode.id);
        let a = inode.access;
        InodeParams {
            dev,
            ino,
            ctime: stamp.ctime_ns.map(|c| c as i64),
            mode: a.map(|a| i64::from(a.stored_mode())),
            uid: a.map(|a| i64::from(a.uid)),
            gid: a.map(|a| i64::from(a.gid)),
        }
    }
}

pub(super) fn split_id(id: Option<(u64, u64)>) -> (Option<i64>, Option<i64>) {
    match id {
        Some((d, i)) => (Some(d as i64), Some(i as i64)),
        None => (None, None),
    }
}
