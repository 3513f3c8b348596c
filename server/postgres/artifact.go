package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairn-dev/cairn"
)

const artifactColumns = `id, workspace_id, name, description, object_key, mime_type, size, state, sha256_b64,
	content_written_at, coalesce(created_at, to_timestamp(0)), coalesce(updated_at, to_timestamp(0))`

func scanArtifact(row pgx.Row) (*cairn.Artifact, error) {
	var a cairn.Artifact
	err := row.Scan(&a.ID, &a.WorkspaceID, &a.Name, &a.Description, &a.ObjectKey, &a.MIMEType, &a.Size,
		&a.State, &a.SHA256B64, &a.ContentWrittenAt, &a.CreatedAt, &a.UpdatedAt)
	if err != nil {
		return nil, err
	}
	a.ContentWrittenAt = cairn.Timestamp(a.ContentWrittenAt)
	a.CreatedAt, a.UpdatedAt = cairn.Timestamp(a.CreatedAt), cairn.Timestamp(a.UpdatedAt)
	return &a, nil
}

// InsertArtifact inserts a as given.
func (db *DB) InsertArtifact(ctx context.Context, a *cairn.Artifact) error {
	_, err := db.q.Exec(ctx, `INSERT INTO artifacts (id, workspace_id, name, description, object_key,
		mime_type, size, state, sha256_b64, content_written_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		a.ID, a.WorkspaceID, a.Name, a.Description, a.ObjectKey, a.MIMEType, a.Size, a.State, a.SHA256B64,
		a.ContentWrittenAt, a.CreatedAt, a.UpdatedAt)
	return artifactWriteError(err, a)
}

// FindArtifact reads one artifact.
func (db *DB) FindArtifact(ctx context.Context, id string) (*cairn.Artifact, error) {
	return db.findArtifact(ctx, id, "")
}

// LockArtifactRow reads one artifact and locks its row for the rest of the
// transaction.
func (db *DB) LockArtifactRow(ctx context.Context, id string) (*cairn.Artifact, error) {
	return db.findArtifact(ctx, id, " FOR UPDATE")
}

// LockArtifactRows locks a workspace's artifact rows, in ID order, for the
// rest of the transaction.
func (db *DB) LockArtifactRows(ctx context.Context, workspaceID string) error {
	if _, err := db.q.Exec(ctx, `SELECT 1 FROM artifacts WHERE workspace_id = $1 ORDER BY id FOR UPDATE`, workspaceID); err != nil {
		return internal("lock artifact rows", err)
	}
	return nil
}

func (db *DB) findArtifact(ctx context.Context, id, suffix string) (*cairn.Artifact, error) {
	a, err := scanArtifact(db.q.QueryRow(ctx, `SELECT `+artifactColumns+` FROM artifacts WHERE id = $1`+suffix, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, cairn.Errorf(cairn.ReasonArtifactNotFound, "artifact '%s' does not exist", id)
	}
	if err != nil {
		return nil, internal("find artifact", err)
	}
	return a, nil
}

// FindArtifacts lists a workspace's artifacts in (created_at, id) order.
func (db *DB) FindArtifacts(ctx context.Context, f cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
	states := make([]string, len(f.States))
	for i, s := range f.States {
		states[i] = string(s)
	}
	rows, err := db.q.Query(ctx, `SELECT `+artifactColumns+` FROM artifacts
		WHERE workspace_id = $1
		  AND ($2::text[] IS NULL OR name = ANY($2))
		  AND ($3::text[] IS NULL OR state = ANY($3))
		ORDER BY created_at, id OFFSET $4 LIMIT $5`,
		f.WorkspaceID, nilIfEmpty(f.Names), nilIfEmpty(states), f.Offset, rowLimit(f.Page))
	if err != nil {
		return nil, internal("list artifacts", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cairn.Artifact, error) {
		return scanArtifact(row)
	})
	if err != nil {
		return nil, internal("list artifacts", err)
	}
	return list, nil
}

// ArtifactNameTaken reports whether the workspace has an artifact, in any
// state, with the name.
func (db *DB) ArtifactNameTaken(ctx context.Context, workspaceID, name string) (bool, error) {
	var taken bool
	err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM artifacts WHERE workspace_id = $1 AND name = $2)`,
		workspaceID, name).Scan(&taken)
	if err != nil {
		return false, internal("check artifact name", err)
	}
	return taken, nil
}

// UpdateArtifact writes the mutable columns of a.
func (db *DB) UpdateArtifact(ctx context.Context, a *cairn.Artifact) error {
	tag, err := db.q.Exec(ctx, `UPDATE artifacts SET name = $2, description = $3, object_key = $4,
		mime_type = $5, size = $6, state = $7, sha256_b64 = $8, content_written_at = $9, updated_at = $10
		WHERE id = $1`,
		a.ID, a.Name, a.Description, a.ObjectKey, a.MIMEType, a.Size, a.State, a.SHA256B64, a.ContentWrittenAt,
		a.UpdatedAt)
	if err != nil {
		return artifactWriteError(err, a)
	}
	if tag.RowsAffected() == 0 {
		return cairn.Errorf(cairn.ReasonArtifactNotFound, "artifact '%s' does not exist", a.ID)
	}
	return nil
}

// DeleteArtifact deletes one artifact row.
func (db *DB) DeleteArtifact(ctx context.Context, id string) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM artifacts WHERE id = $1`, id)
	if err != nil {
		return internal("delete artifact", err)
	}
	if tag.RowsAffected() == 0 {
		return cairn.Errorf(cairn.ReasonArtifactNotFound, "artifact '%s' does not exist", id)
	}
	return nil
}

// ReleaseObject records key as released; a key released twice keeps its
// first release time.
func (db *DB) ReleaseObject(ctx context.Context, key, workspaceID string, at time.Time) error {
	_, err := db.q.Exec(ctx, `INSERT INTO released_objects (object_key, workspace_id, released_at)
		VALUES ($1, $2, $3) ON CONFLICT (object_key) DO NOTHING`, key, workspaceID, at)
	if err != nil {
		return internal("release object", err)
	}
	return nil
}

// ObjectKeyUsed reports whether a row names key, or once did and released
// it.
func (db *DB) ObjectKeyUsed(ctx context.Context, key string) (bool, error) {
	var used bool
	err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM artifacts WHERE object_key = $1)
		OR EXISTS (SELECT 1 FROM released_objects WHERE object_key = $1)`, key).Scan(&used)
	if err != nil {
		return false, internal("look an object key up", err)
	}
	return used, nil
}

// objectKeyIndex is the unique index that lets a key register once.
const objectKeyIndex = "artifacts_object_key_key"

func artifactWriteError(err error, a *cairn.Artifact) error {
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == objectKeyIndex:
		return &cairn.Error{Reason: cairn.ReasonStagingKeyUsed,
			Detail: "staging object key '" + a.ObjectKey + "' was already registered", Err: err}
	case isUniqueViolation(err):
		return &cairn.Error{Reason: cairn.ReasonNameTaken,
			Detail: "workspace " + a.WorkspaceID + " already has an artifact named '" + a.Name + "'", Err: err}
	default:
		return internal("write artifact", err)
	}
}
