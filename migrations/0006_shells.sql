-- The shells registry: one row per live v2 shell, shared by every replica.
-- A shell runs in its own container, not in the server that opened it, so
-- any replica must be able to list it, attach to it and end it; the row is
-- what they share. A row lives from the create's checks until the shell's
-- end is recorded; the audit log keeps the history, so nothing here is kept
-- after that.
CREATE TABLE IF NOT EXISTS shells (
    id           text        NOT NULL PRIMARY KEY,
    -- A deleted workspace takes its shells' rows with it: their containers
    -- mount its volume, which the delete removes.
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    container    text        NOT NULL,
    -- The SHA-256 of the shell's resume secret, never the secret: a leaked
    -- row attaches nothing. Any other length is a bug of the writer.
    key          bytea       NOT NULL CHECK (octet_length(key) = 32),
    -- '' without authentication, and for an opener whose address is unknown.
    token_name   text        NOT NULL DEFAULT '',
    client_addr  text        NOT NULL DEFAULT '',
    -- The instance name of the server that opened the shell, which counts
    -- its shells against its own caps.
    instance     text        NOT NULL,
    record       boolean     NOT NULL,
    -- opening: the row is written before the container exists; running: the
    -- shell can be attached; ending: one replica claimed its end. A replica
    -- moves a row with one conditional UPDATE, so two never both claim it.
    state        text        NOT NULL CHECK (state IN ('opening', 'running', 'ending')),
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);

-- A server counts the shells it opened on every create.
CREATE INDEX IF NOT EXISTS shells_instance_idx ON shells (instance);
-- Listings come in (created_at, id) order, of one workspace or of all. The
-- workspace index also serves the cascade of a workspace delete.
CREATE INDEX IF NOT EXISTS shells_workspace_list_idx ON shells (workspace_id, created_at, id);
CREATE INDEX IF NOT EXISTS shells_list_idx ON shells (created_at, id);
