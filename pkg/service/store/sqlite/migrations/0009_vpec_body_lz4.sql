-- 0009_vpec_body_lz4: PostgreSQL's 0009 compresses VPEC bodies with LZ4
-- (docs/BENCHMARKS.md). SQLite stores a body as it is and has nothing to
-- change; this version keeps the two stores' schema versions the same
-- (version N is the same schema on both, and an svc that knows N knows it
-- for both).
SELECT 1;
