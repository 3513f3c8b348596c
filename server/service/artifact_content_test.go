package service_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

func TestReplaceContent(t *testing.T) {
	t.Parallel()
	pdf := []byte("%PDF-1.4\n")

	t.Run("ErrInvalidParametersMissingKey", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		lookups := 0
		f.store.FindArtifactFunc = func(_ context.Context, id string) (*cairn.Artifact, error) {
			lookups++
			return nil, errArtifactNotFound(id)
		}

		a, err := svc.ReplaceContent(t.Context(), ulid.Make().String(), cairn.Staged{Key: ""})
		require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err))
		require.Nil(t, a)
		require.Zero(t, lookups)
	})

	t.Run("ErrArtifactNotFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		old := f.newArtifact(uuid.NewString())
		f.artifactRow(old)
		fl := f.flow()
		key := stagingKeyFor(old.WorkspaceID)
		fl.stage(key, int64(len(pdf)), pdf)

		a, err := svc.ReplaceContent(t.Context(), ulid.Make().String(), cairn.Staged{Key: key})
		require.Equal(t, cairn.ReasonArtifactNotFound, cairn.ErrorReason(err))
		require.Nil(t, a)
		require.Empty(t, fl.calls)
	})

	t.Run("ErrStagingKeyInvalid", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name string
			key  func(ws string) string
		}{
			{"OtherWorkspace", func(string) string { return stagingKeyFor(uuid.NewString()) }},
			{"TrailingSlash", func(ws string) string { return stagingKeyFor(ws) + "/" }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				old := f.newArtifact(uuid.NewString())
				f.artifactRow(old)
				fl := f.flow()
				key := tt.key(old.WorkspaceID)
				fl.stage(key, int64(len(pdf)), pdf)

				a, err := svc.ReplaceContent(t.Context(), old.ID, cairn.Staged{Key: key})
				require.Equal(t, cairn.ReasonStagingKeyInvalid, cairn.ErrorReason(err))
				require.Equal(t, "staging object key '"+key+"' was not issued for workspace "+old.WorkspaceID,
					cairn.ErrorDetail(err), "the key is checked against the artifact's own workspace")
				require.Nil(t, a)
				require.Empty(t, fl.calls)
			})
		}
	})

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		for _, state := range []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject} {
			t.Run("OKFrom"+string(state), func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				old := f.newArtifact(uuid.NewString())
				old.State = state
				f.artifactRow(old)
				fl := f.flow()
				key := stagingKeyFor(old.WorkspaceID)
				fl.stage(key, 9000, pdf)

				ctx := cairn.WithActor(t.Context(), "alice")
				a, err := svc.ReplaceContent(ctx, old.ID, cairn.Staged{Key: key})
				require.NoError(t, err)

				require.Len(t, fl.copies, 1)
				final := fl.copies[0].dst
				require.Regexp(t, `^store/`+old.WorkspaceID+`/`+keyULID+`$`, final)
				require.NotEqual(t, old.ObjectKey, final)
				require.Equal(t, objectCopy{src: key, dst: final, contentType: "application/pdf"}, fl.copies[0])

				want := old
				want.ObjectKey, want.MIMEType, want.Size = final, "application/pdf", 9000
				want.State, want.ContentWrittenAt, want.UpdatedAt = cairn.ArtifactRecorded, f.now, f.now
				require.Equal(t, &want, a)
				require.Equal(t, []cairn.Artifact{want}, fl.updated)
				require.Equal(t, []releasedObject{{key: old.ObjectKey, workspaceID: old.WorkspaceID, at: f.now}}, fl.released,
					"the old key is released, not deleted")

				require.Len(t, f.audits, 1)
				ev := f.audits[0]
				require.Equal(t, cairn.AuditUpdateArtifactObject, ev.Type)
				require.Equal(t, map[string]any{
					"workspace_id": old.WorkspaceID, "artifact_id": old.ID, "artifact_name": old.Name,
					"old_object_key": old.ObjectKey, "old_mime_type": old.MIMEType, "old_size": old.Size,
					"new_object_key": final, "new_mime_type": "application/pdf", "new_size": int64(9000),
				}, ev.Metadata)
				require.Equal(t, new("alice"), ev.Actor)

				require.Equal(t, []string{"stat", "readhead", "copy", "begin", "update", "release", "audit", "commit", "delete " + key},
					fl.calls, "copy, then the row in one transaction, then the staging delete")
			})
		}
	})

	t.Run("ErrRowVanished", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		old := f.newArtifact(uuid.NewString())
		f.artifactRow(old)
		f.store.LockArtifactRowFunc = func(_ context.Context, id string) (*cairn.Artifact, error) {
			return nil, errArtifactNotFound(id) // deleted since the lookup
		}
		fl := f.flow()
		key := stagingKeyFor(old.WorkspaceID)
		fl.stage(key, int64(len(pdf)), pdf)

		a, err := svc.ReplaceContent(t.Context(), old.ID, cairn.Staged{Key: key})
		require.Equal(t, cairn.ReasonArtifactNotFound, cairn.ErrorReason(err))
		require.Nil(t, a)
		require.Len(t, fl.copies, 1)
		require.Equal(t, []string{"stat", "readhead", "copy", "begin", "rollback", "delete " + fl.copies[0].dst}, fl.calls,
			"the new copy is deleted; the staging object is kept")
		require.Empty(t, fl.released)
		require.Empty(t, f.audits)
	})

	t.Run("ErrWriteFailed", func(t *testing.T) {
		t.Parallel()
		boom := cairn.Internal("database error", errors.New("connection reset"))
		tests := []struct {
			name string
			fail func(*fixture)
		}{
			{"ErrUpdate", func(f *fixture) {
				f.store.UpdateArtifactFunc = func(context.Context, *cairn.Artifact) error { return boom }
			}},
			{"ErrRelease", func(f *fixture) {
				f.store.ReleaseObjectFunc = func(context.Context, string, string, time.Time) error { return boom }
			}},
			{"ErrAudit", func(f *fixture) {
				f.store.InsertAuditFunc = func(context.Context, *cairn.AuditEvent) error { return boom }
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				old := f.newArtifact(uuid.NewString())
				f.artifactRow(old)
				fl := f.flow()
				key := stagingKeyFor(old.WorkspaceID)
				fl.stage(key, int64(len(pdf)), pdf)
				tt.fail(f)

				a, err := svc.ReplaceContent(t.Context(), old.ID, cairn.Staged{Key: key})
				require.ErrorIs(t, err, boom)
				require.Nil(t, a)
				require.Len(t, fl.copies, 1)
				require.Equal(t, []string{fl.copies[0].dst}, fl.deleted,
					"the transaction rolled back, so the new copy is deleted and the staging object kept")
				require.Empty(t, f.audits)
			})
		}
	})

	t.Run("ErrIngest", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			size   int64
			fail   func(*fixture)
			reason cairn.Reason
		}{
			{"ErrStagingNotFound", 9, func(f *fixture) {
				f.objects.StatFunc = func(_ context.Context, key string) (*service.ObjectInfo, error) {
					return nil, fmt.Errorf("stat %s: %w", key, service.ErrObjectNotFound)
				}
			}, cairn.ReasonStagingNotFound},
			{"ErrObjectTooLarge", 1<<30 + 1, func(*fixture) {}, cairn.ReasonObjectTooLarge},
			{"ErrStoreUnavailable", 9, func(f *fixture) {
				f.objects.CopyFunc = func(context.Context, string, string, string) error { return errStoreDown }
			}, cairn.ReasonStoreUnavailable},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				old := f.newArtifact(uuid.NewString())
				f.artifactRow(old)
				fl := f.flow()
				key := stagingKeyFor(old.WorkspaceID)
				fl.stage(key, tt.size, pdf)
				tt.fail(f)

				a, err := svc.ReplaceContent(t.Context(), old.ID, cairn.Staged{Key: key})
				require.Equal(t, tt.reason, cairn.ErrorReason(err))
				require.Nil(t, a)
				require.Empty(t, fl.updated)
				require.Empty(t, fl.released)
				require.Empty(t, fl.deleted)
				require.Empty(t, f.audits)
			})
		}
	})
}
