-- The SHA-256 an artifact's current object was bound to when it was written:
-- the checksum its staging PUT was signed with, or the digest the stat sidecar
-- read from the volume file; standard padded base64 of the raw 32 bytes.
-- Clients verify downloads against it. Rows written before this column are
-- NULL: their digest was never recorded, and cairn never recomputes one.
ALTER TABLE artifacts ADD COLUMN IF NOT EXISTS sha256_b64 text NULL;
