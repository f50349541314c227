-- The server's per-row cost of a first scan's insert (rows.rs): 50,000 rows like D3's, as
-- one statement over arrays with ON CONFLICT (before), plainly (now), plainly without the
-- foreign key to fixity.trees, plainly without the digest index, and by COPY; every change
-- rolled back, each twice. psql -f on a catalog with a tree 1 (any scan made one; issue 27).
\set ON_ERROR_STOP 1
CREATE TEMP TABLE src AS
SELECT 1 AS tree, convert_to('cost/dir' || (g / 100) || '/file' || g, 'UTF8') AS path,
       4096::bigint AS size, g::bigint AS mtime_ns, 1::bigint AS dev, g::bigint AS ino,
       sha256(int8send(g)) AS digest, 5::bigint AS now, 5::bigint AS verified,
       5::bigint AS checked, 'new'::text AS result
FROM generate_series(1, 50000) g;
\copy src TO '/tmp/fixity-insert-cost.copy' (FORMAT binary)
CREATE TEMP TABLE arr AS
SELECT array_agg(path) p, array_agg(size) s, array_agg(mtime_ns) m, array_agg(dev) d,
       array_agg(ino) i, array_agg(digest) g, array_agg(now) n FROM src;
PREPARE plain AS
INSERT INTO fixity.files (tree, path, size, mtime_ns, dev, ino, digest, first_seen,
    last_verified, last_checked, last_result, missing_since)
SELECT 1, v.path, v.size, v.mtime_ns, v.dev, v.ino, v.digest, v.now, v.now, v.now, 'new', NULL
FROM arr, unnest(arr.p, arr.s, arr.m, arr.d, arr.i, arr.g, arr.n)
     AS v(path, size, mtime_ns, dev, ino, digest, now);
PREPARE upsert AS
INSERT INTO fixity.files (tree, path, size, mtime_ns, dev, ino, digest, first_seen,
    last_verified, last_checked, last_result, missing_since)
SELECT 1, v.path, v.size, v.mtime_ns, v.dev, v.ino, v.digest, v.now, v.now, v.now, 'new', NULL
FROM arr, unnest(arr.p, arr.s, arr.m, arr.d, arr.i, arr.g, arr.n)
     AS v(path, size, mtime_ns, dev, ino, digest, now)
ON CONFLICT (tree, path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,
    dev = excluded.dev, ino = excluded.ino, digest = excluded.digest,
    last_verified = excluded.last_verified, last_checked = excluded.last_checked,
    last_result = 'new', missing_since = NULL, moved_from = NULL, note = NULL,
    finding_since = NULL, found_digest = NULL, imported = NULL;
\timing on
\echo == ON CONFLICT
BEGIN; EXECUTE upsert; ROLLBACK;
BEGIN; EXECUTE upsert; ROLLBACK;
\echo == plain
BEGIN; EXECUTE plain; ROLLBACK;
BEGIN; EXECUTE plain; ROLLBACK;
\echo == plain, no foreign key
BEGIN; ALTER TABLE fixity.files DROP CONSTRAINT files_tree_fkey; EXECUTE plain; ROLLBACK;
BEGIN; ALTER TABLE fixity.files DROP CONSTRAINT files_tree_fkey; EXECUTE plain; ROLLBACK;
\echo == plain, no digest index
BEGIN; DROP INDEX fixity.files_by_digest; EXECUTE plain; ROLLBACK;
BEGIN; DROP INDEX fixity.files_by_digest; EXECUTE plain; ROLLBACK;
\echo == COPY (binary)
BEGIN; \copy fixity.files (tree, path, size, mtime_ns, dev, ino, digest, first_seen, last_verified, last_checked, last_result) FROM '/tmp/fixity-insert-cost.copy' (FORMAT binary)
ROLLBACK;
BEGIN; \copy fixity.files (tree, path, size, mtime_ns, dev, ino, digest, first_seen, last_verified, last_checked, last_result) FROM '/tmp/fixity-insert-cost.copy' (FORMAT binary)
ROLLBACK;
