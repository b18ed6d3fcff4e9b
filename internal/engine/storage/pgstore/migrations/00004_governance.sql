-- +goose Up
-- The audit log: records only ever appended, each carrying the hash of the
-- one before (internal/engine/audit, boltstore's chain byte for byte).
-- agent_id is the record's, for listing one agent's records.
CREATE TABLE audit (
    seq      bigint PRIMARY KEY,
    agent_id text NOT NULL,
    record   bytea NOT NULL
);
CREATE INDEX audit_agent ON audit (agent_id, seq);

-- The chain's head: one row, locked and rewritten by every append, so
-- appends from any number of engines queue on it and form one chain.
CREATE TABLE audit_head (
    one  boolean PRIMARY KEY DEFAULT true CHECK (one),
    seq  bigint NOT NULL,
    hash text NOT NULL
);
INSERT INTO audit_head (one, seq, hash) VALUES (true, 0, '');

-- Pending actions: their status and expiry as columns, so a list of one
-- status is an index range with its limit in SQL (expiry is decided at
-- read time: "pending" rows past expires_at list as expired). No rows
-- exist before this migration: nothing could queue before the backend
-- was reachable.
ALTER TABLE pending ADD COLUMN status text NOT NULL DEFAULT 'pending',
    ADD COLUMN expires_at bigint NOT NULL DEFAULT 0;
CREATE INDEX pending_status_time ON pending (status, requested_at, id);

-- +goose Down
DROP INDEX pending_status_time;
ALTER TABLE pending DROP COLUMN expires_at, DROP COLUMN status;
DROP TABLE audit_head;
DROP TABLE audit;
