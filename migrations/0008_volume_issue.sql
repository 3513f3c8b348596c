-- Why a READY workspace volume cannot take new containers now, as the
-- maintainer last found it (on Kubernetes, the node holding a ReadWriteOnce
-- volume is gone, cordoned, not ready or outside kubernetes.nodeSelector).
-- Kept on the row so that every replica answers the same GET, and so that
-- setting or clearing it is a workspace change its subscribers see. Both
-- NULL when there is none; the maintainer sets and clears them together.
ALTER TABLE workspaces
    ADD COLUMN IF NOT EXISTS volume_issue        text NULL,
    ADD COLUMN IF NOT EXISTS volume_issue_detail text NULL;
