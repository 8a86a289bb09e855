-- 0005_web_sessions: dashboard sign-in sessions (pkg/dashboard). The token
-- itself is never stored: id_hash is its SHA-256. Listing indexes for the
-- dashboard's runs and VPEC pages.

CREATE TABLE web_sessions (
	id_hash    bytea NOT NULL PRIMARY KEY,
	org_id     text NOT NULL REFERENCES orgs (id),
	api_key_id text NOT NULL REFERENCES api_keys (id),
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
);

CREATE INDEX web_sessions_expires_at ON web_sessions (expires_at);

CREATE INDEX runs_org_opened ON runs (org_id, opened_at);

CREATE INDEX vpecs_org_issued ON vpecs (org_id, issued_at);
