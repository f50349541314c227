//! The schema (in its own PostgreSQL schema, `fixity`) and its migrations, and the row
//! of a tree. Migrations run in one transaction under an advisory lock, so that two
//! first runs at once (two hosts scanning into a new database) do not race: the second
//! waits, then finds the schema made.

use super::{PgError, Target};
use crate::algo::{self, Algorithm};
use postgres::Client;
use postgres::types::Type;

/// The advisory-lock class (first key) of the schema's migrations; the second key is 0.
pub(super) const SCHEMA_LOCK: i32 = 0x6669_7800;
/// The advisory-lock class of the run locks; the second key is the tree's id.
pub(super) const RUN_LOCK: i32 = 0x6669_7801;

/// Schema steps, in order; step `i` takes the version in `fixity.meta` from `i` to
/// `i + 1`. Times are ms since the epoch, as in the SQLite catalog.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: the first schema.
    "CREATE TABLE fixity.trees (
         id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
         host text NOT NULL,
         root bytea NOT NULL,
         algorithm text NOT NULL,
         created bigint NOT NULL,
         pass_started bigint,
         last_pass_completed bigint,
         UNIQUE (host, root)
     );
     CREATE TABLE fixity.files (
         tree integer NOT NULL REFERENCES fixity.trees (id) ON DELETE CASCADE,
         path bytea NOT NULL,
         size bigint NOT NULL,
         mtime_ns bigint NOT NULL,
         dev bigint,
         ino bigint,
         digest bytea NOT NULL,
         first_seen bigint NOT NULL,
         last_verified bigint NOT NULL,
         last_checked bigint NOT NULL,
         last_result text NOT NULL,
         missing_since bigint,
         moved_from bytea,
         note text,
         PRIMARY KEY (tree, path)
     );
     CREATE INDEX files_by_verified ON fixity.files (tree, last_verified, path);
     CREATE INDEX files_by_digest ON fixity.files (tree, digest);
     CREATE INDEX files_by_checked ON fixity.files (tree, last_checked);
     CREATE TABLE fixity.runs (
         id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
         tree integer NOT NULL REFERENCES fixity.trees (id) ON DELETE CASCADE,
         command text NOT NULL,
         started bigint NOT NULL,
         finished bigint,
         complete boolean,
         summary text
     );
     CREATE INDEX runs_by_tree ON fixity.runs (tree, id);",
    // 2: a standing finding's history: when it was first found, and the digest the
    // content had when it was last found corrupt.
    "ALTER TABLE fixity.files ADD COLUMN finding_since bigint;
     ALTER TABLE fixity.files ADD COLUMN found_digest bytea;",
    // 3: digests imported from other tools (`fixity import`): the tool's name while the
    // file has not been read by fixity and found matching.
    "ALTER TABLE fixity.files ADD COLUMN imported text",
    // 4: remote comparisons (`verify --remote`): further digests of files, and each
    // comparison's outcome (see remote.rs).
    "CREATE TABLE fixity.digests (
         tree integer NOT NULL REFERENCES fixity.trees (id) ON DELETE CASCADE,
         path bytea NOT NULL,
         algo text NOT NULL,
         digest bytea NOT NULL,
         size bigint NOT NULL,
         mtime_ns bigint NOT NULL,
         PRIMARY KEY (tree, path, algo)
     );
     CREATE TABLE fixity.remote_checks (
         id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
         tree integer NOT NULL REFERENCES fixity.trees (id) ON DELETE CASCADE,
         remote text NOT NULL,
         started bigint NOT NULL,
         finished bigint NOT NULL,
         complete boolean NOT NULL,
         summary text NOT NULL
     );
     CREATE INDEX remote_checks_by_tree ON fixity.remote_checks (tree, remote, id);",
    // 5: the chain of proofs (tamper evidence, see proofs.rs): one entry per run, keyed by
    // (tree, seq). The run is not a foreign key: a deleted run leaves its entry for the
    // audit to find.
    "CREATE TABLE fixity.proofs (
         tree integer NOT NULL REFERENCES fixity.trees (id) ON DELETE CASCADE,
         seq bigint NOT NULL,
         run bigint NOT NULL,
         at bigint NOT NULL,
         files bigint NOT NULL,
         root bytea NOT NULL,
         prev bytea NOT NULL,
         head bytea NOT NULL,
         PRIMARY KEY (tree, seq)
     );",
    // 6: rows found ok stay out of the index by check time (it finds a run's findings):
    // a verify's update of an ok row makes one index entry fewer.
    "DROP INDEX fixity.files_by_checked;
     CREATE INDEX files_by_checked ON fixity.files (tree, last_checked)
         WHERE last_result <> 'ok';",
    // 7: no index by last verification: a verification pass reads a tree's rows in path
    // order from where its last slice stopped (`pass_after`), and a verify's update of a
    // row moves no index entry.
    "DROP INDEX fixity.files_by_verified;
     ALTER TABLE fixity.trees ADD COLUMN pass_after bytea;",
    // 8: a verify's update of a row found ok changes no indexed column, so the server
    // makes it a heap-only update (no new entry in any index) where the page has room:
    // the run's findings are found by `listed_at` (the check's time for a row neither ok
    // nor new, else NULL: unchanged by such an update, and by the first verify of a new
    // file) instead of by the check's time, and pages are filled to 70% (the table
    // rewritten once, by this step). A listing with the new files reads the tree's rows
    // by the primary key.
    "ALTER TABLE fixity.files SET (fillfactor = 70);
     ALTER TABLE fixity.files ADD COLUMN listed_at bigint
         GENERATED ALWAYS AS (CASE WHEN last_result NOT IN ('ok', 'new') THEN last_checked END)
         STORED;
     DROP INDEX fixity.files_by_checked;
     CREATE INDEX files_by_listed ON fixity.files (tree, listed_at, path)
         WHERE listed_at IS NOT NULL;",
    // 9: each file's inode change time (which tells an edit that kept its mtime from
    // bitrot) and who may read it (a file a repair rebuilds gets them back). NULL in rows
    // written before; no index holds them, so writing them keeps an update heap-only.
    "ALTER TABLE fixity.files ADD COLUMN ctime_ns bigint;
     ALTER TABLE fixity.files ADD COLUMN mode integer;
     ALTER TABLE fixity.files ADD COLUMN uid bigint;
     ALTER TABLE fixity.files ADD COLUMN gid bigint;",
];

/// The schema from which rows record their files' ctime and access.
pub(super) const INODE_SCHEMA: i64 = 9;

/// The first column of the last row of `sql` (statements without parameters, one or
/// several), as text (`None`: no row, or NULL), in one round trip: sent as a simple query,
/// where `query` would prepare it first (a round trip more, which costs each run its
/// latency to a distant server).
pub(super) fn one_text(
    client: &mut impl postgres::GenericClient,
    sql: &str,
) -> Result<Option<String>, postgres::Error> {
    let last = client.simple_query(sql)?.into_iter().rev().find_map(|m| match m {
        postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).map(str::to_string)),
        _ => None,
    });
    Ok(last.flatten())
}

/// The schema's version: `None` when the database has no fixity tables.
pub(super) fn version(client: &mut Client, t: &Target) -> Result<Option<i64>, PgError> {
    let q = |e: postgres::Error| t.query_error(&e);
    let exists = one_text(client, "SELECT to_regclass('fixity.meta') IS NOT NULL").map_err(q)?;
    if exists.as_deref() != Some("t") {
        return Ok(None);
    }
    let value = one_text(client, "SELECT value FROM fixity.meta WHERE key = 'schema_version'")
        .map_err(q)?;
    Ok(Some(value.and_then(|v| v.parse().ok()).unwrap_or(0)))
}

/// Refuses a schema from a newer fixity.
pub(super) fn check_version(found: i64, t: &Target) -> Result<(), PgError> {
    if found > MIGRATIONS.len() as i64 {
        return Err(PgError::TooNew { catalog: t.shown.clone(), found, known: MIGRATIONS.len() });
    }
    Ok(())
}

/// Brings the schema to the newest version, made from nothing if need be; `current` is
/// the version [`version`] just read (read again under the lock before any change).
pub(super) fn migrate(
    client: &mut Client,
    t: &Target,
    current: Option<i64>,
) -> Result<(), PgError> {
    if let Some(v) = current {
        check_version(v, t)?;
        if v == MIGRATIONS.len() as i64 {
            return Ok(());
        }
    }
    // Refused by the server (a host's or a monitor's role): said as such, with what to do.
    let q = |e: postgres::Error| t.refusal(&e, "create or migrate the catalog's schema");
    // Few round trips (a catalog across a network waits for each): the statements go in
    // simple-query messages of several, and the steps of the migration in one.
    let mut tx = client.transaction().map_err(q)?;
    // The schema only when there is none: creating one at all asks for a privilege on the
    // database, which the schema's owner of `fixity catalog init-roles` need not have.
    let schema = one_text(
        &mut tx,
        &format!(
            "SELECT pg_advisory_xact_lock({SCHEMA_LOCK}, 0);
         SELECT to_regnamespace('fixity') IS NOT NULL"
        ),
    )
    .map_err(q)?;
    let create =
        if schema.as_deref() == Some("t") { "" } else { "CREATE SCHEMA IF NOT EXISTS fixity;" };
    // Read again under the lock: another run may have migrated meanwhile.
    let value = one_text(
        &mut tx,
        &format!(
            "{create}
         CREATE TABLE IF NOT EXISTS fixity.meta (key text PRIMARY KEY, value text NOT NULL);
         SELECT coalesce((SELECT value FROM fixity.meta WHERE key = 'schema_version'), '0')"
        ),
    )
    .map_err(q)?;
    let found: i64 = value.and_then(|v| v.parse().ok()).unwrap_or(0);
    check_version(found, t)?;
    // With roles set up (`fixity catalog init-roles`), the tables a step made get the
    // grants and policies too.
    let steps: Vec<&str> = MIGRATIONS.iter().skip(found as usize).copied().collect();
    // Each step ends on a line of its own (a step's last line may be a comment).
    let roles = one_text(
        &mut tx,
        &format!("{}\n;\nSELECT to_regclass('fixity.host_roles') IS NOT NULL", steps.join("\n;\n")),
    )
    .map_err(q)?;
    if roles.as_deref() == Some("t") {
        tx.batch_execute(super::roles::POLICIES).map_err(q)?;
    }
    tx.query_typed(
        "INSERT INTO fixity.meta (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        &[(&MIGRATIONS.len().to_string(), Type::TEXT)],
    )
    .map_err(q)?;
    tx.commit().map_err(q)
}

/// A tree's row: its id and algorithm.
pub(super) struct TreeRow {
    pub(super) id: i32,
    pub(super) algo: &'static Algorithm,
}

/// The row of the tree `root` of `host`, made (recording `algo`, or the default
/// algorithm) when `create` and there is none; an existing tree keeps its algorithm and
/// refuses a different explicit one.
pub(super) fn tree_row(
    client: &mut Client,
    t: &Target,
    (host, root): (&str, &[u8]),
    create: bool,
    algo: Option<&'static Algorithm>,
) -> Result<TreeRow, PgError> {
    let q = |e: postgres::Error| t.query_error(&e);
    // Typed statements: one round trip each, none prepared (each is sent once). The row
    // asked for first: a tree already recorded (every run but its first) costs one.
    let select = |client: &mut Client| {
        client.query_typed(
            "SELECT id, algorithm FROM fixity.trees WHERE host = $1 AND root = $2",
            &[(&host, Type::TEXT), (&root, Type::BYTEA)],
        )
    };
    let mut rows = select(client).map_err(q)?;
    if create && rows.is_empty() {
        let refused =
            |e: postgres::Error| t.refusal(&e, &format!("record a tree of host {host:?}"));
        let name = algo.unwrap_or_else(algo::default_algorithm).name;
        client
            .query_typed(
                "INSERT INTO fixity.trees (host, root, algorithm, created) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (host, root) DO NOTHING",
                &[
                    (&host, Type::TEXT),
                    (&root, Type::BYTEA),
                    (&name, Type::TEXT),
                    (&crate::clock::now_ms(), Type::INT8),
                ],
            )
            .map_err(refused)?;
        rows = select(client).map_err(q)?;
    }
    let Some(row) = rows.into_iter().next() else {
        return Err(PgError::NotFound {
            catalog: t.shown.clone(),
            host: host.to_string(),
            tree: root.to_vec(),
        });
    };
    let name: String = row.get(1);
    let Some(stored) = algo::lookup(&name) else {
        return Err(PgError::UnknownAlgorithm { catalog: t.shown.clone(), algo: name });
    };
    if algo.is_some_and(|a| a.name != stored.name) {
        return Err(PgError::AlgorithmMismatch { catalog: t.shown.clone(), algo: stored.name });
    }
    Ok(TreeRow { id: row.get(0), algo: stored })
}
