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

-- +goose Down
DROP TABLE audit_head;
DROP TABLE audit;
