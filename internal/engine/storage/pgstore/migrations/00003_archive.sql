-- +goose Up
-- The archive's time order: a purge by cut-off (archived_at < before,
-- run on a schedule) reads only the old rows, not the whole archive.
CREATE INDEX archived_time ON archived (archived_at);
CREATE INDEX versions_time ON versions (archived_at);

-- +goose Down
DROP INDEX versions_time;
DROP INDEX archived_time;
