-- 0005_web_sessions: dashboard sign-in sessions (pkg/dashboard). The token
-- itself is never stored: id_hash is its SHA-256. Listing indexes for the
-- dashboard's runs and VPEC pages.

CREATE TABLE web_sessions (
	id_hash    BLOB NOT NULL PRIMARY KEY,
	org_id     TEXT NOT NULL REFERENCES orgs (id),
	api_key_id TEXT NOT NULL REFERENCES api_keys (id),
	created_at TEXT NOT NULL,
	expires_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX web_sessions_expires_at ON web_sessions (expires_at);

CREATE INDEX runs_org_opened ON runs (org_id, opened_at);

CREATE INDEX vpecs_org_issued ON vpecs (org_id, issued_at);
