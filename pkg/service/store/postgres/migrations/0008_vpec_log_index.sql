-- 0008_vpec_log_index: where each issued VPEC is in the transparency log
-- (docs/TRANSPARENCY.md). NULL until the close (or, after a crash, the
-- next start) has appended the VPEC's leaf; the partial index lists the
-- VPECs a start must still append.

ALTER TABLE vpecs ADD COLUMN log_index bigint CHECK (log_index IS NULL OR log_index >= 0);

CREATE INDEX vpecs_not_logged ON vpecs (issued_at, id) WHERE log_index IS NULL;
