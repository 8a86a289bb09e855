-- 0010_records_arrival_order: records are stored in the order they arrive.
--
-- Until 0009, records was a WITHOUT ROWID table keyed by (run_id, sequence):
-- a record's whole row (its canonical body, about 650 bytes, and its ids)
-- went into its run's leaf of that B-tree, and its (run_id, record_id) entry
-- into its run's leaf of the unique index. Under many runs at once, every
-- record of a commit dirtied two leaves of its own, and every fourth split
-- one: 5.3 pages written to the WAL per record (docs/BENCHMARKS.md).
--
-- Now the rows go in arrival order (a rowid table: a commit's records share
-- the last leaves), (run_id, sequence) is a unique index of small entries,
-- and record ids, time-ordered as svc makes them (UUID v7), are unique per
-- run through an index on (record_id, run_id): the same pairs as before,
-- with new ids at the index's right-hand end. The records are copied once,
-- each run's together, in sequence order.
CREATE TABLE records_new (
	arrival    INTEGER PRIMARY KEY,
	run_id     TEXT NOT NULL REFERENCES runs (id),
	sequence   INTEGER NOT NULL,
	record_id  TEXT NOT NULL,
	chain_hash TEXT NOT NULL,
	body       BLOB NOT NULL,
	UNIQUE (run_id, sequence),
	UNIQUE (record_id, run_id)
) STRICT;

INSERT INTO records_new (run_id, sequence, record_id, chain_hash, body)
	SELECT run_id, sequence, record_id, chain_hash, body FROM records ORDER BY run_id, sequence;

DROP TABLE records;

ALTER TABLE records_new RENAME TO records;
