package service_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

func TestCreateWorkspace(t *testing.T) {
	t.Parallel()

	t.Run("ErrValidation", func(t *testing.T) {
		t.Parallel()
		long := strings.Repeat("d", cairn.MaxDescriptionBytes+1)
		tests := []struct {
			name   string
			create cairn.WorkspaceCreate
			reason cairn.Reason
		}{
			{"ErrInvalidNameEmpty", cairn.WorkspaceCreate{Name: ""}, cairn.ReasonInvalidName},
			{"ErrInvalidNameTooLong", cairn.WorkspaceCreate{Name: strings.Repeat("a", 129)}, cairn.ReasonInvalidName},
			{"ErrInvalidNameDot", cairn.WorkspaceCreate{Name: "a.b"}, cairn.ReasonInvalidName},
			{"ErrInvalidNameSpace", cairn.WorkspaceCreate{Name: "a b"}, cairn.ReasonInvalidName},
			{"ErrInvalidNameUnicode", cairn.WorkspaceCreate{Name: "café"}, cairn.ReasonInvalidName},
			{"ErrInvalidParametersDescription", cairn.WorkspaceCreate{Name: "ok", Description: &long}, cairn.ReasonInvalidParameters},
			{"ErrInvalidParametersSizeZero", cairn.WorkspaceCreate{Name: "ok", VolumeMetadata: &cairn.VolumeMetadata{SizeBytes: new(int64(0))}}, cairn.ReasonInvalidParameters},
			{"ErrInvalidParametersSizeNegative", cairn.WorkspaceCreate{Name: "ok", VolumeMetadata: &cairn.VolumeMetadata{SizeBytes: new(int64(-1))}}, cairn.ReasonInvalidParameters},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				txs := 0
				f.store.WithTxFunc = func(context.Context, func(service.Store) error) error {
					txs++
					return nil
				}

				ws, err := svc.CreateWorkspace(t.Context(), tt.create)
				require.Error(t, err)
				require.Equal(t, tt.reason, cairn.ErrorReason(err))
				require.Nil(t, ws)
				require.Zero(t, txs, "validation must come before any store call")
				require.Empty(t, f.audits)
			})
		}
	})

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		var inserted []cairn.Workspace
		f.store.InsertWorkspaceFunc = func(_ context.Context, ws *cairn.Workspace) error {
			inserted = append(inserted, *ws)
			return nil
		}
		desc := "notes"
		meta := &cairn.VolumeMetadata{SizeBytes: new(int64(1 << 30))}

		ctx := cairn.WithActor(t.Context(), "alice")
		ws, err := svc.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "alpha", Description: &desc, VolumeMetadata: meta})
		require.NoError(t, err)

		id, err := uuid.Parse(ws.ID)
		require.NoError(t, err)
		require.Equal(t, uuid.Version(4), id.Version())
		require.Equal(t, uuid.RFC4122, id.Variant())
		require.Equal(t, id.String(), ws.ID, "the ID is in canonical form")
		want := cairn.Workspace{
			ID:             ws.ID,
			Name:           "alpha",
			Description:    &desc,
			VolumeName:     appName + "-" + ws.ID,
			VolumeState:    cairn.VolumeNone,
			VolumeMetadata: meta,
			CreatedAt:      f.now,
			UpdatedAt:      f.now,
			LastActiveAt:   f.now,
		}
		require.Equal(t, &want, ws)
		require.Equal(t, []cairn.Workspace{want}, inserted)

		require.Len(t, f.audits, 1)
		ev := f.audits[0]
		require.Equal(t, cairn.AuditNewWorkspace, ev.Type)
		require.Equal(t, map[string]any{
			"workspace_id":   ws.ID,
			"workspace_name": "alpha",
			"volume_name":    appName + "-" + ws.ID,
		}, ev.Metadata)
		require.Equal(t, new("alice"), ev.Actor)
		require.Equal(t, f.now, ev.CreatedAt)
		_, err = ulid.ParseStrict(ev.ID)
		require.NoError(t, err)
	})

	t.Run("OKNoActor", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.InsertWorkspaceFunc = func(context.Context, *cairn.Workspace) error { return nil }

		_, err := svc.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "alpha"})
		require.NoError(t, err)
		require.Len(t, f.audits, 1)
		require.Nil(t, f.audits[0].Actor)
	})

	t.Run("OKAtLimits", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.InsertWorkspaceFunc = func(context.Context, *cairn.Workspace) error { return nil }
		name := strings.Repeat("aZ09-_", 21) + "xy" // 128 characters
		desc := strings.Repeat("d", cairn.MaxDescriptionBytes)

		ws, err := svc.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{
			Name: name, Description: &desc, VolumeMetadata: &cairn.VolumeMetadata{SizeBytes: new(int64(1))},
		})
		require.NoError(t, err)
		require.Equal(t, name, ws.Name)
	})

	t.Run("VolumeSizeBound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.runtime.MaxVolume = 1 << 30
		inserted := 0
		f.store.InsertWorkspaceFunc = func(context.Context, *cairn.Workspace) error {
			inserted++
			return nil
		}

		_, err := svc.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{
			Name: "big", VolumeMetadata: &cairn.VolumeMetadata{SizeBytes: new(int64(1<<30 + 1))},
		})
		require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err))
		require.Equal(t, "volume_metadata.size_bytes must be at most 1073741824 (1GiB), the largest volume this server provisions; got 1073741825",
			cairn.ErrorDetail(err))
		require.Zero(t, inserted, "nothing is stored")

		ws, err := svc.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{
			Name: "fits", VolumeMetadata: &cairn.VolumeMetadata{SizeBytes: new(int64(1 << 30))},
		})
		require.NoError(t, err, "the bound itself is allowed")
		require.Equal(t, int64(1<<30), *ws.VolumeMetadata.SizeBytes)
		require.Equal(t, 1, inserted)
	})

	t.Run("ErrNameTaken", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		taken := cairn.Errorf(cairn.ReasonNameTaken, "a workspace named 'alpha' already exists")
		f.store.InsertWorkspaceFunc = func(context.Context, *cairn.Workspace) error { return taken }

		ws, err := svc.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "alpha"})
		require.ErrorIs(t, err, taken)
		require.Nil(t, ws)
		require.Empty(t, f.audits)
	})

	t.Run("ErrAuditFailed", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.InsertWorkspaceFunc = func(context.Context, *cairn.Workspace) error { return nil }
		boom := errors.New("audit insert failed")
		f.store.InsertAuditFunc = func(context.Context, *cairn.AuditEvent) error { return boom }

		ws, err := svc.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "alpha"})
		require.ErrorIs(t, err, boom, "the transaction fails with its audit row")
		require.Nil(t, ws)
	})
}

func TestFindWorkspaces(t *testing.T) {
	t.Parallel()

	rows := func(n int) []*cairn.Workspace {
		out := make([]*cairn.Workspace, n)
		for i := range out {
			out[i] = &cairn.Workspace{Name: "ws"}
		}
		return out
	}

	t.Run("ErrValidation", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			filter cairn.WorkspaceFilter
			reason cairn.Reason
		}{
			{"ErrInvalidQueryNegativeOffset", cairn.WorkspaceFilter{Page: cairn.Page{Offset: -1}}, cairn.ReasonInvalidQuery},
			{"ErrInvalidQueryNegativeLimit", cairn.WorkspaceFilter{Page: cairn.Page{Limit: -1}}, cairn.ReasonInvalidQuery},
			{"ErrInvalidQueryLimitTooLarge", cairn.WorkspaceFilter{Page: cairn.Page{Limit: cairn.MaxListLimit + 1}}, cairn.ReasonInvalidQuery},
			{"ErrInvalidName", cairn.WorkspaceFilter{Names: []string{"alpha", "bad name"}}, cairn.ReasonInvalidName},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				calls := 0
				f.store.FindWorkspacesFunc = func(context.Context, cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
					calls++
					return nil, nil
				}

				list, err := svc.FindWorkspaces(t.Context(), tt.filter)
				require.Equal(t, tt.reason, cairn.ErrorReason(err))
				require.Nil(t, list)
				require.Zero(t, calls)
			})
		}
	})

	t.Run("ErrListTooLarge", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.FindWorkspacesFunc = func(context.Context, cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
			return rows(cairn.MaxUnpagedListLength + 1), nil
		}

		list, err := svc.FindWorkspaces(t.Context(), cairn.WorkspaceFilter{})
		require.Equal(t, cairn.ReasonListTooLarge, cairn.ErrorReason(err))
		require.Nil(t, list)
	})

	t.Run("OKUnpagedAtLimit", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.store.FindWorkspacesFunc = func(context.Context, cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
			return rows(cairn.MaxUnpagedListLength), nil
		}

		list, err := svc.FindWorkspaces(t.Context(), cairn.WorkspaceFilter{})
		require.NoError(t, err)
		require.Len(t, list, cairn.MaxUnpagedListLength)
	})

	t.Run("OKPaged", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		want := rows(cairn.MaxUnpagedListLength + 1) // the count rule is for unpaged lists only
		var got []cairn.WorkspaceFilter
		f.store.FindWorkspacesFunc = func(_ context.Context, filter cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
			got = append(got, filter)
			return want, nil
		}
		filter := cairn.WorkspaceFilter{
			Names:        []string{"alpha", "beta"},
			VolumeStates: []cairn.VolumeState{cairn.VolumeReady},
			Page:         cairn.Page{Offset: 4, Limit: cairn.MaxListLimit},
		}

		list, err := svc.FindWorkspaces(t.Context(), filter)
		require.NoError(t, err)
		require.Equal(t, want, list)
		require.Equal(t, []cairn.WorkspaceFilter{filter}, got)
	})

	t.Run("ErrStore", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		down := cairn.Errorf(cairn.ReasonStoreUnavailable, "database unavailable")
		f.store.FindWorkspacesFunc = func(context.Context, cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
			return nil, down
		}

		_, err := svc.FindWorkspaces(t.Context(), cairn.WorkspaceFilter{})
		require.ErrorIs(t, err, down)
	})
}

func TestInspectWorkspace(t *testing.T) {
	t.Parallel()

	// block waits for the service's bound on ctx; the fallback keeps a
	// missing bound from hanging the test, which then fails on elapsed time.
	block := func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
			return errors.New("ctx was not bounded")
		}
	}
	dockerDown := cairn.Errorf(cairn.ReasonDockerUnavailable, "docker unavailable")

	tests := []struct {
		name  string
		count func(ctx context.Context, volume string) (map[string]int, error)
		want  int
	}{
		{
			name:  "OK",
			count: func(_ context.Context, v string) (map[string]int, error) { return map[string]int{v: 3}, nil },
			want:  3,
		},
		{
			name:  "OKNoContainer",
			count: func(_ context.Context, v string) (map[string]int, error) { return map[string]int{v: 0}, nil },
			want:  0,
		},
		{
			name:  "DockerFailed",
			count: func(context.Context, string) (map[string]int, error) { return nil, dockerDown },
			want:  -1,
		},
		{
			// The one slow case: a hung Docker costs this test 2 s.
			name:  "DockerTimedOut",
			count: func(ctx context.Context, _ string) (map[string]int, error) { return nil, block(ctx) },
			want:  -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			svc, f := setup(t)
			ws := f.storedWorkspace(cairn.VolumeReady)
			var (
				mu    sync.Mutex // a timed-out caller does not wait for the round
				asked [][]string
			)
			f.runtime.MountCountsFunc = func(ctx context.Context, volumes []string) (map[string]int, error) {
				mu.Lock()
				asked = append(asked, volumes)
				mu.Unlock()
				return tt.count(ctx, volumes[0])
			}

			start := time.Now()
			detail, err := svc.InspectWorkspace(t.Context(), ws.ID)
			require.NoError(t, err)
			// Under the stub's own 5 s: a loaded machine may be late to wake
			// the bounded call, but an unbounded one takes the full 5 s.
			require.Less(t, time.Since(start), 4*time.Second, "mount_count is bounded by 2 s")
			require.Equal(t, &ws, detail.Workspace)
			require.Equal(t, tt.want, detail.MountCount)
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, [][]string{{ws.VolumeName}}, asked)
		})
	}

	t.Run("NoneRowDoesNotAskDocker", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		asked := false
		f.runtime.MountCountsFunc = func(context.Context, []string) (map[string]int, error) {
			asked = true
			return map[string]int{ws.VolumeName: 7}, nil
		}
		require.Equal(t, -1, mustInspect(t, svc, ws.ID).MountCount)
		require.False(t, asked)
	})

	t.Run("TheVolumesSizeIsTheRuntimes", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ready := f.storedWorkspace(cairn.VolumeReady)
		f.runtime.MountCountsFunc = func(context.Context, []string) (map[string]int, error) { return nil, nil }
		var asked []string
		f.runtime.VolumeSizeFunc = func(_ context.Context, name string) (int64, error) {
			asked = append(asked, name)
			return 3 << 30, nil
		}
		require.EqualValues(t, 3<<30, mustInspect(t, svc, ready.ID).VolumeSizeBytes)
		require.Equal(t, []string{ready.VolumeName}, asked)
		none := f.storedWorkspace(cairn.VolumeNone)
		require.Zero(t, mustInspect(t, svc, none.ID).VolumeSizeBytes, "a NONE row has no volume to size")
		require.Len(t, asked, 1, "nor is it asked")
		f.row(ready)
		f.runtime.VolumeSizeFunc = func(context.Context, string) (int64, error) {
			return 0, cairn.Errorf(cairn.ReasonDockerUnavailable, "the engine is away")
		}
		require.Zero(t, mustInspect(t, svc, ready.ID).VolumeSizeBytes, "an engine that does not answer leaves it unknown")
	})

	// Concurrent callers share rounds: each round asks Docker once for all
	// of its callers' volumes, and a caller never gets the answer of a round
	// that had started before it asked.
	t.Run("OKConcurrentCallersShareRounds", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		const callers = 40
		var wss []cairn.Workspace
		byID := map[string]cairn.Workspace{}
		for range callers {
			ws := f.newWorkspace(cairn.VolumeReady)
			byID[ws.ID] = ws
			wss = append(wss, ws)
		}
		f.store.FindWorkspaceFunc = func(_ context.Context, id string) (*cairn.Workspace, error) {
			ws := byID[id]
			return &ws, nil
		}
		var (
			mu      sync.Mutex
			rounds  int
			started = make(chan struct{}, 1)
			release = make(chan struct{})
			once    sync.Once
		)
		free := func() { once.Do(func() { close(release) }) }
		defer free() // a failing check below must not leave the round hanging
		f.runtime.MountCountsFunc = func(_ context.Context, volumes []string) (map[string]int, error) {
			mu.Lock()
			rounds++
			first := rounds == 1
			mu.Unlock()
			if first {
				started <- struct{}{}
				<-release // hold the first round until every other caller has joined the next
			}
			counts := map[string]int{}
			for _, v := range volumes {
				counts[v] = len(volumes)
			}
			return counts, nil
		}

		got := make([]int, callers)
		var wg sync.WaitGroup
		wg.Go(func() { got[0] = mustInspect(t, svc, wss[0].ID).MountCount })
		<-started
		for i := 1; i < callers; i++ {
			wg.Go(func() { got[i] = mustInspect(t, svc, wss[i].ID).MountCount })
		}
		// Goroutines joining a wait: quick, but a loaded machine may take
		// its time to schedule them.
		require.Eventually(t, func() bool { return svc.MountCallersWaiting() == callers-1 }, 10*time.Second, time.Millisecond)
		free()
		wg.Wait()

		require.Equal(t, 2, rounds, "one round in flight, one for everyone who came during it")
		require.Equal(t, 1, got[0])
		for i := 1; i < callers; i++ {
			require.Equal(t, callers-1, got[i], "caller %d was answered by the second round", i)
		}
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.row(f.newWorkspace(cairn.VolumeReady))

		detail, err := svc.InspectWorkspace(t.Context(), uuid.NewString())
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
		require.Nil(t, detail)
	})
}

func TestRenameWorkspace(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)

		got, err := svc.RenameWorkspace(t.Context(), ws.ID, "beta")
		require.NoError(t, err)
		want := ws
		want.Name = "beta"
		want.UpdatedAt = f.now
		require.Equal(t, &want, got, "only the name and updated_at change; the volume keeps its name")
		require.Equal(t, []cairn.Workspace{want}, f.updates)

		require.Len(t, f.audits, 1)
		ev := f.audits[0]
		require.Equal(t, cairn.AuditRenameWorkspace, ev.Type)
		require.Equal(t, map[string]any{
			"workspace_id":       ws.ID,
			"old_workspace_name": "alpha",
			"new_workspace_name": "beta",
		}, ev.Metadata)
		require.Nil(t, ev.Actor)
	})

	t.Run("OKSameName", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)

		got, err := svc.RenameWorkspace(t.Context(), ws.ID, ws.Name)
		require.NoError(t, err)
		require.Equal(t, f.now, got.UpdatedAt)
		require.Len(t, f.audits, 1, "renaming to the current name is audited too")
		require.Equal(t, ws.Name, f.audits[0].Metadata["old_workspace_name"])
		require.Equal(t, ws.Name, f.audits[0].Metadata["new_workspace_name"])
	})

	t.Run("ErrInvalidName", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		txs := 0
		f.store.WithTxFunc = func(context.Context, func(service.Store) error) error {
			txs++
			return nil
		}

		got, err := svc.RenameWorkspace(t.Context(), uuid.NewString(), "bad name")
		require.Equal(t, cairn.ReasonInvalidName, cairn.ErrorReason(err))
		require.Nil(t, got)
		require.Zero(t, txs)
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		notFound := errNotFound("x")
		f.store.LockWorkspaceRowFunc = func(context.Context, string) (*cairn.Workspace, error) { return nil, notFound }

		got, err := svc.RenameWorkspace(t.Context(), "x", "beta")
		require.ErrorIs(t, err, notFound)
		require.Nil(t, got)
		require.Empty(t, f.audits)
	})

	t.Run("ErrNameTaken", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		taken := cairn.Errorf(cairn.ReasonNameTaken, "a workspace named 'beta' already exists")
		f.store.UpdateWorkspaceFunc = func(context.Context, *cairn.Workspace) error { return taken }

		got, err := svc.RenameWorkspace(t.Context(), ws.ID, "beta")
		require.ErrorIs(t, err, taken)
		require.Nil(t, got)
		require.Empty(t, f.audits)
	})
}

func TestSetWorkspaceVolumeMetadata(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		meta := &cairn.VolumeMetadata{SizeBytes: new(int64(42))}

		got, err := svc.SetWorkspaceVolumeMetadata(t.Context(), ws.ID, meta)
		require.NoError(t, err)
		want := ws
		want.VolumeMetadata = meta
		want.UpdatedAt = f.now
		require.Equal(t, &want, got)
		require.Equal(t, []cairn.Workspace{want}, f.updates)
		require.Empty(t, f.audits, "volume metadata edits are not audited")
	})

	t.Run("OKClear", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.newWorkspace(cairn.VolumeNone)
		ws.VolumeMetadata = &cairn.VolumeMetadata{SizeBytes: new(int64(42))}
		f.row(ws)

		got, err := svc.SetWorkspaceVolumeMetadata(t.Context(), ws.ID, nil)
		require.NoError(t, err)
		require.Nil(t, got.VolumeMetadata)
		require.Len(t, f.updates, 1)
		require.Nil(t, f.updates[0].VolumeMetadata)
	})

	t.Run("ErrVolumeExists", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)

		got, err := svc.SetWorkspaceVolumeMetadata(t.Context(), ws.ID, &cairn.VolumeMetadata{SizeBytes: new(int64(42))})
		require.Equal(t, cairn.ReasonVolumeExists, cairn.ErrorReason(err))
		require.Equal(t, "workspace "+ws.ID+" already has a persistent volume ('"+ws.VolumeName+
			"' is 'READY'); its volume metadata can no longer be changed", cairn.ErrorDetail(err))
		require.Nil(t, got)
		require.Empty(t, f.updates)
	})

	t.Run("ErrInvalidParameters", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		txs := 0
		f.store.WithTxFunc = func(context.Context, func(service.Store) error) error {
			txs++
			return nil
		}

		_, err := svc.SetWorkspaceVolumeMetadata(t.Context(), uuid.NewString(), &cairn.VolumeMetadata{SizeBytes: new(int64(0))})
		require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err))
		require.Zero(t, txs)
	})

	t.Run("ErrAboveBound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.runtime.MaxVolume = 1 << 30
		ws := f.storedWorkspace(cairn.VolumeNone)

		_, err := svc.SetWorkspaceVolumeMetadata(t.Context(), ws.ID, &cairn.VolumeMetadata{SizeBytes: new(int64(2 << 30))})
		require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err))
		require.Contains(t, cairn.ErrorDetail(err), "must be at most 1073741824 (1GiB)")
		require.Empty(t, f.updates)
	})
}

func TestDeleteWorkspace(t *testing.T) {
	t.Parallel()

	// deletes records the store's deletes and whether the workspace lock was
	// held, exclusively, at the time.
	type deleted struct {
		id         string
		releasedAt time.Time
		locked     bool
	}
	recordDeletes := func(f *fixture) *[]deleted {
		var out []deleted
		f.store.DeleteWorkspaceFunc = func(_ context.Context, id string, releasedAt time.Time) error {
			locked := f.held && len(f.locks) == 1 && f.locks[0] == service.LockExclusive
			out = append(out, deleted{id: id, releasedAt: releasedAt, locked: locked})
			return nil
		}
		return &out
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		f.lock()
		deletes := recordDeletes(f)

		err := svc.DeleteWorkspace(cairn.WithActor(t.Context(), "alice"), ws.ID)
		require.NoError(t, err)
		require.Equal(t, []deleted{{id: ws.ID, releasedAt: f.now, locked: true}}, *deletes,
			"the row is deleted under the exclusive workspace lock")
		require.False(t, f.held)
		require.Equal(t, 1, f.releases)

		require.Len(t, f.audits, 1)
		ev := f.audits[0]
		require.Equal(t, cairn.AuditDeleteWorkspace, ev.Type)
		require.Equal(t, map[string]any{"workspace_id": ws.ID, "workspace_name": ws.Name}, ev.Metadata)
		require.Equal(t, new("alice"), ev.Actor)
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.row(f.newWorkspace(cairn.VolumeNone))
		f.lock()
		deletes := recordDeletes(f)

		err := svc.DeleteWorkspace(t.Context(), uuid.NewString())
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
		require.Empty(t, f.locks, "an unknown workspace is refused before locking")
		require.Empty(t, *deletes)
	})

	t.Run("ErrVolumeExists", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)
		f.lock()
		deletes := recordDeletes(f)

		err := svc.DeleteWorkspace(t.Context(), ws.ID)
		require.Equal(t, cairn.ReasonVolumeExists, cairn.ErrorReason(err))
		require.Equal(t, "workspace "+ws.ID+" still has a persistent volume ('"+ws.VolumeName+
			"' is 'READY'); delete the volume first", cairn.ErrorDetail(err))
		require.Empty(t, *deletes)
		require.Empty(t, f.audits)
		require.Equal(t, 1, f.releases)
	})

	t.Run("ErrWorkspaceBusy", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		busy := cairn.Errorf(cairn.ReasonWorkspaceBusy, "workspace is busy")
		f.store.LockWorkspaceFunc = func(context.Context, string, service.LockMode) (func(), error) { return nil, busy }
		deletes := recordDeletes(f)

		err := svc.DeleteWorkspace(t.Context(), ws.ID)
		require.ErrorIs(t, err, busy)
		require.Empty(t, *deletes)
	})
}

func mustInspect(t *testing.T, svc *service.Service, id string) *cairn.WorkspaceDetail {
	t.Helper()
	d, err := svc.InspectWorkspace(t.Context(), id)
	require.NoError(t, err)
	return d
}
