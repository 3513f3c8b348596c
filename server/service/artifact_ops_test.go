package service_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

func TestGetArtifact(t *testing.T) {
	t.Parallel()

	t.Run("ErrArtifactNotFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.artifactRow(f.newArtifact(uuid.NewString()))

		d, err := svc.GetArtifact(t.Context(), ulid.Make().String(), cairn.ArtifactGet{Presign: true})
		require.Equal(t, cairn.ReasonArtifactNotFound, cairn.ErrorReason(err))
		require.Nil(t, d)
	})

	t.Run("OKNoPresign", func(t *testing.T) {
		t.Parallel()
		for _, state := range []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject} {
			t.Run("OK"+string(state), func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				a := f.newArtifact(uuid.NewString())
				a.State = state
				f.artifactRow(a)
				presigns := 0
				f.objects.PresignGetFunc = func(context.Context, string, time.Duration, string) (string, error) {
					presigns++
					return "u", nil
				}

				d, err := svc.GetArtifact(t.Context(), a.ID, cairn.ArtifactGet{TTL: time.Minute})
				require.NoError(t, err)
				require.Equal(t, &cairn.ArtifactDetail{Artifact: &a}, d)
				require.Zero(t, presigns)
			})
		}
	})

	t.Run("ErrObjectMissing", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		a := f.newArtifact(uuid.NewString())
		a.State = cairn.ArtifactMissingObject
		f.artifactRow(a)
		presigns := 0
		f.objects.PresignGetFunc = func(context.Context, string, time.Duration, string) (string, error) {
			presigns++
			return "u", nil
		}

		d, err := svc.GetArtifact(t.Context(), a.ID, cairn.ArtifactGet{Presign: true})
		require.Equal(t, cairn.ReasonObjectMissing, cairn.ErrorReason(err))
		require.Equal(t, "artifact "+a.ID+" is 'MISSING_OBJECT'; only a 'RECORDED' artifact has a servable object",
			cairn.ErrorDetail(err))
		require.Nil(t, d)
		require.Zero(t, presigns)
	})

	t.Run("OKPresignTTL", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name string
			max  time.Duration // the configured GetURLMaxTTL; zero takes the default
			ttl  time.Duration
			want time.Duration
		}{
			{"OKDefaultIsMax", 0, 0, 900 * time.Second},
			{"OKSmallerKept", 0, time.Minute, time.Minute},
			{"OKOneSecond", 0, time.Second, time.Second},
			{"OKEqualKept", 0, 900 * time.Second, 900 * time.Second},
			{"OKLargerCapped", 0, 901 * time.Second, 900 * time.Second},
			{"OKMuchLargerCapped", 0, 7 * 24 * time.Hour, 900 * time.Second},
			{"OKConfiguredMax", time.Hour, 0, time.Hour},
			{"OKConfiguredMaxCaps", time.Hour, 2 * time.Hour, time.Hour},
			{"OKConfiguredMaxSmaller", time.Hour, 30 * time.Minute, 30 * time.Minute},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				_, f := setup(t)
				svc := f.serviceWith(service.Config{GetURLMaxTTL: tt.max})
				a := f.newArtifact(uuid.NewString())
				f.artifactRow(a)
				type presign struct {
					key string
					ttl time.Duration
				}
				var presigns []presign
				f.objects.StatFunc = func(_ context.Context, key string) (*service.ObjectInfo, error) {
					return &service.ObjectInfo{Key: key, Size: a.Size}, nil
				}
				f.objects.PresignGetFunc = func(_ context.Context, key string, ttl time.Duration, _ string) (string, error) {
					presigns = append(presigns, presign{key, ttl})
					return "https://s3.example/get?sig", nil
				}

				d, err := svc.GetArtifact(t.Context(), a.ID, cairn.ArtifactGet{Presign: true, TTL: tt.ttl})
				require.NoError(t, err)
				require.Equal(t, &cairn.ArtifactDetail{Artifact: &a, GetURL: "https://s3.example/get?sig"}, d)
				require.Equal(t, []presign{{a.ObjectKey, tt.want}}, presigns)
			})
		}
	})

	t.Run("ErrStoreUnavailable", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		a := f.newArtifact(uuid.NewString())
		f.artifactRow(a)
		f.objects.StatFunc = func(_ context.Context, key string) (*service.ObjectInfo, error) {
			return &service.ObjectInfo{Key: key}, nil
		}
		f.objects.PresignGetFunc = func(context.Context, string, time.Duration, string) (string, error) { return "", errStoreDown }

		d, err := svc.GetArtifact(t.Context(), a.ID, cairn.ArtifactGet{Presign: true})
		require.ErrorIs(t, err, errStoreDown)
		require.Nil(t, d)
	})

	t.Run("ErrObjectGoneIsFlagged", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		a := f.newArtifact(uuid.NewString())
		f.artifactRow(a)
		f.objects.StatFunc = func(_ context.Context, key string) (*service.ObjectInfo, error) {
			return nil, fmt.Errorf("stat %s: %w", key, service.ErrObjectNotFound)
		}
		var flagged []string
		var flaggedAt time.Time
		f.store.FlagMissingFunc = func(_ context.Context, got *cairn.Artifact, at time.Time) (bool, error) {
			flagged, flaggedAt = append(flagged, got.ID+" "+got.ObjectKey), at
			return true, nil
		}
		presigns := 0
		f.objects.PresignGetFunc = func(context.Context, string, time.Duration, string) (string, error) { presigns++; return "u", nil }

		d, err := svc.GetArtifact(t.Context(), a.ID, cairn.ArtifactGet{Presign: true})
		require.Equal(t, cairn.ReasonObjectMissing, cairn.ErrorReason(err))
		require.Nil(t, d)
		require.Equal(t, []string{a.ID + " " + a.ObjectKey}, flagged, "flagged on the spot")
		require.Equal(t, f.now, flaggedAt)
		require.Zero(t, presigns, "no URL to an object that is not there")
	})

	t.Run("OKStatFailsFlagsNothing", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		a := f.newArtifact(uuid.NewString())
		f.artifactRow(a)
		f.objects.StatFunc = func(context.Context, string) (*service.ObjectInfo, error) { return nil, errStoreDown }
		f.objects.PresignGetFunc = func(context.Context, string, time.Duration, string) (string, error) { return "u", nil }

		d, err := svc.GetArtifact(t.Context(), a.ID, cairn.ArtifactGet{Presign: true})
		require.NoError(t, err, "a store that cannot answer is no proof the object is gone: signing is local")
		require.Equal(t, "u", d.GetURL)
	})
}

func TestFindArtifacts(t *testing.T) {
	t.Parallel()

	rows := func(n int) []*cairn.Artifact {
		out := make([]*cairn.Artifact, n)
		for i := range out {
			out[i] = &cairn.Artifact{Name: "a"}
		}
		return out
	}

	t.Run("ErrValidation", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			filter cairn.ArtifactFilter
			reason cairn.Reason
		}{
			{"ErrInvalidQueryNegativeOffset", cairn.ArtifactFilter{Page: cairn.Page{Offset: -1}}, cairn.ReasonInvalidQuery},
			{"ErrInvalidQueryNegativeLimit", cairn.ArtifactFilter{Page: cairn.Page{Limit: -1}}, cairn.ReasonInvalidQuery},
			{"ErrInvalidQueryLimitTooLarge", cairn.ArtifactFilter{Page: cairn.Page{Limit: cairn.MaxListLimit + 1}}, cairn.ReasonInvalidQuery},
			{"ErrInvalidName", cairn.ArtifactFilter{Names: []string{"report", "re port"}}, cairn.ReasonInvalidName},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				calls := 0
				f.store.FindWorkspaceFunc = func(_ context.Context, id string) (*cairn.Workspace, error) {
					calls++
					return nil, errNotFound(id)
				}
				f.store.FindArtifactsFunc = func(context.Context, cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
					calls++
					return nil, nil
				}
				tt.filter.WorkspaceID = uuid.NewString()

				list, err := svc.FindArtifacts(t.Context(), tt.filter)
				require.Equal(t, tt.reason, cairn.ErrorReason(err))
				require.Nil(t, list)
				require.Zero(t, calls)
			})
		}
	})

	t.Run("OKStates", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			states []cairn.ArtifactState
			want   []cairn.ArtifactState
		}{
			{"OKDefaultRecorded", nil, []cairn.ArtifactState{cairn.ArtifactRecorded}},
			{"OKMissingOnly", []cairn.ArtifactState{cairn.ArtifactMissingObject}, []cairn.ArtifactState{cairn.ArtifactMissingObject}},
			{"OKBoth", []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject},
				[]cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				ws := f.storedWorkspace(cairn.VolumeNone)
				var filters []cairn.ArtifactFilter
				f.store.FindArtifactsFunc = func(_ context.Context, flt cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
					filters = append(filters, flt)
					return rows(2), nil
				}
				in := cairn.ArtifactFilter{WorkspaceID: ws.ID, Names: []string{"report"}, States: tt.states, Page: cairn.Page{Offset: 3, Limit: 7}}

				list, err := svc.FindArtifacts(t.Context(), in)
				require.NoError(t, err)
				require.Len(t, list, 2)
				want := in
				want.States = tt.want
				require.Equal(t, []cairn.ArtifactFilter{want}, filters)
			})
		}
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.row(f.newWorkspace(cairn.VolumeNone))
		lists := 0
		f.store.FindArtifactsFunc = func(context.Context, cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
			lists++
			return nil, nil
		}

		list, err := svc.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: uuid.NewString()})
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
		require.Nil(t, list)
		require.Zero(t, lists)
	})

	t.Run("ErrStoreFailure", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		boom := cairn.Internal("database error", errors.New("connection reset"))
		f.store.FindArtifactsFunc = func(context.Context, cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
			return nil, boom
		}

		list, err := svc.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: ws.ID})
		require.ErrorIs(t, err, boom)
		require.Nil(t, list)
	})

	t.Run("ErrListTooLarge", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		f.store.FindArtifactsFunc = func(context.Context, cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
			return rows(cairn.MaxUnpagedListLength + 1), nil
		}

		list, err := svc.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: ws.ID})
		require.Equal(t, cairn.ReasonListTooLarge, cairn.ErrorReason(err))
		require.Equal(t, "more than 10000 rows match; page with 'limit' (at most 1000) and 'offset'", cairn.ErrorDetail(err))
		require.Nil(t, list)
	})

	t.Run("OKUnpagedAtLimit", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		f.store.FindArtifactsFunc = func(context.Context, cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
			return rows(cairn.MaxUnpagedListLength), nil
		}

		list, err := svc.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: ws.ID})
		require.NoError(t, err)
		require.Len(t, list, cairn.MaxUnpagedListLength)
	})
}

func TestRenameArtifact(t *testing.T) {
	t.Parallel()

	t.Run("ErrInvalidName", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		txs := 0
		f.store.WithTxFunc = func(context.Context, func(service.Store) error) error {
			txs++
			return nil
		}

		a, err := svc.RenameArtifact(t.Context(), ulid.Make().String(), "bad name")
		require.Equal(t, cairn.ReasonInvalidName, cairn.ErrorReason(err))
		require.Nil(t, a)
		require.Zero(t, txs)
	})

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name    string
			newName string
		}{
			{"OKNewName", "summary"},
			{"OKSameName", "report"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				old := f.newArtifact(uuid.NewString())
				f.artifactRow(old)
				fl := f.flow()

				ctx := cairn.WithActor(t.Context(), "alice")
				a, err := svc.RenameArtifact(ctx, old.ID, tt.newName)
				require.NoError(t, err)
				want := old
				want.Name, want.UpdatedAt = tt.newName, f.now
				require.Equal(t, &want, a)
				require.Equal(t, []cairn.Artifact{want}, fl.updated, "only the name and updated_at move")
				require.Equal(t, []string{"begin", "update", "audit", "commit"}, fl.calls)

				require.Len(t, f.audits, 1)
				ev := f.audits[0]
				require.Equal(t, cairn.AuditRenameArtifact, ev.Type)
				require.Equal(t, map[string]any{
					"workspace_id": old.WorkspaceID, "artifact_id": old.ID,
					"old_artifact_name": old.Name, "new_artifact_name": tt.newName,
				}, ev.Metadata)
				require.Equal(t, new("alice"), ev.Actor)
			})
		}
	})

	t.Run("ErrArtifactNotFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.artifactRow(f.newArtifact(uuid.NewString()))
		fl := f.flow()

		a, err := svc.RenameArtifact(t.Context(), ulid.Make().String(), "summary")
		require.Equal(t, cairn.ReasonArtifactNotFound, cairn.ErrorReason(err))
		require.Nil(t, a)
		require.Empty(t, fl.updated)
		require.Empty(t, f.audits)
	})

	t.Run("ErrNameTaken", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		old := f.newArtifact(uuid.NewString())
		f.artifactRow(old)
		fl := f.flow()
		taken := cairn.Errorf(cairn.ReasonNameTaken, "workspace %s already has an artifact named 'summary'", old.WorkspaceID)
		f.store.UpdateArtifactFunc = func(context.Context, *cairn.Artifact) error { return taken }

		a, err := svc.RenameArtifact(t.Context(), old.ID, "summary")
		require.ErrorIs(t, err, taken)
		require.Nil(t, a)
		require.Equal(t, []string{"begin", "rollback"}, fl.calls)
		require.Empty(t, f.audits)
	})
}

func TestSetArtifactDescription(t *testing.T) {
	t.Parallel()

	t.Run("ErrInvalidParameters", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		txs := 0
		f.store.WithTxFunc = func(context.Context, func(service.Store) error) error {
			txs++
			return nil
		}
		long := strings.Repeat("d", cairn.MaxDescriptionBytes+1)

		a, err := svc.SetArtifactDescription(t.Context(), ulid.Make().String(), &long)
		require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err))
		require.Nil(t, a)
		require.Zero(t, txs)
	})

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		atLimit := strings.Repeat("d", cairn.MaxDescriptionBytes)
		tests := []struct {
			name string
			desc *string
		}{
			{"OKSet", new("new words")},
			{"OKEmpty", new("")},
			{"OKAtLimit", &atLimit},
			{"OKClear", nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				old := f.newArtifact(uuid.NewString())
				f.artifactRow(old)
				fl := f.flow()

				a, err := svc.SetArtifactDescription(t.Context(), old.ID, tt.desc)
				require.NoError(t, err)
				want := old
				want.Description, want.UpdatedAt = tt.desc, f.now
				require.Equal(t, &want, a)
				require.Equal(t, []cairn.Artifact{want}, fl.updated)
				require.Empty(t, f.audits, "description edits are not audited")
			})
		}
	})

	t.Run("ErrArtifactNotFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.artifactRow(f.newArtifact(uuid.NewString()))
		fl := f.flow()

		a, err := svc.SetArtifactDescription(t.Context(), ulid.Make().String(), new("x"))
		require.Equal(t, cairn.ReasonArtifactNotFound, cairn.ErrorReason(err))
		require.Nil(t, a)
		require.Empty(t, fl.updated)
	})
}

func TestDeleteArtifact(t *testing.T) {
	t.Parallel()

	// recordDeletes records the IDs of the store's row deletes.
	recordDeletes := func(f *fixture, fl *artifactFlow) *[]string {
		var out []string
		f.store.DeleteArtifactFunc = func(_ context.Context, id string) error {
			fl.record("delete row")
			out = append(out, id)
			return nil
		}
		return &out
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		a := f.newArtifact(uuid.NewString())
		f.artifactRow(a)
		fl := f.flow()
		deletes := recordDeletes(f, fl)

		err := svc.DeleteArtifact(cairn.WithActor(t.Context(), "alice"), a.ID)
		require.NoError(t, err)
		require.Equal(t, []string{a.ID}, *deletes)
		require.Equal(t, []releasedObject{{key: a.ObjectKey, workspaceID: a.WorkspaceID, at: f.now}}, fl.released)
		require.Equal(t, []string{"begin", "delete row", "release", "audit", "commit"}, fl.calls,
			"row delete, release and audit in one transaction; the object is left for the reaper")
		require.Empty(t, fl.deleted)

		require.Len(t, f.audits, 1)
		ev := f.audits[0]
		require.Equal(t, cairn.AuditDeleteArtifact, ev.Type)
		require.Equal(t, map[string]any{
			"workspace_id": a.WorkspaceID, "artifact_id": a.ID, "artifact_name": a.Name, "object_key": a.ObjectKey,
		}, ev.Metadata)
		require.Equal(t, new("alice"), ev.Actor)
	})

	t.Run("OKUnknownID", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.artifactRow(f.newArtifact(uuid.NewString()))
		fl := f.flow()
		deletes := recordDeletes(f, fl)

		err := svc.DeleteArtifact(t.Context(), ulid.Make().String())
		require.NoError(t, err, "deleting an unknown artifact succeeds")
		require.Empty(t, *deletes)
		require.Empty(t, fl.released)
		require.Empty(t, f.audits)
		require.Equal(t, []string{"begin", "commit"}, fl.calls)
	})

	t.Run("ErrStoreFailure", func(t *testing.T) {
		t.Parallel()
		boom := cairn.Internal("database error", errors.New("connection reset"))
		tests := []struct {
			name string
			fail func(*fixture)
		}{
			{"ErrLock", func(f *fixture) {
				f.store.LockArtifactRowFunc = func(context.Context, string) (*cairn.Artifact, error) { return nil, boom }
			}},
			{"ErrDelete", func(f *fixture) {
				f.store.DeleteArtifactFunc = func(context.Context, string) error { return boom }
			}},
			{"ErrRelease", func(f *fixture) {
				f.store.ReleaseObjectFunc = func(context.Context, string, string, time.Time) error { return boom }
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				a := f.newArtifact(uuid.NewString())
				f.artifactRow(a)
				fl := f.flow()
				recordDeletes(f, fl)
				tt.fail(f)

				err := svc.DeleteArtifact(t.Context(), a.ID)
				require.ErrorIs(t, err, boom)
				require.Equal(t, "rollback", fl.calls[len(fl.calls)-1])
				require.Empty(t, f.audits)
			})
		}
	})
}
