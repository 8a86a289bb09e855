-- 0002_sessions_calibration: reviewer keys, check and review sessions, and
-- calibration requests. Same conventions as 0001: UTC fixed-width text
-- timestamps, BLOBs for opaque bytes, STRICT tables.

CREATE TABLE reviewer_keys (
	org_id     TEXT NOT NULL REFERENCES orgs (id),
	key_id     TEXT NOT NULL,
	public_key BLOB NOT NULL,
	name       TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (org_id, key_id)
) STRICT, WITHOUT ROWID;

-- A session is open while closed_at is NULL; closing sets closed_at,
-- commitment_hash and close_tst together, once. reviewer_key_id is '' for
-- check sessions.
CREATE TABLE sessions (
	id                   TEXT NOT NULL PRIMARY KEY,
	org_id               TEXT NOT NULL REFERENCES orgs (id),
	run_id               TEXT NOT NULL REFERENCES runs (id),
	kind                 TEXT NOT NULL,
	check_name           TEXT NOT NULL,
	manifest_id          TEXT NOT NULL,
	reviewer_key_id      TEXT NOT NULL,
	min_duration_seconds INTEGER NOT NULL,
	opened_at            TEXT NOT NULL,
	open_tst             BLOB NOT NULL,
	closed_at            TEXT,
	commitment_hash      TEXT,
	close_tst            BLOB,
	CHECK ((closed_at IS NULL) = (commitment_hash IS NULL) AND (closed_at IS NULL) = (close_tst IS NULL))
) STRICT;

CREATE INDEX sessions_run_id ON sessions (run_id);

-- gpu_classes is a JSON array of strings, exactly as requested ([] for
-- none). CalibrationRequestsByModel reads calibration_requests_model.
CREATE TABLE calibration_requests (
	id                   TEXT NOT NULL PRIMARY KEY,
	org_id               TEXT NOT NULL REFERENCES orgs (id),
	model_hash           TEXT NOT NULL,
	model_description    TEXT NOT NULL,
	hub_model_id         TEXT NOT NULL,
	gpu_classes          TEXT NOT NULL,
	notify_email         TEXT NOT NULL,
	status               TEXT NOT NULL,
	estimated_completion TEXT NOT NULL,
	profile_id           TEXT NOT NULL,
	note                 TEXT NOT NULL,
	created_at           TEXT NOT NULL,
	updated_at           TEXT NOT NULL
) STRICT;

CREATE INDEX calibration_requests_model ON calibration_requests (model_hash, created_at, id);
CREATE INDEX calibration_requests_org_id ON calibration_requests (org_id);
