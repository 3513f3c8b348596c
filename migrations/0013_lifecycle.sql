-- Workspace lifecycle: expiry and idle archiving. A workspace may carry a
-- ttl (expires_at moves to last touch + ttl) or a fixed expires_at, and an
-- idle bound after which its unmounted volume is archived to a snapshot.
-- The *_warned_at columns record that the warning event went out: the
-- maintainer acts only once its warning is lifecycle.warnBeforeSecs old.
ALTER TABLE workspaces
    ADD COLUMN IF NOT EXISTS ttl_secs                bigint CHECK (ttl_secs > 0),
    ADD COLUMN IF NOT EXISTS expires_at              timestamptz,
    ADD COLUMN IF NOT EXISTS expiry_warned_at        timestamptz,
    ADD COLUMN IF NOT EXISTS archive_idle_after_secs bigint CHECK (archive_idle_after_secs >= 0),
    ADD COLUMN IF NOT EXISTS archive_warned_at       timestamptz,
    ADD COLUMN IF NOT EXISTS archived_snapshot_id    text REFERENCES snapshots (id),
    ADD COLUMN IF NOT EXISTS last_active_at          timestamptz NOT NULL DEFAULT now();

CREATE INDEX IF NOT EXISTS workspaces_expires_idx ON workspaces (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS workspaces_archived_snapshot_idx ON workspaces (archived_snapshot_id)
    WHERE archived_snapshot_id IS NOT NULL;
