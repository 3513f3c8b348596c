-- Register no longer copies: mint presigns the upload straight to a fresh
-- final key, and register takes the key the client hands back. A key
-- registers once: two rows naming one object would share its fate, and
-- deleting one would release the other's bytes.
--
-- Keys were always unique in practice (each copy minted a new ULID), so
-- the index builds on existing data; the old non-unique index is replaced.
CREATE UNIQUE INDEX IF NOT EXISTS artifacts_object_key_key ON artifacts (object_key);
DROP INDEX IF EXISTS artifacts_object_key_idx;
