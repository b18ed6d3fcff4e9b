-- +goose Up
-- The durable event log (storage.EventLog): every logged event as the
-- wire Event message, by seq (stored without it: the column is the seq). Seqs are taken holding event_lock's row
-- (events.go), so they are visible in seq order: a reader that has seen
-- seq n has seen every committed seq below it.
CREATE SEQUENCE events_seq AS bigint;
CREATE TABLE events (
    seq    bigint PRIMARY KEY,
    record bytea NOT NULL
);

-- One row, locked (never updated) by every write that logs events, from
-- taking its seqs until its commit; updated by a change of subscriptions,
-- so a write that read the subscriptions before the change is retried.
CREATE TABLE event_lock (
    id           integer PRIMARY KEY CHECK (id = 1),
    subs_version bigint NOT NULL DEFAULT 0
);
INSERT INTO event_lock (id) VALUES (1);

-- Webhook subscriptions (storage.Subscription as JSON, without its
-- counters), never changed after creation: writes read them.
CREATE TABLE subscriptions (
    id         text COLLATE "C" PRIMARY KEY,
    created_at bigint NOT NULL,
    record     jsonb NOT NULL
);
-- The dispatch counters apart, so settling a delivery never touches a row
-- that writes read.
CREATE TABLE subscription_stats (
    id         text COLLATE "C" PRIMARY KEY REFERENCES subscriptions ON DELETE CASCADE,
    dispatched bigint NOT NULL DEFAULT 0,
    failed     bigint NOT NULL DEFAULT 0
);

-- The delivery queue: one row per event due to a subscription, queued in
-- the write's transaction. A dispatcher claims the rows it attempts
-- (claimed_by, claimed_until: a lease in the dispatcher's clock, Unix ns),
-- so two engines never attempt one delivery at once.
CREATE TABLE deliveries (
    subscription_id text COLLATE "C" NOT NULL REFERENCES subscriptions ON DELETE CASCADE,
    seq             bigint NOT NULL,
    next_at         bigint NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    last_error      text NOT NULL DEFAULT '',
    event           bytea NOT NULL,
    claimed_by      text NOT NULL DEFAULT '',
    claimed_until   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (subscription_id, seq)
);
CREATE INDEX deliveries_due ON deliveries (subscription_id, next_at, seq);

-- Dead letters: deliveries given up, as the wire DeadLetter message.
CREATE TABLE dead_letters (
    subscription_id text COLLATE "C" NOT NULL REFERENCES subscriptions ON DELETE CASCADE,
    seq             bigint NOT NULL,
    record          bytea NOT NULL,
    PRIMARY KEY (subscription_id, seq)
);

-- The fingerprint of the webhook.key the subscriptions' secrets are sealed
-- with: every engine of this database must hold the same key.
CREATE TABLE webhook_key (
    id          integer PRIMARY KEY CHECK (id = 1),
    fingerprint text NOT NULL
);

-- +goose Down
DROP TABLE webhook_key;
DROP TABLE dead_letters;
DROP TABLE deliveries;
DROP TABLE subscription_stats;
DROP TABLE subscriptions;
DROP TABLE event_lock;
DROP TABLE events;
DROP SEQUENCE events_seq;
