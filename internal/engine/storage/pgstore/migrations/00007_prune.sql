-- +goose Up
-- The change log is pruned by its leader (prune.go): rows older than the
-- retention go, and horizon is the highest seq pruned so far, so an engine
-- whose position is below it knows it missed changes and reloads its index.
ALTER TABLE changes ADD COLUMN at timestamptz NOT NULL DEFAULT now();
CREATE INDEX changes_at ON changes (at);
CREATE TABLE changes_horizon (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    seq bigint NOT NULL
);
INSERT INTO changes_horizon (seq) VALUES (0);

-- +goose Down
DROP TABLE changes_horizon;
DROP INDEX changes_at;
ALTER TABLE changes DROP COLUMN at;
