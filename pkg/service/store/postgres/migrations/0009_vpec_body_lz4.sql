-- 0009_vpec_body_lz4: a VPEC's body is compressed with LZ4 instead of
-- pglz when it is stored out of line (TOAST). A 10,000-record VPEC
-- (5 MB) took 130-180 ms to INSERT with pglz and 30-40 ms with LZ4 on
-- the same server (docs/BENCHMARKS.md, "Closing a 10,000-record run: sequence and body
-- only, details undecoded, LZ4").
-- Rows stored before keep their compression; they read back the same.
-- A server without LZ4 (built without it, or older than PostgreSQL 14)
-- keeps pglz: the statement is tried, and its failure changes nothing.

DO $$
BEGIN
	EXECUTE 'ALTER TABLE vpecs ALTER COLUMN body SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN
	RAISE NOTICE 'vpecs.body keeps pglz compression: %', SQLERRM;
END
$$;
