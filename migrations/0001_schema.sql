-- The cairn schema. The three original tables are created only when absent, so
-- this migration is a no-op on a database made by the first cairn server;
-- everything after them is additive.

CREATE TABLE IF NOT EXISTS workspaces (
    id              text        NOT NULL PRIMARY KEY,
    name            text        NOT NULL UNIQUE,
    description     text        NULL,
    volume_name     text        NOT NULL UNIQUE,
    volume_state    text        NOT NULL DEFAULT 'NONE',
    volume_metadata jsonb       NULL,
    created_at      timestamptz NULL,
    updated_at      timestamptz NULL
);

CREATE TABLE IF NOT EXISTS artifacts (
    id           text        NOT NULL PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    description  text        NULL,
    object_key   text        NOT NULL,
    mime_type    text        NOT NULL,
    size         bigint      NOT NULL,
    state        text        NOT NULL DEFAULT 'RECORDED',
    created_at   timestamptz NULL,
    updated_at   timestamptz NULL,
    UNIQUE (workspace_id, name)
);

CREATE TABLE IF NOT EXISTS audit_system_events (
    id         text        NOT NULL PRIMARY KEY,
    type       text        NOT NULL,
    metadata   jsonb       NULL,
    created_at timestamptz NULL,
    updated_at timestamptz NULL
);

-- When the current content was written; the MISSING_OBJECT grace is measured
-- from it, not from updated_at (which moves on renames too).
ALTER TABLE artifacts ADD COLUMN IF NOT EXISTS content_written_at timestamptz NULL;
UPDATE artifacts SET content_written_at = coalesce(updated_at, created_at, now())
 WHERE content_written_at IS NULL;
ALTER TABLE artifacts ALTER COLUMN content_written_at SET NOT NULL;

-- The reconciler looks keys up in pages.
CREATE INDEX IF NOT EXISTS artifacts_object_key_idx ON artifacts (object_key);
CREATE INDEX IF NOT EXISTS artifacts_list_idx ON artifacts (workspace_id, created_at, id);
CREATE INDEX IF NOT EXISTS workspaces_list_idx ON workspaces (created_at, id);

-- Who made each mutation: a token name, 'maintainer', or NULL without auth.
ALTER TABLE audit_system_events ADD COLUMN IF NOT EXISTS actor text NULL;
CREATE INDEX IF NOT EXISTS audit_list_idx ON audit_system_events (created_at, id);
CREATE INDEX IF NOT EXISTS audit_workspace_idx ON audit_system_events ((metadata ->> 'workspace_id'));

-- Final-prefix keys that lost their artifact row (delete, content replacement,
-- workspace delete). The reaper honours a grace window from released_at, so a
-- presigned GET minted before the release keeps working.
CREATE TABLE IF NOT EXISTS released_objects (
    object_key   text        NOT NULL PRIMARY KEY,
    workspace_id text        NOT NULL,
    released_at  timestamptz NOT NULL
);
