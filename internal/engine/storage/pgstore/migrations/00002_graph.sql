-- +goose Up
-- The graph (boltstore's links_out/links_in, archived_links_*, aliases and
-- entity_aliases buckets). A link is the wire Link message (its history
-- bounded by rules.CloseInterval), keyed by (source, target, relation).
-- Live links join two live memories: the foreign keys cascade, so a
-- memory's DELETE removes its links in the same statement, atomically.
CREATE TABLE links (
    source_id text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    target_id text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    relation  text COLLATE "C" NOT NULL,
    record    bytea NOT NULL,
    PRIMARY KEY (source_id, target_id, relation),
    CONSTRAINT links_not_a_loop CHECK (source_id <> target_id)
);
CREATE INDEX links_in ON links (target_id, source_id, relation);

-- Links with an archived end (moved here in the transaction that archives
-- it). An end may be live or archived, which no foreign key can say: the
-- writes that remove an end for good delete its rows (writeTx.removeForGood,
-- the archive purge), and CheckConsistency finds any left dangling.
CREATE TABLE archived_links (
    source_id text COLLATE "C" NOT NULL,
    target_id text COLLATE "C" NOT NULL,
    relation  text COLLATE "C" NOT NULL,
    record    bytea NOT NULL,
    PRIMARY KEY (source_id, target_id, relation)
);
CREATE INDEX archived_links_in ON archived_links (target_id, source_id, relation);

-- Entity aliases: an entity is a memory with alias rows. folded is
-- rules.FoldAlias(alias), unique per namespace; namespace is the entity's
-- (moved with it by an update). Deleting or archiving the memory cascades.
CREATE TABLE entity_aliases (
    entity_id text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    folded    text COLLATE "C" NOT NULL,
    namespace text NOT NULL,
    alias     text NOT NULL,
    added_at  bigint NOT NULL,
    added_by  text NOT NULL,
    PRIMARY KEY (entity_id, folded),
    CONSTRAINT entity_aliases_unique UNIQUE (folded, namespace)
);

-- +goose Down
DROP TABLE entity_aliases;
DROP TABLE archived_links;
DROP TABLE links;
