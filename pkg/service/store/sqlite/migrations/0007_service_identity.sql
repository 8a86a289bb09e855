-- 0007_service_identity: the service's signing identity (store.Identity),
-- one row, recorded by the first server to start on the database. A server
-- whose key material differs refuses to start, so every process on a
-- database signs and timestamps as the one service its trust bundle names.

CREATE TABLE service_identity (
	id             INTEGER PRIMARY KEY CHECK (id = 1),
	signing_key_id TEXT NOT NULL,
	signing_key    BLOB NOT NULL,
	tsa_cert       TEXT NOT NULL,
	tsa_root       TEXT NOT NULL,
	recorded_at    TEXT NOT NULL
) STRICT;
