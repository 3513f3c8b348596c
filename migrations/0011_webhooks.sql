-- Webhooks. Every row change of workspaces and artifacts is also written to
-- webhook_outbox, in the change's own transaction, so no committed change
-- can be missed by a server that was down when it happened. A server takes
-- outbox rows (each by one server: SKIP LOCKED), turns each into one
-- delivery per webhook whose filter it passes, and deletes it, in one
-- transaction. Deliveries are sent at least once: a sender leases a
-- delivery by moving next_at past the attempt's timeout, so one whose
-- server died mid-request is sent again once the lease lapses.
CREATE TABLE IF NOT EXISTS webhook_outbox (
    seq          bigserial   PRIMARY KEY,
    kind         text        NOT NULL,
    op           text        NOT NULL,
    id           text        NOT NULL,
    workspace_id text        NOT NULL,
    at           timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id          text        PRIMARY KEY, -- a ULID: the receiver's idempotency key
    webhook     text        NOT NULL,
    event_type  text        NOT NULL,
    payload     bytea       NOT NULL,
    state       text        NOT NULL CHECK (state IN ('PENDING', 'DELIVERED', 'FAILED')),
    attempts    integer     NOT NULL DEFAULT 0,
    next_at     timestamptz NOT NULL,
    last_status integer,
    last_error  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due_idx ON webhook_deliveries (next_at) WHERE state = 'PENDING';
CREATE INDEX IF NOT EXISTS webhook_deliveries_webhook_idx ON webhook_deliveries (webhook, state);
CREATE INDEX IF NOT EXISTS webhook_deliveries_finished_idx ON webhook_deliveries (finished_at) WHERE state <> 'PENDING';

CREATE OR REPLACE FUNCTION cairn_outbox_workspace() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO webhook_outbox (kind, op, id, workspace_id) VALUES ('workspace', TG_OP, OLD.id, OLD.id);
    ELSE
        INSERT INTO webhook_outbox (kind, op, id, workspace_id) VALUES ('workspace', TG_OP, NEW.id, NEW.id);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION cairn_outbox_artifact() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO webhook_outbox (kind, op, id, workspace_id) VALUES ('artifact', TG_OP, OLD.id, OLD.workspace_id);
    ELSE
        INSERT INTO webhook_outbox (kind, op, id, workspace_id) VALUES ('artifact', TG_OP, NEW.id, NEW.workspace_id);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER cairn_workspaces_outbox AFTER INSERT OR UPDATE OR DELETE ON workspaces
    FOR EACH ROW EXECUTE FUNCTION cairn_outbox_workspace();
CREATE OR REPLACE TRIGGER cairn_artifacts_outbox AFTER INSERT OR UPDATE OR DELETE ON artifacts
    FOR EACH ROW EXECUTE FUNCTION cairn_outbox_artifact();
