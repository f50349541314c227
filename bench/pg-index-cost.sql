-- The server's per-row cost of a verify's batched UPDATE (rows.rs, 4096 rows), with the
-- tree's three indexes (schema 8) and without the secondary ones, hash join and nested loop; every
-- change rolled back. psql -f on a catalog holding D3 as tree 1 (issue 27).
\set ON_ERROR_STOP 1
CREATE TEMP TABLE p AS SELECT array_agg(path ORDER BY path) a FROM fixity.files WHERE tree = 1;
PREPARE upd(int) AS
UPDATE fixity.files f SET last_checked = v.now, last_result = v.class, note = v.note, moved_from = NULL,
    last_verified = CASE WHEN v.class = 'ok' THEN v.now ELSE f.last_verified END,
    finding_since = CASE WHEN v.class IN ('corrupt', 'unreadable') THEN
        CASE WHEN f.last_result = v.class THEN f.finding_since ELSE v.now END END,
    found_digest = v.found, imported = CASE WHEN v.class = 'ok' THEN NULL ELSE f.imported END
FROM unnest((SELECT a[$1:$1 + 4095] FROM p),
            array_fill(9999999999999::bigint, ARRAY[4096]), array_fill('ok'::text, ARRAY[4096]),
            array_fill(NULL::text, ARRAY[4096]), array_fill(NULL::bytea, ARRAY[4096]))
     AS v(path, now, class, note, found)
WHERE f.tree = 1 AND f.path = v.path;
\timing on
\echo == hash join, all indexes
BEGIN; EXECUTE upd(4097); ROLLBACK;
BEGIN; EXECUTE upd(8193); ROLLBACK;
BEGIN; EXECUTE upd(12289); ROLLBACK;
\echo == nested loop, all indexes
BEGIN; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; EXECUTE upd(16385); ROLLBACK;
BEGIN; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; EXECUTE upd(20481); ROLLBACK;
BEGIN; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; EXECUTE upd(24577); ROLLBACK;
BEGIN; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; EXPLAIN (ANALYZE, BUFFERS, WAL, COSTS OFF) EXECUTE upd(28673); ROLLBACK;
\echo == nested loop, primary key only
BEGIN; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; DROP INDEX fixity.files_by_digest, fixity.files_by_listed; EXECUTE upd(32769); ROLLBACK;
BEGIN; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; DROP INDEX fixity.files_by_digest, fixity.files_by_listed; EXECUTE upd(36865); ROLLBACK;
BEGIN; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; DROP INDEX fixity.files_by_digest, fixity.files_by_listed; EXPLAIN (ANALYZE, BUFFERS, WAL, COSTS OFF) EXECUTE upd(40961); ROLLBACK;
