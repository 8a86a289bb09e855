-- 0003_run_metadata: a run's metadata, kept by every append in its own
-- transaction (under the run row's lock), so that reading a run never
-- reads its records; and the idempotency key of the close that sealed it.
-- sealed = true now means that the run's record set is final (the first
-- phase of a close); vpec_id is set when the VPEC is stored (the second
-- phase). last_chain_hash is '' while the run is empty.

ALTER TABLE runs
	ADD COLUMN record_count bigint NOT NULL DEFAULT 0,
	ADD COLUMN last_sequence bigint NOT NULL DEFAULT 0,
	ADD COLUMN last_chain_hash text NOT NULL DEFAULT '',
	ADD COLUMN record_bytes bigint NOT NULL DEFAULT 0,
	ADD COLUMN close_key text NOT NULL DEFAULT '';

UPDATE runs SET
	record_count = m.n,
	record_bytes = m.bytes,
	last_sequence = m.last,
	last_chain_hash = (SELECT chain_hash FROM records r WHERE r.run_id = runs.id AND r.sequence = m.last)
FROM (SELECT run_id, count(*) AS n, sum(length(body)) AS bytes, max(sequence) AS last FROM records GROUP BY run_id) m
WHERE m.run_id = runs.id;
