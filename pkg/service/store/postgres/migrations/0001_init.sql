-- 0001_init: the initial schema. Tables are created unqualified, in the
-- first schema of the connection's search_path. Timestamps are timestamptz
-- (microsecond precision); bodies are bytea: the exact bytes the service
-- accepted (not jsonb, which would re-encode them).

CREATE TABLE orgs (
	id         text PRIMARY KEY,
	name       text NOT NULL UNIQUE,
	tier       text NOT NULL,
	created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
	id          text PRIMARY KEY,
	org_id      text NOT NULL REFERENCES orgs (id),
	environment text NOT NULL,
	hash        bytea NOT NULL UNIQUE,
	created_at  timestamptz NOT NULL
);

CREATE INDEX api_keys_org_id ON api_keys (org_id);

CREATE TABLE runs (
	id                   text PRIMARY KEY,
	org_id               text NOT NULL REFERENCES orgs (id),
	workflow_id          text NOT NULL,
	surface_id           text NOT NULL,
	policy_pack_id       text NOT NULL,
	policy_snapshot_hash text NOT NULL,
	process_context_hash text NOT NULL,
	environment          text NOT NULL,
	api_key_id           text NOT NULL,
	sealed               boolean NOT NULL DEFAULT false,
	opened_at            timestamptz NOT NULL,
	closed_at            timestamptz,
	vpec_id              text
);

CREATE INDEX runs_org_id ON runs (org_id);

CREATE TABLE records (
	run_id     text NOT NULL REFERENCES runs (id),
	sequence   bigint NOT NULL,
	record_id  text NOT NULL,
	chain_hash text NOT NULL,
	body       bytea NOT NULL,
	PRIMARY KEY (run_id, sequence),
	UNIQUE (run_id, record_id)
);

CREATE TABLE vpecs (
	id        text PRIMARY KEY,
	run_id    text NOT NULL UNIQUE REFERENCES runs (id),
	org_id    text NOT NULL REFERENCES orgs (id),
	issued_at timestamptz NOT NULL,
	body      bytea NOT NULL
);

CREATE INDEX vpecs_org_id ON vpecs (org_id);

CREATE TABLE manifests (
	org_id     text NOT NULL REFERENCES orgs (id),
	id         text NOT NULL,
	name       text NOT NULL,
	body       bytea NOT NULL,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (org_id, id)
);

-- model_hashes keeps the profile's list exactly as published;
-- profile_models is the index ProfileByModelHash reads.
CREATE TABLE profiles (
	id           text PRIMARY KEY,
	model_hashes text[] NOT NULL,
	body         bytea NOT NULL,
	published_at timestamptz NOT NULL
);

-- seq breaks ties between profiles published at the same instant: the one
-- published last wins.
CREATE TABLE profile_models (
	seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	model_hash   text NOT NULL,
	profile_id   text NOT NULL REFERENCES profiles (id),
	published_at timestamptz NOT NULL,
	UNIQUE (model_hash, profile_id)
);

CREATE INDEX profile_models_latest ON profile_models (model_hash, published_at DESC, seq DESC);
