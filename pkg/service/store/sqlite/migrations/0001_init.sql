-- 0001_init: the initial schema. Timestamps are UTC text in the fixed-width
-- form 2006-01-02T15:04:05.000000000Z, so they sort as text and keep
-- nanoseconds. Bodies are BLOBs: the exact bytes the service accepted.
-- STRICT tables reject values of the wrong type.

CREATE TABLE orgs (
	id         TEXT NOT NULL PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	tier       TEXT NOT NULL,
	created_at TEXT NOT NULL
) STRICT;

CREATE TABLE api_keys (
	id          TEXT NOT NULL PRIMARY KEY,
	org_id      TEXT NOT NULL REFERENCES orgs (id),
	environment TEXT NOT NULL,
	hash        BLOB NOT NULL UNIQUE,
	created_at  TEXT NOT NULL
) STRICT;

CREATE INDEX api_keys_org_id ON api_keys (org_id);

CREATE TABLE runs (
	id                   TEXT NOT NULL PRIMARY KEY,
	org_id               TEXT NOT NULL REFERENCES orgs (id),
	workflow_id          TEXT NOT NULL,
	surface_id           TEXT NOT NULL,
	policy_pack_id       TEXT NOT NULL,
	policy_snapshot_hash TEXT NOT NULL,
	process_context_hash TEXT NOT NULL,
	environment          TEXT NOT NULL,
	api_key_id           TEXT NOT NULL,
	sealed               INTEGER NOT NULL DEFAULT 0 CHECK (sealed IN (0, 1)),
	opened_at            TEXT NOT NULL,
	closed_at            TEXT,
	vpec_id              TEXT
) STRICT;

CREATE INDEX runs_org_id ON runs (org_id);

CREATE TABLE records (
	run_id     TEXT NOT NULL REFERENCES runs (id),
	sequence   INTEGER NOT NULL,
	record_id  TEXT NOT NULL,
	chain_hash TEXT NOT NULL,
	body       BLOB NOT NULL,
	PRIMARY KEY (run_id, sequence),
	UNIQUE (run_id, record_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE vpecs (
	id        TEXT NOT NULL PRIMARY KEY,
	run_id    TEXT NOT NULL UNIQUE REFERENCES runs (id),
	org_id    TEXT NOT NULL REFERENCES orgs (id),
	issued_at TEXT NOT NULL,
	body      BLOB NOT NULL
) STRICT;

CREATE INDEX vpecs_org_id ON vpecs (org_id);

CREATE TABLE manifests (
	org_id     TEXT NOT NULL REFERENCES orgs (id),
	id         TEXT NOT NULL,
	name       TEXT NOT NULL,
	body       BLOB NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (org_id, id)
) STRICT, WITHOUT ROWID;

-- model_hashes keeps the profile's list exactly as published (JSON array);
-- profile_models is the index ProfileByModelHash reads.
CREATE TABLE profiles (
	id           TEXT NOT NULL PRIMARY KEY,
	model_hashes TEXT NOT NULL,
	body         BLOB NOT NULL,
	published_at TEXT NOT NULL
) STRICT;

-- seq breaks ties between profiles published at the same instant: the one
-- published last wins.
CREATE TABLE profile_models (
	seq          INTEGER PRIMARY KEY,
	model_hash   TEXT NOT NULL,
	profile_id   TEXT NOT NULL REFERENCES profiles (id),
	published_at TEXT NOT NULL,
	UNIQUE (model_hash, profile_id)
) STRICT;

CREATE INDEX profile_models_latest ON profile_models (model_hash, published_at DESC, seq DESC);
