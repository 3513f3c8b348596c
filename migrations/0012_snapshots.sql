-- Snapshots. A snapshot is a manifest of a whole volume (an object in the
-- store) and the content its files name, stored by SHA-256 so that content
-- any earlier snapshot stored is never uploaded again. Small files share
-- bundle objects; content is then a byte range of its object.
--
-- snapshot_objects records every object a snapshot run was granted before
-- its URL went out (PENDING), so an object of a run that died is found and
-- reaped by age; the run's commit marks its objects STORED in the same
-- transaction that records the content and the snapshot.
CREATE TABLE IF NOT EXISTS snapshot_objects (
    key        text        PRIMARY KEY,
    size       bigint      NOT NULL,
    state      text        NOT NULL CHECK (state IN ('PENDING', 'STORED')),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS snapshot_objects_age_idx ON snapshot_objects (created_at);

-- One row per digest. used_at moves whenever a run finds the content
-- present (and so will refer to it): the reaper takes only content no
-- snapshot refers to and no run touched within its grace.
CREATE TABLE IF NOT EXISTS snapshot_content (
    digest       text        PRIMARY KEY, -- lower-case hex SHA-256
    object_key   text        NOT NULL REFERENCES snapshot_objects (key),
    offset_bytes bigint      NOT NULL CHECK (offset_bytes >= 0),
    size         bigint      NOT NULL CHECK (size >= 0),
    bundled      boolean     NOT NULL,
    used_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS snapshot_content_object_idx ON snapshot_content (object_key);

CREATE TABLE IF NOT EXISTS snapshots (
    id              text        PRIMARY KEY,
    workspace_id    text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name            text        NOT NULL,
    live            boolean     NOT NULL,
    manifest_key    text        NOT NULL REFERENCES snapshot_objects (key),
    manifest_sha256 text        NOT NULL, -- base64, as the store checks it
    entries         integer     NOT NULL,
    bytes           bigint      NOT NULL,
    uploaded_bytes  bigint      NOT NULL,
    skipped         integer     NOT NULL,
    created_by      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name)
);
CREATE INDEX IF NOT EXISTS snapshots_workspace_idx ON snapshots (workspace_id, created_at, id);
CREATE INDEX IF NOT EXISTS snapshots_manifest_idx ON snapshots (manifest_key);

-- Which content each snapshot refers to: what keeps content from the reaper.
CREATE TABLE IF NOT EXISTS snapshot_refs (
    snapshot_id text NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
    digest      text NOT NULL REFERENCES snapshot_content (digest),
    PRIMARY KEY (snapshot_id, digest)
);
CREATE INDEX IF NOT EXISTS snapshot_refs_digest_idx ON snapshot_refs (digest);

-- Snapshot rows are inserted whole and never updated: their inserts and
-- deletes reach the events stream and the webhook outbox like the other
-- rows' changes.
CREATE OR REPLACE FUNCTION cairn_notify_snapshot() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r snapshots;
BEGIN
    IF TG_OP = 'DELETE' THEN
        r := OLD;
    ELSE
        r := NEW;
    END IF;
    PERFORM pg_notify('cairn_events', json_build_object(
        'kind', 'snapshot', 'op', TG_OP, 'id', r.id, 'workspace_id', r.workspace_id)::text);
    INSERT INTO webhook_outbox (kind, op, id, workspace_id) VALUES ('snapshot', TG_OP, r.id, r.workspace_id);
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER cairn_snapshots_notify AFTER INSERT OR DELETE ON snapshots
    FOR EACH ROW EXECUTE FUNCTION cairn_notify_snapshot();
