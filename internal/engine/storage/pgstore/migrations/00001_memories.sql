-- +goose Up
-- Memories: the record as the wire Memory message (the engine's API type,
-- as boltstore stores it), with the columns constraints and lookups need.
-- terms/tfs are the Go analyzer's term list (keyword.Document), sorted by
-- term, with each term's frequency: the keyword index is built from them.
CREATE TABLE memories (
    id         text COLLATE "C" PRIMARY KEY,
    namespace  text NOT NULL,
    title      text NOT NULL,
    expires_at bigint NOT NULL DEFAULT 0, -- Unix ns; 0 = never
    terms      text[] NOT NULL,
    tfs        integer[] NOT NULL,
    record     bytea NOT NULL,
    CONSTRAINT memories_title_unique UNIQUE (namespace, title),
    CONSTRAINT memories_terms_tfs CHECK (cardinality(terms) = cardinality(tfs))
);
CREATE INDEX memories_expiry ON memories (expires_at) WHERE expires_at <> 0;
CREATE INDEX memories_terms ON memories USING gin (terms);

-- The change log: every committed change to a memory, in seq order, as
-- the index change it is (the record after it, NULL once deleted; the term
-- lists before and after when they changed). Every engine's in-memory
-- index catches up from it (catchup.go), so each sees the others' writes.
CREATE TABLE changes (
    seq       bigserial PRIMARY KEY,
    id        text COLLATE "C" NOT NULL,
    record    bytea,
    reindex   boolean NOT NULL,
    old_terms text[] NOT NULL,
    old_tfs   integer[] NOT NULL,
    new_terms text[] NOT NULL,
    new_tfs   integer[] NOT NULL
);

-- The archive: removed memories (row per id) and superseded versions
-- (rows per id and time), as boltstore's archive and versions buckets.
CREATE TABLE archived (
    id                  text COLLATE "C" PRIMARY KEY,
    archived_at         bigint NOT NULL,
    reason              text NOT NULL,
    original_tier       text NOT NULL,
    original_expires_at bigint NOT NULL,
    record              bytea NOT NULL
);
CREATE TABLE versions (
    id          text COLLATE "C" NOT NULL,
    archived_at bigint NOT NULL,
    original_tier       text NOT NULL,
    original_expires_at bigint NOT NULL,
    record      bytea NOT NULL,
    PRIMARY KEY (id, archived_at)
);

-- Governance state read inside every write (storage.GovernanceView):
-- namespace standards and pending actions, as wire messages.
CREATE TABLE standards (
    namespace text PRIMARY KEY,
    record    bytea NOT NULL
);
CREATE TABLE pending (
    id           text COLLATE "C" PRIMARY KEY,
    requested_at bigint NOT NULL,
    record       bytea NOT NULL
);
CREATE INDEX pending_time ON pending (requested_at, id);

-- +goose Down
DROP TABLE pending;
DROP TABLE standards;
DROP TABLE versions;
DROP TABLE archived;
DROP TABLE changes;
DROP TABLE memories;
