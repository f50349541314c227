//! The rows a batch holds until it is sent: each kind of write gathered into columns and
//! sent as one statement over arrays (`unnest`), so a batch of thousands of files costs
//! a few round trips instead of one per file.
//!
//! Writes to different paths commute (each touches its own row; a move touches its two),
//! so within a *group* of writes to distinct paths the kinds may go in any order. A write
//! to a path the open group already holds starts the next group: groups go in the order
//! they were made, and the later write to a path wins, as if each had been sent alone.

use super::PgError;
use super::db::Db;
use crate::catalog::Inode;
use crate::device::Stamp;
use postgres::error::SqlState;
use postgres::types::ToSql;
use std::collections::HashSet;

/// A file's content as recorded: (size, mtime and ctime; its inode; digest).
pub(super) type Content<'a> = (Stamp, Inode, &'a [u8]);

/// One group: writes to distinct paths, in columns per kind of write.
#[derive(Default)]
struct Group {
    /// Files hashed for the first time.
    new: Hashed,
    /// Known files with new content.
    rehashed: Hashed,
    /// Digests imported from another tool (its name as the class).
    imported: Hashed,
    checked: Checked,
    /// Files found as recorded whose inode changed (a chmod, a rename): the new one.
    restamped: Inodes,
    /// Files recorded missing that are back.
    present: Vec<Vec<u8>>,
    missing: Paths,
    moved: Moved,
    /// Missing files that are new ones under another form of their name: `from` takes
    /// `to`'s place.
    renamed: Moved,
    /// The paths the group touches.
    paths: HashSet<Vec<u8>>,
}

#[derive(Default)]
struct Hashed {
    path: Vec<Vec<u8>>,
    size: Vec<i64>,
    mtime: Vec<i64>,
    inode: Inodes,
    digest: Vec<Vec<u8>>,
    now: Vec<i64>,
    class: Vec<&'static str>,
}

/// The inode's columns of rows: (device, inode), ctime, mode, owner, group.
#[derive(Default)]
struct Inodes {
    path: Vec<Vec<u8>>,
    dev: Vec<Option<i64>>,
    ino: Vec<Option<i64>>,
    ctime: Vec<Option<i64>>,
    mode: Vec<Option<i32>>,
    uid: Vec<Option<i64>>,
    gid: Vec<Option<i64>>,
}

impl Inodes {
    fn push(&mut self, path: &[u8], stamp: Stamp, inode: Inode) {
        self.path.push(path.to_vec());
        self.dev.push(inode.id.map(|(d, _)| d as i64));
        self.ino.push(inode.id.map(|(_, i)| i as i64));
        self.ctime.push(stamp.ctime_ns.map(|c| c as i64));
        let a = inode.access;
        self.mode.push(a.map(|a| a.stored_mode() as i32));
        self.uid.push(a.map(|a| i64::from(a.uid)));
        self.gid.push(a.map(|a| i64::from(a.gid)));
    }
}

#[derive(Default)]
struct Checked {
    path: Vec<Vec<u8>>,
    now: Vec<i64>,
    class: Vec<&'static str>,
    note: Vec<Option<String>>,
    /// The digest a corrupt file's content has now.
    found: Vec<Option<Vec<u8>>>,
}

#[derive(Default)]
struct Paths {
    path: Vec<Vec<u8>>,
    now: Vec<i64>,
}

#[derive(Default)]
struct Moved {
    from: Vec<Vec<u8>>,
    to: Vec<Vec<u8>>,
    now: Vec<i64>,
}

/// Writes not sent yet, in groups.
#[derive(Default)]
pub(super) struct Rows {
    /// Full groups, oldest first; the open group is the last.
    groups: Vec<Group>,
}

impl Hashed {
    fn push(
        &mut self,
        path: &[u8],
        (stamp, id, digest): Content<'_>,
        now: i64,
        class: &'static str,
    ) {
        self.path.push(path.to_vec());
        self.size.push(stamp.size as i64);
        self.mtime.push(stamp.mtime_ns as i64);
        self.inode.push(path, stamp, id);
        self.digest.push(digest.to_vec());
        self.now.push(now);
        self.class.push(class);
    }
}

impl Rows {
    /// Whether nothing waits to be sent.
    pub(super) fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Drops every write not sent.
    pub(super) fn clear(&mut self) {
        self.groups.clear();
    }

    /// Whether a write held here is to one of `paths`.
    pub(super) fn touches(&self, paths: &HashSet<Vec<u8>>) -> bool {
        self.groups.iter().any(|g| {
            let (small, large) = match g.paths.len() <= paths.len() {
                true => (&g.paths, paths),
                false => (paths, &g.paths),
            };
            small.iter().any(|p| large.contains(p))
        })
    }

    /// The paths the held writes are to.
    pub(super) fn paths(&self) -> HashSet<Vec<u8>> {
        let mut groups = self.groups.iter();
        let mut all = groups.next().map(|g| g.paths.clone()).unwrap_or_default();
        for g in groups {
            all.extend(g.paths.iter().cloned());
        }
        all
    }

    /// The group a write to `paths` goes in: the open one, unless it touches one of them.
    fn group(&mut self, paths: &[&[u8]]) -> &mut Group {
        let fits = self.groups.last().is_some_and(|g| paths.iter().all(|p| !g.paths.contains(*p)));
        if !fits {
            self.groups.push(Group::default());
        }
        let g = self.groups.last_mut().expect("an open group");
        g.paths.extend(paths.iter().map(|p| p.to_vec()));
        g
    }

    pub(super) fn new_file(&mut self, path: &[u8], content: Content<'_>, now: i64) {
        self.group(&[path]).new.push(path, content, now, "new");
    }

    pub(super) fn rehashed(
        &mut self,
        path: &[u8],
        content: Content<'_>,
        class: &'static str,
        now: i64,
    ) {
        self.group(&[path]).rehashed.push(path, content, now, class);
    }

    pub(super) fn imported(
        &mut self,
        path: &[u8],
        content: Content<'_>,
        source: &'static str,
        now: i64,
    ) {
        self.group(&[path]).imported.push(path, content, now, source);
    }

    pub(super) fn checked(
        &mut self,
        path: &[u8],
        class: &'static str,
        now: i64,
        (note, found): (Option<&str>, Option<&[u8]>),
    ) {
        let c = &mut self.group(&[path]).checked;
        c.path.push(path.to_vec());
        c.now.push(now);
        c.class.push(class);
        c.note.push(note.map(str::to_string));
        c.found.push(found.map(<[u8]>::to_vec));
    }

    pub(super) fn restamped(&mut self, path: &[u8], stamp: Stamp, inode: Inode) {
        self.group(&[path]).restamped.push(path, stamp, inode);
    }

    pub(super) fn present(&mut self, path: &[u8]) {
        self.group(&[path]).present.push(path.to_vec());
    }

    pub(super) fn missing(&mut self, path: &[u8], now: i64) {
        let m = &mut self.group(&[path]).missing;
        m.path.push(path.to_vec());
        m.now.push(now);
    }

    pub(super) fn moved(&mut self, from: &[u8], to: &[u8], now: i64) {
        let m = &mut self.group(&[from, to]).moved;
        m.from.push(from.to_vec());
        m.to.push(to.to_vec());
        m.now.push(now);
    }

    pub(super) fn renamed(&mut self, from: &[u8], to: &[u8], now: i64) {
        let m = &mut self.group(&[from, to]).renamed;
        m.from.push(from.to_vec());
        m.to.push(to.to_vec());
        m.now.push(now);
    }

    /// Sends every write on `db`, group by group, in its open transaction or, with
    /// `begin`, in one that statement begins (sent with the first group's savepoint when it
    /// has one: a round trip less); the writes stay held when a statement fails.
    pub(super) fn send(&mut self, db: &mut Db, begin: Option<&str>) -> Result<(), PgError> {
        let mut lead = begin;
        for g in &self.groups {
            g.send(db, &mut lead)?;
        }
        simple(db, &mut lead, None)?;
        self.groups.clear();
        Ok(())
    }

    /// Groups held (for tests).
    #[cfg(test)]
    fn group_count(&self) -> usize {
        self.groups.len()
    }
}

/// Files recorded for the first time, as rows of their own. The run recording them holds
/// the tree's lock and met no record of them, so no row has their paths: a plain insert,
/// which costs the server a tenth less than one that looks for a conflict first (50,000
/// rows: 0.51-0.52 s against 0.56-0.62 s, `bench/pg-insert-cost.sql`). Should a row be
/// there all the same, the insert fails at a savepoint and [`INSERT_OR_UPDATE`] takes its
/// place: the batch's other writes stand.
const INSERT_NEW: &str = "INSERT INTO fixity.files (tree, path, size, mtime_ns, dev, ino, digest,
         first_seen, last_verified, last_checked, last_result, missing_since, ctime_ns, mode,
         uid, gid)
     SELECT $1::integer, v.path, v.size, v.mtime_ns, v.dev, v.ino, v.digest,
         v.now, v.now, v.now, 'new', NULL, v.ctime_ns, v.mode, v.uid, v.gid
     FROM unnest($2::bytea[], $3::bigint[], $4::bigint[], $5::bigint[],
         $6::bigint[], $7::bytea[], $8::bigint[], $9::bigint[], $10::integer[], $11::bigint[],
         $12::bigint[])
         AS v(path, size, mtime_ns, dev, ino, digest, now, ctime_ns, mode, uid, gid)";

/// [`INSERT_NEW`] where a row of the path may be there: it is made new.
const INSERT_OR_UPDATE: &str =
    "INSERT INTO fixity.files (tree, path, size, mtime_ns, dev, ino, digest,
         first_seen, last_verified, last_checked, last_result, missing_since, ctime_ns, mode,
         uid, gid)
     SELECT $1::integer, v.path, v.size, v.mtime_ns, v.dev, v.ino, v.digest,
         v.now, v.now, v.now, 'new', NULL, v.ctime_ns, v.mode, v.uid, v.gid
     FROM unnest($2::bytea[], $3::bigint[], $4::bigint[], $5::bigint[],
         $6::bigint[], $7::bytea[], $8::bigint[], $9::bigint[], $10::integer[], $11::bigint[],
         $12::bigint[])
         AS v(path, size, mtime_ns, dev, ino, digest, now, ctime_ns, mode, uid, gid)
     ON CONFLICT (tree, path) DO UPDATE SET size = excluded.size,
        mtime_ns = excluded.mtime_ns, dev = excluded.dev, ino = excluded.ino,
        digest = excluded.digest, last_verified = excluded.last_verified,
        last_checked = excluded.last_checked, last_result = 'new',
        missing_since = NULL, moved_from = NULL, note = NULL, finding_since = NULL,
        found_digest = NULL, imported = NULL, ctime_ns = excluded.ctime_ns,
        mode = excluded.mode, uid = excluded.uid, gid = excluded.gid";

/// Sends `sql` (simple-query statements; none: only what `lead` holds) after the statement
/// `lead` holds, if any, in one message.
fn simple(db: &mut Db, lead: &mut Option<&str>, sql: Option<&str>) -> Result<(), PgError> {
    let text = match (lead.take(), sql) {
        (None, None) => return Ok(()),
        (Some(l), None) => l.to_string(),
        (None, Some(s)) => s.to_string(),
        (Some(l), Some(s)) => format!("{l}; {s}"),
    };
    db.client.batch_execute(&text).map_err(|e| db.err(e))
}

impl Group {
    /// Sends the group's writes, after the statement `lead` holds (the transaction's
    /// beginning), if any.
    fn send(&self, db: &mut Db, lead: &mut Option<&str>) -> Result<(), PgError> {
        let n = &self.new;
        if !n.path.is_empty() {
            let i = &n.inode;
            let params: [&(dyn ToSql + Sync); 11] = [
                &n.path, &n.size, &n.mtime, &i.dev, &i.ino, &n.digest, &n.now, &i.ctime, &i.mode,
                &i.uid, &i.gid,
            ];
            simple(db, lead, Some("SAVEPOINT fixity_new"))?;
            match db.try_execute(INSERT_NEW, &params)? {
                // The savepoint is let go with the transaction's commit: a round trip
                // less per batch (a later group's savepoint of the same name hides it).
                Ok(_) => {}
                Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                    let back = "ROLLBACK TO SAVEPOINT fixity_new; RELEASE SAVEPOINT fixity_new";
                    simple(db, &mut None, Some(back))?;
                    db.execute(INSERT_OR_UPDATE, &params)?;
                }
                Err(e) => return Err(db.err(e)),
            }
        }
        // The other writes go by the extended protocol: the beginning, if still held, on
        // its own.
        simple(db, lead, None)?;
        let r = &self.rehashed;
        if !r.path.is_empty() {
            db.execute(
                "UPDATE fixity.files f SET size = v.size, mtime_ns = v.mtime_ns, dev = v.dev,
                    ino = v.ino, digest = v.digest, last_verified = v.now, last_checked = v.now,
                    last_result = v.class, missing_since = NULL, moved_from = NULL, note = NULL,
                    finding_since = NULL, found_digest = NULL, imported = NULL,
                    ctime_ns = v.ctime_ns, mode = v.mode, uid = v.uid, gid = v.gid
                 FROM unnest($2::bytea[], $3::bigint[], $4::bigint[], $5::bigint[],
                     $6::bigint[], $7::bytea[], $8::bigint[], $9::text[], $10::bigint[],
                     $11::integer[], $12::bigint[], $13::bigint[])
                     AS v(path, size, mtime_ns, dev, ino, digest, now, class, ctime_ns, mode,
                         uid, gid)
                 WHERE f.tree = $1 AND f.path = v.path",
                &[
                    &r.path,
                    &r.size,
                    &r.mtime,
                    &r.inode.dev,
                    &r.inode.ino,
                    &r.digest,
                    &r.now,
                    &r.class,
                    &r.inode.ctime,
                    &r.inode.mode,
                    &r.inode.uid,
                    &r.inode.gid,
                ],
            )?;
        }
        let i = &self.imported;
        if !i.path.is_empty() {
            // Never verified by fixity: last verified 0, read first by a pass.
            db.execute(
                "INSERT INTO fixity.files (tree, path, size, mtime_ns, dev, ino, digest,
                     first_seen, last_verified, last_checked, last_result, missing_since,
                     imported, ctime_ns, mode, uid, gid)
                 SELECT $1::integer, v.path, v.size, v.mtime_ns, v.dev, v.ino, v.digest,
                     v.now, 0, 0, 'ok', NULL, v.source, v.ctime_ns, v.mode, v.uid, v.gid
                 FROM unnest($2::bytea[], $3::bigint[], $4::bigint[], $5::bigint[],
                     $6::bigint[], $7::bytea[], $8::bigint[], $9::text[], $10::bigint[],
                     $11::integer[], $12::bigint[], $13::bigint[])
                     AS v(path, size, mtime_ns, dev, ino, digest, now, source, ctime_ns, mode,
                         uid, gid)",
                &[
                    &i.path,
                    &i.size,
                    &i.mtime,
                    &i.inode.dev,
                    &i.inode.ino,
                    &i.digest,
                    &i.now,
                    &i.class,
                    &i.inode.ctime,
                    &i.inode.mode,
                    &i.inode.uid,
                    &i.inode.gid,
                ],
            )?;
        }
        let c = &self.checked;
        if !c.path.is_empty() {
            // A check keeps the digest; ok also sets the last-verified time; a finding
            // keeps when it was first found while its class stays.
            db.execute(
                "UPDATE fixity.files f SET last_checked = v.now, last_result = v.class,
                    note = v.note, moved_from = NULL,
                    last_verified = CASE WHEN v.class = 'ok' THEN v.now ELSE f.last_verified END,
                    finding_since = CASE WHEN v.class IN ('corrupt', 'unreadable', 'changed') THEN
                        CASE WHEN f.last_result = v.class THEN f.finding_since ELSE v.now END
                    END,
                    found_digest = v.found,
                    imported = CASE WHEN v.class = 'ok' THEN NULL ELSE f.imported END
                 FROM unnest($2::bytea[], $3::bigint[], $4::text[], $5::text[], $6::bytea[])
                     AS v(path, now, class, note, found)
                 WHERE f.tree = $1 AND f.path = v.path",
                &[&c.path, &c.now, &c.class, &c.note, &c.found],
            )?;
        }
        let t = &self.restamped;
        if !t.path.is_empty() {
            // Columns no index holds: a heap-only update where the page has room.
            db.execute(
                "UPDATE fixity.files f SET dev = v.dev, ino = v.ino, ctime_ns = v.ctime_ns,
                    mode = v.mode, uid = v.uid, gid = v.gid
                 FROM unnest($2::bytea[], $3::bigint[], $4::bigint[], $5::bigint[],
                     $6::integer[], $7::bigint[], $8::bigint[])
                     AS v(path, dev, ino, ctime_ns, mode, uid, gid)
                 WHERE f.tree = $1 AND f.path = v.path",
                &[&t.path, &t.dev, &t.ino, &t.ctime, &t.mode, &t.uid, &t.gid],
            )?;
        }
        if !self.present.is_empty() {
            db.execute(
                "UPDATE fixity.files SET missing_since = NULL, last_result = 'ok',
                    finding_since = NULL, found_digest = NULL
                 WHERE tree = $1 AND path = ANY($2::bytea[])",
                &[&self.present],
            )?;
        }
        let m = &self.missing;
        if !m.path.is_empty() {
            // Keeping when it first went missing.
            db.execute(
                "UPDATE fixity.files f SET missing_since = coalesce(f.missing_since, v.now),
                    last_checked = v.now, last_result = 'missing'
                 FROM unnest($2::bytea[], $3::bigint[]) AS v(path, now)
                 WHERE f.tree = $1 AND f.path = v.path",
                &[&m.path, &m.now],
            )?;
        }
        let mv = &self.moved;
        if !mv.from.is_empty() {
            // The file at `to` inherits the history of the one at `from`, which goes.
            db.execute(
                "UPDATE fixity.files f SET last_result = 'moved', moved_from = v.src,
                    last_checked = v.now, first_seen = least(f.first_seen, o.first_seen)
                 FROM unnest($2::bytea[], $3::bytea[], $4::bigint[]) AS v(src, dst, now)
                     LEFT JOIN fixity.files o ON o.tree = $1 AND o.path = v.src
                 WHERE f.tree = $1 AND f.path = v.dst",
                &[&mv.from, &mv.to, &mv.now],
            )?;
            db.execute(
                "DELETE FROM fixity.files WHERE tree = $1 AND path = ANY($2::bytea[])",
                &[&mv.from],
            )?;
        }
        let rn = &self.renamed;
        if !rn.from.is_empty() {
            // The row at `from` takes the place of the new one at `to`.
            db.execute(
                "DELETE FROM fixity.files WHERE tree = $1 AND path = ANY($2::bytea[])",
                &[&rn.to],
            )?;
            db.execute(
                "UPDATE fixity.files f SET path = v.dst, missing_since = NULL, moved_from = v.src,
                    last_result = 'moved', last_checked = v.now
                 FROM unnest($2::bytea[], $3::bytea[], $4::bigint[]) AS v(src, dst, now)
                 WHERE f.tree = $1 AND f.path = v.src",
                &[&rn.from, &rn.to, &rn.now],
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_write_to_a_path_starts_a_group_and_distinct_paths_share_one() {
        let stamp = Stamp::sized(1, 2);
        let mut rows = Rows::default();
        assert!(rows.is_empty());
        rows.new_file(b"a", (stamp, Inode::default(), b"d"), 5);
        rows.checked(b"b", "ok", 5, (None, None));
        rows.missing(b"c", 5);
        rows.present(b"e");
        assert_eq!(rows.group_count(), 1, "distinct paths");
        rows.moved(b"x", b"a", 5);
        assert_eq!(rows.group_count(), 2, "a moved after it was recorded new");
        rows.missing(b"y", 5);
        rows.present(b"x");
        assert_eq!(rows.group_count(), 3, "the move's source again");
        let held = rows.paths();
        let names = |n: &[&str]| n.iter().map(|p| p.as_bytes().to_vec()).collect::<HashSet<_>>();
        assert_eq!(held, names(&["a", "b", "c", "e", "x", "y"]));
        assert!(rows.touches(&names(&["zz", "y"])) && !rows.touches(&names(&["zz", "d"])));
        assert!(!rows.touches(&HashSet::new()));
        rows.clear();
        assert!(rows.is_empty());
        assert!(rows.paths().is_empty());
    }
}
