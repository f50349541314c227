//! The PostgreSQL catalog as a [`Store`]: one tree's rows, the run lock as a session
//! advisory lock, batched writes on one connection, and the streams a run reads (records
//! in path order, stale records) on connections of their own.

use super::db::{Db, Recipe};
use super::writer::Conn;
use super::{PgError, PgSpec, Target, roles, schema};
use crate::algo::Algorithm;
use crate::catalog::store::{
    Found, History, OpenOptions, Pages, Pass, PassOrder, Record, Records, ReportFn, RunInfo, Store,
    StoreError, Summary,
};
use crate::catalog::stream::{StaleStream, Stream};
use crate::catalog::{CatalogError, Class, Extra, RemoteCheck};
use crate::clock::now_ms;
use crate::digest::Digest;
use crate::proof::{Entry, Identity, Link};
use postgres::types::Type;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// One tree's records in a PostgreSQL catalog.
pub(crate) struct PgStore {
    /// The writing connection and its open batch: a read on it sends the held writes
    /// first.
    conn: RefCell<Conn>,
    /// The connection's settings, the tree's id, its algorithm, and whether the schema
    /// predates imports: what a second connection needs.
    target: Target,
    tree: i32,
    algo: &'static Algorithm,
    before_imports: bool,
    before_inodes: bool,
    /// The schema version this open upgraded the catalog from (before ctimes were kept).
    upgraded_from: Option<i64>,
    /// The catalog as messages name it: the URL (password masked), host and tree.
    location: PathBuf,
    run_id: Option<i64>,
    /// The schema keeps a finding's history (version 2 on; an older schema is read as it
    /// is, by status, export and report).
    history_kept: bool,
    /// The schema's version (remote comparisons are kept from version 4 on).
    schema_version: i64,
    /// The statement that lets go of the run lock, when it is held.
    unlock: Option<&'static str>,
    /// The host and root the tree's heads name.
    identity: Identity,
}

impl Drop for PgStore {
    /// Lets go of the run lock before the connection closes: the server ends a closed
    /// session's locks only when it gets to it, and a run that follows at once would find
    /// the tree busy.
    fn drop(&mut self) {
        if let Some(sql) = self.unlock {
            let tree = self.tree;
            if let Ok(db) = self.conn.get_mut().db() {
                let key = [(&schema::RUN_LOCK as _, Type::INT4), (&tree as _, Type::INT4)];
                let _ = db.client.query_typed(sql, &key);
            }
        }
    }
}

fn pg(e: PgError) -> StoreError {
    StoreError::Catalog(CatalogError::Postgres(e))
}

impl PgStore {
    /// Opens the tree `spec` names as `how` says: to read it (nothing changes), or for a
    /// run under the tree's run lock (the schema and the tree's row made first, with
    /// `how.create`).
    pub(crate) fn open(spec: &PgSpec, how: &OpenOptions) -> Result<PgStore, PgError> {
        let target = Target::new(&spec.url)?;
        // The connection that found the tree, if one did (its schema version read).
        let (mut client, spare_version) = match super::connect::take_spare(&spec.url) {
            Some((client, version)) => (client, Some(version)),
            None => (target.connect()?, None),
        };
        let not_found = || PgError::NotFound {
            catalog: target.shown.clone(),
            host: spec.host.clone(),
            tree: spec.tree.clone(),
        };
        let writes = !how.read_only;
        // Schema 3 added the imported mark: an older schema, read where it is not migrated,
        // is read without it.
        let mut before_imports = false;
        let (mut before_inodes, mut upgraded_from) = (false, None);
        let found = match spare_version {
            Some(v) => Some(v),
            None => schema::version(&mut client, &target)?,
        };
        if found.is_some() {
            // Another host's tree is refused as such, before row-level security hides it.
            roles::check_host(&mut client, &target, &spec.host)?;
        }
        let version = match found {
            None if !(writes && how.create) => return Err(not_found()),
            Some(v) if !writes => {
                schema::check_version(v, &target)?;
                before_imports = v < 3;
                before_inodes = v < schema::INODE_SCHEMA;
                v
            }
            _ => {
                schema::migrate(&mut client, &target, found)?;
                upgraded_from = found.filter(|&v| v < schema::INODE_SCHEMA);
                schema::MIGRATIONS.len() as i64
            }
        };
        let key = (spec.host.as_str(), spec.tree.as_slice());
        let tree =
            schema::tree_row(&mut client, &target, key, writes && how.create, how.algorithm)?;
        if writes {
            // Shared by the parts of a plan, exclusive for a run over the whole tree.
            let (lock, try_lock) = match how.shared {
                true => (
                    "SELECT pg_advisory_lock_shared($1, $2)",
                    "SELECT pg_try_advisory_lock_shared($1, $2)",
                ),
                false => ("SELECT pg_advisory_lock($1, $2)", "SELECT pg_try_advisory_lock($1, $2)"),
            };
            // Typed: one round trip (the statement is sent once).
            let key: [(&(dyn postgres::types::ToSql + Sync), Type); 2] =
                [(&schema::RUN_LOCK, Type::INT4), (&tree.id, Type::INT4)];
            let locked: bool = if how.wait {
                client.query_typed(lock, &key).map(|_| true)
            } else {
                client.query_typed(try_lock, &key).map(|r| r.first().is_some_and(|r| r.get(0)))
            }
            .map_err(|e| target.query_error(&e))?;
            if !locked {
                return Err(PgError::Busy {
                    catalog: target.shown.clone(),
                    host: spec.host.clone(),
                    tree: spec.tree.clone(),
                });
            }
        }
        let location = PathBuf::from(format!(
            "{} {}:{}",
            target.shown,
            spec.host,
            String::from_utf8_lossy(&spec.tree)
        ));
        let mut db = Db::new(client, target.clone(), tree.id, tree.algo);
        db.before_imports = before_imports;
        db.before_inodes = before_inodes;
        Ok(PgStore {
            conn: RefCell::new(Conn::new(db, spec.batch_rows)),
            target,
            tree: tree.id,
            algo: tree.algo,
            before_imports,
            before_inodes,
            upgraded_from,
            location,
            run_id: None,
            history_kept: version >= 2,
            schema_version: version,
            unlock: writes.then_some(match how.shared {
                true => "SELECT pg_advisory_unlock_shared($1, $2)",
                false => "SELECT pg_advisory_unlock($1, $2)",
            }),
            identity: Identity { host: spec.host.clone(), tree: spec.tree.clone() },
        })
    }

    fn writer<T>(
        &mut self,
        op: impl FnOnce(&mut Conn) -> Result<T, PgError>,
    ) -> Result<T, StoreError> {
        op(self.conn.get_mut()).map_err(pg)
    }

    /// Runs `op` on the writing connection, after sending the writes held (in the open
    /// batch), so that it sees them.
    fn read<T>(&self, op: impl FnOnce(&mut Db) -> Result<T, PgError>) -> Result<T, StoreError> {
        let mut conn = self.conn.borrow_mut();
        conn.flush().map_err(pg)?;
        op(conn.db().map_err(pg)?).map_err(pg)
    }

    /// A connection of its own to the same tree, for a stream read by another thread.
    fn second(&self) -> Result<Db, StoreError> {
        let recipe = Recipe {
            target: self.target.clone(),
            tree: self.tree,
            algo: self.algo,
            before_imports: self.before_imports,
            before_inodes: self.before_inodes,
        };
        recipe.connect().map_err(pg)
    }

    /// Refuses a schema older than the chain (read where it is, not migrated).
    fn before_proofs(&self) -> Result<(), StoreError> {
        match self.schema_version < 5 {
            true => Err(CatalogError::BeforeProofs(self.location.display().to_string()).into()),
            false => Ok(()),
        }
    }

    /// Sets the tree's pass times: the start of the pass under way (`None`: none) and,
    /// with `completed`, when the last one ended. A pass that is not the one recorded
    /// starts from the beginning (no slice's cursor).
    fn set_pass(&mut self, started: Option<i64>, completed: Option<i64>) -> Result<(), StoreError> {
        self.read(|db| {
            db.execute(
                "UPDATE fixity.trees SET pass_started = $2,
                    last_pass_completed = coalesce($3, last_pass_completed),
                    pass_after = CASE WHEN pass_started = $2 THEN pass_after END
                 WHERE id = $1",
                &[&started, &completed],
            )
        })
        .map(drop)
    }
}

impl Store for PgStore {
    fn location(&self) -> &Path {
        &self.location
    }

    fn algorithm(&self) -> &'static Algorithm {
        self.algo
    }

    fn upgrade_note(&self) -> Option<String> {
        self.upgraded_from.map(|_| crate::catalog::INODE_NOTE.into())
    }

    fn remembers_gone(&self) -> bool {
        true
    }

    fn lists_findings(&self) -> bool {
        true
    }

    fn pass_order(&self) -> PassOrder {
        PassOrder::Stale
    }

    fn clock(&self) -> Result<i64, StoreError> {
        let last = self.read(|db| {
            db.once_one("SELECT coalesce(max(started), 0) FROM fixity.runs WHERE tree = $1", &[])
                .map(|r| r.get::<_, i64>(0))
        })?;
        Ok(now_ms().max(last + 1))
    }

    fn start_run(&mut self, command: &'static str, now: i64) -> Result<(), StoreError> {
        let summary = crate::catalog::actor().map(|by| crate::catalog::signed("{}", Some(by)));
        let id = self.read(|db| {
            db.once_one(
                "INSERT INTO fixity.runs (tree, command, started, summary) VALUES ($1, $2, $3, $4) RETURNING id",
                &[(&command, Type::TEXT), (&now, Type::INT8), (&summary, Type::TEXT)],
            )
            .map(|r| r.get::<_, i64>(0))
        })?;
        self.run_id = Some(id);
        Ok(())
    }

    fn finish_run(&mut self, complete: bool, summary: &str) -> Result<(), StoreError> {
        let Some(id) = self.run_id else { return Ok(()) };
        // The run's changes first: the chain's entry is of what they left.
        self.commit()?;
        let identity = self.identity.clone();
        let summary = crate::catalog::signed(summary, crate::catalog::actor());
        self.read(|db| db.finish_proved(id, (complete, &summary), &identity))
    }

    fn records(&self, from: Option<&[u8]>) -> Result<Box<dyn Records>, StoreError> {
        let mut db = self.second()?;
        Ok(Box::new(Stream::spawn(from, move |after, inclusive, limit| {
            db.by_path(after, inclusive, limit).map_err(pg)
        })))
    }

    fn lookup(&self, rel: &[u8]) -> Result<Option<Record>, StoreError> {
        self.read(|db| db.get(rel))
    }

    fn record_new(&mut self, rel: &[u8], found: &Found, now: i64) -> Result<(), StoreError> {
        let (stamp, id, digest) = (found.stamp, found.inode(), found.digest);
        self.writer(|w| w.insert(rel, (stamp, id, digest.as_bytes()), now))
    }

    fn record_imported(
        &mut self,
        rel: &[u8],
        found: &Found,
        source: &'static str,
        now: i64,
    ) -> Result<(), StoreError> {
        let (stamp, id, digest) = (found.stamp, found.inode(), found.digest);
        self.writer(|w| w.imported(rel, (stamp, id, digest.as_bytes()), source, now))
    }

    fn record_content(
        &mut self,
        rec: &Record,
        found: &Found,
        class: Class,
        now: i64,
    ) -> Result<(), StoreError> {
        let (stamp, id, digest) = (found.stamp, found.inode(), found.digest);
        self.writer(|w| w.rehashed(&rec.path, (stamp, id, digest.as_bytes()), class, now))
    }

    fn record_check(
        &mut self,
        rec: &Record,
        class: Class,
        found: Option<&Found>,
        note: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError> {
        // The digest stays: a corrupt file's record keeps the good content's, and what
        // it holds now goes beside it.
        if class == Class::Ok
            && let Some(f) = found
            && rec.inode_moved(f)
        {
            self.writer(|w| w.restamped(&rec.path, f.stamp, f.inode()))?;
        }
        let now_holds = found.filter(|_| class.keeps_found()).map(|f| f.digest);
        let now_holds = now_holds.as_ref().map(Digest::as_bytes);
        self.writer(|w| w.checked(&rec.path, class, now, (note, now_holds)))
    }

    fn record_missing(&mut self, rel: &[u8], now: i64) -> Result<(), StoreError> {
        self.writer(|w| w.missing(rel, now))
    }

    fn record_present(&mut self, rel: &[u8]) -> Result<(), StoreError> {
        self.writer(|w| w.present(rel))
    }

    fn record_moved(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<(), StoreError> {
        self.writer(|w| w.moved(from, to, now))
    }

    fn record_renamed(&mut self, from: &[u8], to: &[u8], now: i64) -> Result<(), StoreError> {
        self.writer(|w| w.renamed(from, to, now))
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.writer(|w| w.commit())
    }

    fn uncommitted(&self) -> bool {
        self.conn.borrow().uncommitted()
    }

    fn last_batch(&self) -> u64 {
        self.conn.borrow().batches().last()
    }

    fn committed_below(&self) -> u64 {
        self.conn.borrow().batches().committed_below()
    }

    fn committed(&self, batch: u64) -> bool {
        self.conn.borrow().batches().committed(batch)
    }

    fn abandon(&mut self) {
        let _ = self.writer(|w| {
            w.abandon();
            Ok(())
        });
    }

    fn missing_page(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<Record>, StoreError> {
        self.read(|db| db.missing(after, limit))
    }

    fn new_since_a_loss(&self) -> Result<bool, StoreError> {
        self.read(|db| db.new_since_a_loss())
    }

    fn move_candidates(
        &self,
        size: u64,
        digest: &Digest,
        since: i64,
    ) -> Result<Vec<Record>, StoreError> {
        self.read(|db| db.move_candidates(size, digest.as_bytes(), since))
    }

    fn presence_page(
        &self,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, bool)>, StoreError> {
        self.read(|db| db.presence(after, limit))
    }

    fn pass(&self, sliced: bool, now: i64) -> Result<Pass, StoreError> {
        let stored = self.read(|db| {
            let (started, _) = db.pass_times()?;
            match started {
                Some(since) => Ok(Some((since, db.pass_after()?))),
                None => Ok(None),
            }
        })?;
        Ok(Pass::joined(stored, sliced, now))
    }

    fn pass_begun(&mut self, since: i64) -> Result<(), StoreError> {
        self.set_pass(Some(since), None)
    }

    fn stale(&self, since: i64, from: Option<&[u8]>) -> Result<Box<dyn Pages>, StoreError> {
        let mut db = self.second()?;
        Ok(Box::new(StaleStream::spawn(from, move |after, upto, limit| {
            db.stale(since, (after, upto), limit).map_err(pg)
        })))
    }

    fn stale_count(&self, since: i64) -> Result<(u64, u64), StoreError> {
        self.read(|db| db.stale_count(since))
    }

    fn pass_end(&mut self, resume_after: Option<&[u8]>, _now: i64) -> Result<(), StoreError> {
        if let Some(after) = resume_after {
            // Unfinished: the pass's start stays recorded, and with it what is left; the
            // next slice goes on after the last file this one took.
            return self
                .read(|db| {
                    db.execute("UPDATE fixity.trees SET pass_after = $2 WHERE id = $1", &[&after])
                })
                .map(drop);
        }
        self.set_pass(None, Some(now_ms()))
    }

    fn findings(
        &self,
        run_start: i64,
        new: bool,
        each: &mut ReportFn<'_>,
    ) -> Result<(), StoreError> {
        // In pages by path, so a report of any size costs bounded memory: without the new
        // files by the index of findings, with them by the primary key (new files are
        // not in that index; after a first scan they are every row).
        let sql = match new {
            false => {
                "SELECT path, last_result, moved_from, note FROM fixity.files
                 WHERE tree = $1 AND listed_at = $2 AND path > $3
                 ORDER BY path LIMIT 4096"
            }
            true => {
                "SELECT path, last_result, moved_from, note FROM fixity.files
                 WHERE tree = $1 AND last_checked = $2 AND last_result <> 'ok' AND path > $3
                 ORDER BY path LIMIT 4096"
            }
        };
        let mut after: Vec<u8> = Vec::new();
        loop {
            let rows =
                self.read(|db| db.once(sql, &[(&run_start, Type::INT8), (&after, Type::BYTEA)]))?;
            let Some(last) = rows.last() else { return Ok(()) };
            after = last.get(0);
            for r in &rows {
                let Some(class) = Class::from_name(r.get(1)) else { continue };
                let from: Option<&[u8]> = r.get(2);
                each(r.get(0), class, from, r.get(3));
            }
        }
    }

    fn summary(&self, now: i64) -> Result<Summary, StoreError> {
        self.read(|db| db.summary(now))
    }

    fn records_page(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<Record>, StoreError> {
        self.read(|db| db.by_path(after, false, limit))
    }

    fn count_under(&self, rel: &[u8]) -> Result<(u64, u64), StoreError> {
        self.read(|db| db.count_under(rel))
    }

    fn forget_missing(&mut self, rel: &[u8]) -> Result<usize, StoreError> {
        self.writer(|w| w.forget_missing(rel))
    }

    fn history_page(
        &self,
        after: Option<&[u8]>,
        limit: usize,
        standing: bool,
    ) -> Result<Vec<History>, StoreError> {
        let kept = self.history_kept;
        self.read(|db| db.history(after, limit, standing, kept))
    }

    fn run_history(&self, limit: usize) -> Result<Vec<RunInfo>, StoreError> {
        self.read(|db| db.runs(limit))
    }

    fn extras(&self, rel: &[u8]) -> Result<Vec<Extra>, StoreError> {
        self.read(|db| db.extras(rel))
    }

    fn keep_extras(&mut self, rel: &[u8], extras: &[Extra]) -> Result<(), StoreError> {
        self.read(|db| db.keep_extras(rel, extras))
    }

    fn record_remote_check(&mut self, check: &RemoteCheck) -> Result<(), StoreError> {
        self.read(|db| db.remote_check(check))?;
        self.commit()
    }

    fn remote_checks(&self) -> Result<Vec<RemoteCheck>, StoreError> {
        if self.schema_version < 4 {
            return Ok(Vec::new());
        }
        self.read(|db| db.remote_checks())
    }

    fn proof_identity(&self) -> Identity {
        self.identity.clone()
    }

    fn proof_page(&self, after: u64, limit: usize) -> Result<Vec<Link>, StoreError> {
        self.before_proofs()?;
        self.read(|db| db.proof_page(after, limit))
    }

    fn last_proof(&self) -> Result<Option<Entry>, StoreError> {
        self.before_proofs()?;
        self.read(|db| db.last_proof())
    }
}
