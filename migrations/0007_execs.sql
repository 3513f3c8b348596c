-- The execs registry and the servers' liveness. An exec is one-shot: its
-- connection is served by the server that opened it, and it ends with that
-- connection. A server killed mid-exec cannot end it, so its row stays
-- behind; any replica that finds the row's server gone removes the exec's
-- container and records its end.
CREATE TABLE IF NOT EXISTS execs (
    id           text        NOT NULL PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    container    text        NOT NULL,
    -- '' without authentication, and for an opener whose address is unknown.
    token_name   text        NOT NULL DEFAULT '',
    client_addr  text        NOT NULL DEFAULT '',
    -- The instance name of the server that serves its connection, and that
    -- server process's own ID: a server restarted under the same instance
    -- name tells its predecessor's rows from its own by it.
    instance     text        NOT NULL,
    process      text        NOT NULL,
    -- argv[0] only: the rest of a command line may hold secrets.
    argv0        text        NOT NULL,
    -- Set once EXEC_STARTED is written: only a started exec gets an
    -- EXEC_ENDED row.
    started      boolean     NOT NULL DEFAULT false,
    -- By the database's clock, which every replica's liveness uses too.
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS execs_instance_idx ON execs (instance);

-- One row per server instance that has run its reaper: it pushes renew_by
-- ahead on every pass. An instance whose renew_by has passed is gone (killed,
-- its node lost, or replaced by a rolling deploy under another name).
CREATE TABLE IF NOT EXISTS instances (
    name     text        NOT NULL PRIMARY KEY,
    renew_by timestamptz NOT NULL
);
