-- 0006_circuits: the circuit registry: signed circuit entries (pkg/zk),
-- immutable, looked up by circuit id or by the model an mlp_head circuit
-- proves. seq breaks ties between entries published at the same instant.

CREATE TABLE circuits (
	seq          INTEGER PRIMARY KEY,
	id           TEXT NOT NULL UNIQUE,
	circuit      TEXT NOT NULL,
	model_hash   TEXT NOT NULL,
	body         BLOB NOT NULL,
	published_at TEXT NOT NULL
) STRICT;

CREATE INDEX circuits_model ON circuits (model_hash, published_at DESC, seq DESC);
