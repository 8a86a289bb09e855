-- 0004_key_revocation_session_claim: API keys can be revoked (revoked_at
-- set once, never cleared), and a check or review session backs one record
-- only (record_id set by the first record that presents it).

ALTER TABLE api_keys ADD COLUMN revoked_at TEXT;

ALTER TABLE sessions ADD COLUMN record_id TEXT;
