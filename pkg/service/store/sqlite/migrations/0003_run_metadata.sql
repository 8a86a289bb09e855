-- 0003_run_metadata: a run's metadata, kept by every append in its own
-- transaction, so that reading a run never reads its records; and the
-- idempotency key of the close that sealed it. sealed = 1 now means that
-- the run's record set is final (the first phase of a close); vpec_id is
-- set when the VPEC is stored (the second phase). last_chain_hash is ''
-- while the run is empty.

ALTER TABLE runs ADD COLUMN record_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN last_sequence INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN last_chain_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN record_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN close_key TEXT NOT NULL DEFAULT '';

UPDATE runs SET
	record_count = (SELECT count(*) FROM records WHERE records.run_id = runs.id),
	record_bytes = (SELECT coalesce(sum(length(body)), 0) FROM records WHERE records.run_id = runs.id),
	last_sequence = coalesce((SELECT max(sequence) FROM records WHERE records.run_id = runs.id), 0),
	last_chain_hash = coalesce((SELECT chain_hash FROM records WHERE records.run_id = runs.id ORDER BY sequence DESC LIMIT 1), '');
