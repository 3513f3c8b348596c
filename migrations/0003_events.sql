-- Live events: every row change of workspaces and artifacts notifies channel
-- cairn_events with a small payload, and each workspace keeps the counts of
-- its artifacts by state.

-- Nothing may write artifacts between the back-fill and the triggers that
-- keep the counts from then on.
LOCK TABLE workspaces, artifacts IN SHARE ROW EXCLUSIVE MODE;

-- artifact_counts of the workspace JSON. Never computed by a scan at read
-- time: the statement triggers below keep them in the transaction of every
-- artifact insert, delete and state change.
ALTER TABLE workspaces
    ADD COLUMN IF NOT EXISTS artifacts_recorded       bigint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS artifacts_missing_object bigint NOT NULL DEFAULT 0;

-- Back-fill: the new columns start at 0, so only workspaces with artifacts
-- need a value.
UPDATE workspaces w
   SET artifacts_recorded = c.recorded, artifacts_missing_object = c.missing_object
  FROM (SELECT workspace_id,
               count(*) FILTER (WHERE state = 'RECORDED')       AS recorded,
               count(*) FILTER (WHERE state = 'MISSING_OBJECT') AS missing_object
          FROM artifacts GROUP BY workspace_id) c
 WHERE w.id = c.workspace_id;

-- The counts move by the transition tables of each statement: one UPDATE per
-- statement whatever its row count, and none when no count changes (a
-- rename, a description). Updating the workspace row makes the workspace
-- trigger notify too, so a count change reaches subscribers as a
-- workspace.upserted. A cascaded delete updates nothing: its workspace row
-- is already gone.
CREATE OR REPLACE FUNCTION cairn_count_artifacts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE workspaces w
           SET artifacts_recorded = w.artifacts_recorded + d.recorded,
               artifacts_missing_object = w.artifacts_missing_object + d.missing_object
          FROM (SELECT workspace_id,
                       count(*) FILTER (WHERE state = 'RECORDED')       AS recorded,
                       count(*) FILTER (WHERE state = 'MISSING_OBJECT') AS missing_object
                  FROM new_rows GROUP BY workspace_id) d
         WHERE w.id = d.workspace_id AND (d.recorded <> 0 OR d.missing_object <> 0);
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE workspaces w
           SET artifacts_recorded = w.artifacts_recorded - d.recorded,
               artifacts_missing_object = w.artifacts_missing_object - d.missing_object
          FROM (SELECT workspace_id,
                       count(*) FILTER (WHERE state = 'RECORDED')       AS recorded,
                       count(*) FILTER (WHERE state = 'MISSING_OBJECT') AS missing_object
                  FROM old_rows GROUP BY workspace_id) d
         WHERE w.id = d.workspace_id AND (d.recorded <> 0 OR d.missing_object <> 0);
    ELSE
        UPDATE workspaces w
           SET artifacts_recorded = w.artifacts_recorded + d.recorded,
               artifacts_missing_object = w.artifacts_missing_object + d.missing_object
          FROM (SELECT workspace_id, sum(recorded) AS recorded, sum(missing_object) AS missing_object
                  FROM (SELECT workspace_id, (state = 'RECORDED')::int AS recorded,
                               (state = 'MISSING_OBJECT')::int AS missing_object
                          FROM new_rows
                        UNION ALL
                        SELECT workspace_id, -(state = 'RECORDED')::int, -(state = 'MISSING_OBJECT')::int
                          FROM old_rows) moved
                 GROUP BY workspace_id) d
         WHERE w.id = d.workspace_id AND (d.recorded <> 0 OR d.missing_object <> 0);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER cairn_artifacts_count_insert AFTER INSERT ON artifacts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_artifacts();
CREATE OR REPLACE TRIGGER cairn_artifacts_count_update AFTER UPDATE ON artifacts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_artifacts();
CREATE OR REPLACE TRIGGER cairn_artifacts_count_delete AFTER DELETE ON artifacts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_artifacts();

-- Change notifications: {kind, op, id, workspace_id}, never the row, so a
-- payload stays far under the 8000-byte limit. FOR EACH ROW, so cascaded
-- artifact deletions notify too. A server loads the current row itself.
CREATE OR REPLACE FUNCTION cairn_notify_workspace() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    row_id text;
BEGIN
    IF TG_OP = 'DELETE' THEN
        row_id := OLD.id;
    ELSE
        row_id := NEW.id;
    END IF;
    PERFORM pg_notify('cairn_events', json_build_object(
        'kind', 'workspace', 'op', TG_OP, 'id', row_id, 'workspace_id', row_id)::text);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION cairn_notify_artifact() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    row_id text;
    workspace text;
BEGIN
    IF TG_OP = 'DELETE' THEN
        row_id := OLD.id;
        workspace := OLD.workspace_id;
    ELSE
        row_id := NEW.id;
        workspace := NEW.workspace_id;
    END IF;
    PERFORM pg_notify('cairn_events', json_build_object(
        'kind', 'artifact', 'op', TG_OP, 'id', row_id, 'workspace_id', workspace)::text);
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER cairn_workspaces_notify AFTER INSERT OR UPDATE OR DELETE ON workspaces
    FOR EACH ROW EXECUTE FUNCTION cairn_notify_workspace();
CREATE OR REPLACE TRIGGER cairn_artifacts_notify AFTER INSERT OR UPDATE OR DELETE ON artifacts
    FOR EACH ROW EXECUTE FUNCTION cairn_notify_artifact();
