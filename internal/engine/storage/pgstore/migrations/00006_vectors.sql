-- +goose Up
-- Vectors: each memory's embedding by one model, of the text whose hash
-- (vecset.Hash, as a signed 64-bit) is kept with it, unit length, in a
-- plain column. A vector goes with its memory (the cascade) and with an
-- edit of its title or content (writeTx.put). Every engine keeps a copy
-- in memory, caught up from the change log, and searches it exactly as
-- boltstore does. pgvector, when the server has it, adds its own column
-- and index at run time (pgvector.go), not here: a migration cannot
-- depend on an optional extension.
CREATE TABLE vectors (
    id    text COLLATE "C" PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    model text NOT NULL,
    hash  bigint NOT NULL,
    v     real[] NOT NULL
);

-- A superseded version imported from another store may carry a row time
-- and reason other than its key time and "superseded" (boltstore keeps
-- both): kept here so export gives back what import took. NULL: the same
-- as archived_at, and superseded.
ALTER TABLE versions ADD COLUMN row_archived_at bigint, ADD COLUMN reason text;

-- +goose Down
ALTER TABLE versions DROP COLUMN row_archived_at, DROP COLUMN reason;
DROP TABLE vectors;
