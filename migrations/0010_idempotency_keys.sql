-- The first answer to each request that carried an Idempotency-Key, by the
-- token that sent it: a repeat of the key gets that answer instead of a
-- second object. status is NULL while the first request runs, under a
-- lease that a repeat may take over once it lapsed (its server died).
-- Rows older than a day are taken over or deleted as new keys come.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    actor       text        NOT NULL,
    key         text        NOT NULL,
    fingerprint text        NOT NULL,
    status      integer,
    answer      bytea,
    lease_until timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (actor, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_created_idx ON idempotency_keys (created_at);
