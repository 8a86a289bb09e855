-- 0006_circuits: the circuit registry: signed circuit entries (pkg/zk),
-- immutable, looked up by circuit id or by the model an mlp_head circuit
-- proves. seq breaks ties between entries published at the same instant.

CREATE TABLE circuits (
	seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id           text NOT NULL UNIQUE,
	circuit      text NOT NULL,
	model_hash   text NOT NULL,
	body         bytea NOT NULL,
	published_at timestamptz NOT NULL
);

CREATE INDEX circuits_model ON circuits (model_hash, published_at DESC, seq DESC);
