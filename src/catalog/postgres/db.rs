//! One connection to the catalog for one tree: its statements prepared once, and the
//! reads a run makes (records in path order, stale records, missing files, moves).

use super::{PgError, Target};
use crate::algo::Algorithm;
use crate::catalog::store::Record;
use crate::catalog::{Class, below};
use crate::digest::Digest;
use postgres::types::{ToSql, Type};
use postgres::{Client, Row, Statement};
use std::collections::HashMap;

/// A statement selecting the columns [`Db::record`] reads (in its order), then `rest`.
macro_rules! select_records {
    ($rest:literal) => {
        concat!(
            "SELECT path, size, mtime_ns, digest, last_verified, last_result, missing_since, \
             imported, ctime_ns, mode, uid, gid ",
            $rest
        )
    };
}

/// A connection, the tree it works on, and its prepared statements.
pub(super) struct Db {
    pub(super) client: Client,
    pub(super) target: Target,
    /// The tree's id: the first parameter of every statement on its rows.
    pub(super) tree: i32,
    pub(super) algo: &'static Algorithm,
    statements: HashMap<&'static str, Statement>,
    /// The schema predates imports (version 1, read where it is not migrated: `status`,
    /// `export`): reads see no imported digest.
    pub(super) before_imports: bool,
    /// The schema predates files' ctimes and access (before version 9, read where it is
    /// not migrated): reads see none.
    pub(super) before_inodes: bool,
}

/// The lowest key of a page read from the start: no path is empty.
const START: &[u8] = b"";

/// What a connection to a tree is made of: another like it is made from this.
#[derive(Clone)]
pub(super) struct Recipe {
    pub(super) target: Target,
    pub(super) tree: i32,
    pub(super) algo: &'static Algorithm,
    pub(super) before_imports: bool,
    pub(super) before_inodes: bool,
}

impl Recipe {
    /// A new connection to the catalog, for the same tree.
    pub(super) fn connect(&self) -> Result<Db, PgError> {
        let mut db = Db::new(self.target.connect()?, self.target.clone(), self.tree, self.algo);
        db.before_imports = self.before_imports;
        db.before_inodes = self.before_inodes;
        Ok(db)
    }
}

impl Db {
    pub(super) fn new(client: Client, target: Target, tree: i32, algo: &'static Algorithm) -> Db {
        let statements = HashMap::new();
        Db { client, target, tree, algo, statements, before_imports: false, before_inodes: false }
    }

    /// What makes another connection like this one.
    pub(super) fn recipe(&self) -> Recipe {
        Recipe {
            target: self.target.clone(),
            tree: self.tree,
            algo: self.algo,
            before_imports: self.before_imports,
            before_inodes: self.before_inodes,
        }
    }

    /// A statement's error as the catalog's.
    pub(super) fn err(&self, e: postgres::Error) -> PgError {
        self.target.query_error(&e)
    }

    /// `sql` as this schema takes it.
    fn text(&self, sql: &'static str) -> std::borrow::Cow<'static, str> {
        // Schema 1 has no `imported` column: only reads run on it, and they take none.
        let mut text = std::borrow::Cow::Borrowed(sql);
        // Before schema 9, no inode columns: likewise read as none.
        if self.before_inodes {
            let none = "NULL::bigint, NULL::integer, NULL::bigint, NULL::bigint ";
            text = std::borrow::Cow::Owned(text.replace("ctime_ns, mode, uid, gid ", none));
        }
        if self.before_imports {
            text = std::borrow::Cow::Owned(text.replace("imported", "NULL::text"));
        }
        text
    }

    fn statement(&mut self, sql: &'static str) -> Result<Statement, PgError> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(&self.text(sql)).map_err(|e| self.target.query_error(&e))?;
        self.statements.insert(sql, s.clone());
        Ok(s)
    }

    /// Runs `sql` with `params` of the types given, the tree as `$1`, in one round trip:
    /// no statement prepared first (a prepared one costs a round trip more, worth it only
    /// for statements a run sends many times). For the statements of a run's start and end.
    pub(super) fn once(
        &mut self,
        sql: &'static str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Vec<Row>, PgError> {
        let tree = self.tree;
        let all: Vec<(&(dyn ToSql + Sync), Type)> =
            std::iter::once((&tree as &(dyn ToSql + Sync), Type::INT4))
                .chain(params.iter().cloned())
                .collect();
        let text = self.text(sql);
        self.client.query_typed(&text, &all).map_err(|e| self.target.query_error(&e))
    }

    /// Runs `sql` (prepared once) with `params`; the tree is `$1`.
    pub(super) fn query(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, PgError> {
        let st = self.statement(sql)?;
        let tree = self.tree;
        let all: Vec<&(dyn ToSql + Sync)> =
            std::iter::once(&tree as &(dyn ToSql + Sync)).chain(params.iter().copied()).collect();
        self.client.query(&st, &all).map_err(|e| self.target.query_error(&e))
    }

    /// Like [`Db::query`], for a statement that returns one row.
    pub(super) fn one(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, PgError> {
        let rows = self.query(sql, params)?;
        self.single(sql, rows)
    }

    /// Like [`Db::once`], for a statement that returns one row.
    pub(super) fn once_one(
        &mut self,
        sql: &'static str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Row, PgError> {
        let rows = self.once(sql, params)?;
        self.single(sql, rows)
    }

    /// The one row of `rows`, else the catalog's error naming `sql`.
    fn single(&self, sql: &str, mut rows: Vec<Row>) -> Result<Row, PgError> {
        match rows.pop() {
            Some(r) if rows.is_empty() => Ok(r),
            _ => Err(PgError::Query {
                catalog: self.target.shown.clone(),
                cause: format!("expected one row from {sql:?}"),
            }),
        }
    }

    /// Runs `sql` (prepared once) with `params`, the tree as `$1`; returns the rows changed.
    pub(super) fn execute(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, PgError> {
        self.try_execute(sql, params)?.map_err(|e| self.target.query_error(&e))
    }

    /// As [`Db::execute`], with the statement's own error as the server gave it, for a
    /// caller that tells one error from another (a failure to prepare it is the catalog's).
    pub(super) fn try_execute(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Result<u64, postgres::Error>, PgError> {
        let st = self.statement(sql)?;
        let tree = self.tree;
        let all: Vec<&(dyn ToSql + Sync)> =
            std::iter::once(&tree as &(dyn ToSql + Sync)).chain(params.iter().copied()).collect();
        Ok(self.client.execute(&st, &all))
    }

    /// A record from a row of the columns `select_records!` names.
    pub(super) fn record(&self, r: &Row) -> Record {
        let result: &str = r.get(5);
        Record {
            path: r.get(0),
            algo: self.algo,
            digest: Digest::new(r.get::<_, &[u8]>(3)),
            size: Some(r.get::<_, i64>(1) as u64),
            mtime_ns: i128::from(r.get::<_, i64>(2)),
            precision: 9,
            last_result: Class::from_name(result).unwrap_or(Class::Ok),
            missing_since: r.get(6),
            last_verified: r.get(4),
            foreign: false,
            imported: r.get::<_, Option<&str>>(7).is_some(),
            ctime_ns: r.get::<_, Option<i64>>(8).map(i128::from),
            access: match (
                r.get::<_, Option<i32>>(9),
                r.get::<_, Option<i64>>(10),
                r.get::<_, Option<i64>>(11),
            ) {
                (Some(mode), Some(uid), Some(gid)) => Some(crate::device::Access::from_stored(
                    mode as u32,
                    u32::try_from(uid).unwrap_or(u32::MAX),
                    u32::try_from(gid).unwrap_or(u32::MAX),
                )),
                _ => None,
            },
        }
    }

    fn records(&self, rows: Vec<Row>) -> Vec<Record> {
        rows.iter().map(|r| self.record(r)).collect()
    }

    /// Up to `limit` records of the rows `sql` selects (`$2`: the path they follow,
    /// `$3`: the limit), in path order. Typed, not prepared: a run reads a few large pages
    /// (`stream::Growing`), each one round trip, with none spent on a prepare.
    fn records_after(
        &mut self,
        sql: &'static str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Record>, PgError> {
        let (after, limit) = (after.unwrap_or(START), limit as i64);
        let rows = self.once(sql, &[(&after, Type::BYTEA), (&limit, Type::INT8)])?;
        Ok(self.records(rows))
    }

    /// Up to `limit` records (present or missing) after `after` (or from it, when
    /// `inclusive`), in byte order of their paths: the order a sorted walk visits them.
    pub(super) fn by_path(
        &mut self,
        after: Option<&[u8]>,
        inclusive: bool,
        limit: usize,
    ) -> Result<Vec<Record>, PgError> {
        let sql = match inclusive {
            true => select_records!(
                "FROM fixity.files WHERE tree = $1 AND path >= $2 ORDER BY path LIMIT $3"
            ),
            false => select_records!(
                "FROM fixity.files WHERE tree = $1 AND path > $2 ORDER BY path LIMIT $3"
            ),
        };
        self.records_after(sql, after, limit)
    }

    /// Up to `limit` present records not looked at since `pass_start`, in path order,
    /// after the path `after` (from the start with `None`) and not after `upto` (to the
    /// end with `None`): the primary key read in its order from where the last page ended.
    pub(super) fn stale(
        &mut self,
        pass_start: i64,
        (after, upto): (Option<&[u8]>, Option<&[u8]>),
        limit: usize,
    ) -> Result<Vec<Record>, PgError> {
        let sql = match upto {
            None => select_records!(
                "FROM fixity.files
             WHERE tree = $1 AND path > $2 AND missing_since IS NULL AND last_checked < $3
             ORDER BY path LIMIT $4"
            ),
            Some(_) => select_records!(
                "FROM fixity.files
             WHERE tree = $1 AND path > $2 AND path <= $5 AND missing_since IS NULL
               AND last_checked < $3
             ORDER BY path LIMIT $4"
            ),
        };
        let (after, limit) = (after.unwrap_or(START), limit as i64);
        let (a, p, l) =
            ((&after as _, Type::BYTEA), (&pass_start as _, Type::INT8), (&limit as _, Type::INT8));
        let rows = match upto {
            None => self.once(sql, &[a, p, l])?,
            Some(upto) => self.once(sql, &[a, p, l, (&upto, Type::BYTEA)])?,
        };
        Ok(self.records(rows))
    }

    /// Up to `limit` records of missing files after `after`, in path order.
    pub(super) fn missing(
        &mut self,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Record>, PgError> {
        self.records_after(
            select_records!(
                "FROM fixity.files WHERE tree = $1 AND missing_since IS NOT NULL AND path > $2
                 ORDER BY path LIMIT $3"
            ),
            after,
            limit,
        )
    }

    /// Up to `limit` (path, missing) pairs after `after`, in path order.
    pub(super) fn presence(
        &mut self,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, bool)>, PgError> {
        let rows = self.query(
            "SELECT path, missing_since IS NOT NULL FROM fixity.files
             WHERE tree = $1 AND path > $2 ORDER BY path LIMIT $3",
            &[&after.unwrap_or(START), &(limit as i64)],
        )?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// One record by path.
    pub(super) fn get(&mut self, path: &[u8]) -> Result<Option<Record>, PgError> {
        let rows = self
            .query(select_records!("FROM fixity.files WHERE tree = $1 AND path = $2"), &[&path])?;
        Ok(rows.first().map(|r| self.record(r)))
    }

    /// Present files recorded as new since `since` with this size and digest.
    pub(super) fn move_candidates(
        &mut self,
        size: u64,
        digest: &[u8],
        since: i64,
    ) -> Result<Vec<Record>, PgError> {
        let rows = self.query(
            select_records!(
                "FROM fixity.files WHERE tree = $1 AND digest = $2 AND size = $3
               AND missing_since IS NULL AND last_result = 'new' AND first_seen >= $4
             ORDER BY path"
            ),
            &[&digest, &(size as i64), &since],
        )?;
        Ok(self.records(rows))
    }

    /// Whether any present file recorded as new is no older than the oldest loss.
    pub(super) fn new_since_a_loss(&mut self) -> Result<bool, PgError> {
        let r = self.one(
            "SELECT EXISTS (SELECT 1 FROM fixity.files WHERE tree = $1 AND last_result = 'new'
               AND missing_since IS NULL
               AND first_seen >= (SELECT min(missing_since) FROM fixity.files WHERE tree = $1))",
            &[],
        )?;
        Ok(r.get(0))
    }

    /// Present files (and bytes) not looked at since `pass_start`.
    pub(super) fn stale_count(&mut self, pass_start: i64) -> Result<(u64, u64), PgError> {
        let r = self.one(
            "SELECT count(*), coalesce(sum(size), 0)::bigint FROM fixity.files
             WHERE tree = $1 AND missing_since IS NULL AND last_checked < $2",
            &[&pass_start],
        )?;
        Ok((r.get::<_, i64>(0) as u64, r.get::<_, i64>(1) as u64))
    }

    /// Recorded files at `rel` or below it (the whole tree for an empty `rel`): (present,
    /// missing).
    pub(super) fn count_under(&mut self, rel: &[u8]) -> Result<(u64, u64), PgError> {
        let (lo, hi) = below(rel);
        let r = self.one(
            "SELECT count(*) FILTER (WHERE missing_since IS NULL),
                    count(*) FILTER (WHERE missing_since IS NOT NULL)
             FROM fixity.files
             WHERE tree = $1 AND ($2::bytea IS NULL OR path = $3 OR (path > $2 AND path < $4))",
            &[&lo, &rel, &hi],
        )?;
        Ok((r.get::<_, i64>(0) as u64, r.get::<_, i64>(1) as u64))
    }
}
