-- List versions (the ETag of the list routes): each list has a counter that
-- moves in the transaction of every change that can alter a byte of it, so a
-- server answers If-None-Match by reading one number instead of the list. A
-- counter never moves back, so a version read before a list can only be
-- older than the rows that list returns, never newer.

-- A workspace's artifact list: one counter per workspace, bumped by every
-- artifact statement that touches the workspace (inserts, deletes and any
-- update: renames, descriptions, content, state). A workspace without a row
-- is at version 0; the row goes with the workspace.
CREATE TABLE IF NOT EXISTS artifact_list_versions (
    workspace_id text   NOT NULL PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    version      bigint NOT NULL
);

-- The workspace list, whose rows carry the artifact counts, so every count
-- change moves it too. Its version is the sum of 16 stripes: a transaction
-- bumps the stripe of its backend, so commits in different workspaces do not
-- queue on one row, and every bump raises the sum. The stripes start at
-- random, so a database made anew (a dev reset) does not repeat the versions
-- of the one before, whose tags clients may still hold.
CREATE TABLE IF NOT EXISTS workspace_list_versions (
    stripe  int    NOT NULL PRIMARY KEY,
    version bigint NOT NULL
);
INSERT INTO workspace_list_versions (stripe, version)
SELECT s, floor(random() * 1e12)::bigint FROM generate_series(0, 15) s
ON CONFLICT (stripe) DO NOTHING;

-- One bump per workspace per statement, whatever its row count. A cascaded
-- delete bumps nothing: its workspace row, and with it the counter, is
-- already gone. Workspaces are taken in ID order, so two statements that
-- touch the same workspaces lock their counters in the same order.
CREATE OR REPLACE FUNCTION cairn_bump_artifact_list() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO artifact_list_versions AS v (workspace_id, version)
        SELECT w.id, 1 FROM workspaces w WHERE w.id IN (SELECT workspace_id FROM new_rows) ORDER BY w.id
        ON CONFLICT (workspace_id) DO UPDATE SET version = v.version + 1;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO artifact_list_versions AS v (workspace_id, version)
        SELECT w.id, 1 FROM workspaces w WHERE w.id IN (SELECT workspace_id FROM old_rows) ORDER BY w.id
        ON CONFLICT (workspace_id) DO UPDATE SET version = v.version + 1;
    ELSE
        INSERT INTO artifact_list_versions AS v (workspace_id, version)
        SELECT w.id, 1 FROM workspaces w
         WHERE w.id IN (SELECT workspace_id FROM new_rows UNION SELECT workspace_id FROM old_rows)
         ORDER BY w.id
        ON CONFLICT (workspace_id) DO UPDATE SET version = v.version + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER cairn_artifacts_version_insert AFTER INSERT ON artifacts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_bump_artifact_list();
CREATE OR REPLACE TRIGGER cairn_artifacts_version_update AFTER UPDATE ON artifacts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_bump_artifact_list();
CREATE OR REPLACE TRIGGER cairn_artifacts_version_delete AFTER DELETE ON artifacts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_bump_artifact_list();

CREATE OR REPLACE FUNCTION cairn_bump_workspace_list() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE workspace_list_versions SET version = version + 1 WHERE stripe = pg_backend_pid() % 16;
    RETURN NULL;
END
$$;

-- Deferred to the commit: the stripe is locked only from there to the end
-- of the transaction, after every other lock it takes, so it neither holds
-- up a long transaction's neighbours nor joins a deadlock.
CREATE CONSTRAINT TRIGGER cairn_workspaces_version AFTER INSERT OR UPDATE OR DELETE ON workspaces
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cairn_bump_workspace_list();
