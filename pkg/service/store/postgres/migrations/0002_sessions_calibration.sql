-- 0002_sessions_calibration: reviewer keys, check and review sessions, and
-- calibration requests. Same conventions as 0001: timestamptz, bytea for
-- opaque bytes, tables in the first schema of the search_path.

CREATE TABLE reviewer_keys (
	org_id     text NOT NULL REFERENCES orgs (id),
	key_id     text NOT NULL,
	public_key bytea NOT NULL,
	name       text NOT NULL,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (org_id, key_id)
);

-- A session is open while closed_at is NULL; closing sets closed_at,
-- commitment_hash and close_tst together, once. reviewer_key_id is '' for
-- check sessions.
CREATE TABLE sessions (
	id                   text PRIMARY KEY,
	org_id               text NOT NULL REFERENCES orgs (id),
	run_id               text NOT NULL REFERENCES runs (id),
	kind                 text NOT NULL,
	check_name           text NOT NULL,
	manifest_id          text NOT NULL,
	reviewer_key_id      text NOT NULL,
	min_duration_seconds bigint NOT NULL,
	opened_at            timestamptz NOT NULL,
	open_tst             bytea NOT NULL,
	closed_at            timestamptz,
	commitment_hash      text,
	close_tst            bytea,
	CHECK ((closed_at IS NULL) = (commitment_hash IS NULL) AND (closed_at IS NULL) = (close_tst IS NULL))
);

CREATE INDEX sessions_run_id ON sessions (run_id);

-- gpu_classes keeps the requested list exactly ('{}' for none).
-- CalibrationRequestsByModel reads calibration_requests_model.
CREATE TABLE calibration_requests (
	id                   text PRIMARY KEY,
	org_id               text NOT NULL REFERENCES orgs (id),
	model_hash           text NOT NULL,
	model_description    text NOT NULL,
	hub_model_id         text NOT NULL,
	gpu_classes          text[] NOT NULL,
	notify_email         text NOT NULL,
	status               text NOT NULL,
	estimated_completion text NOT NULL,
	profile_id           text NOT NULL,
	note                 text NOT NULL,
	created_at           timestamptz NOT NULL,
	updated_at           timestamptz NOT NULL
);

CREATE INDEX calibration_requests_model ON calibration_requests (model_hash, created_at, id COLLATE "C");
CREATE INDEX calibration_requests_org_id ON calibration_requests (org_id);
