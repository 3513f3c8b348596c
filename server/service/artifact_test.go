package service_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
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

// keyULID matches the ULID at the end of an object key.
const keyULID = `[0-7][0-9A-HJKMNP-TV-Z]{25}`

// sha256B64 is the sha256_b64 of body.
func sha256B64(body []byte) string {
	sum := sha256.Sum256(body)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// errStoreDown is what the bucket fakes answer when the store is unreachable.
var errStoreDown = cairn.Errorf(cairn.ReasonStoreUnavailable, "object store unreachable")

// serviceWith returns a service over the fixture's fakes and clock with a
// non-default configuration.
func (f *fixture) serviceWith(cfg service.Config) *service.Service {
	cfg.AppName = appName
	cfg.Now = func() time.Time { return f.now }
	return service.New(f.store, f.runtime, f.objects, cfg)
}

// stagingKeyFor returns a key of the shape the default service issues for ws.
func stagingKeyFor(workspaceID string) string {
	return "staging/" + workspaceID + "/" + ulid.Make().String()
}

// newArtifact returns a stored RECORDED artifact of the workspace, its
// content written an hour before the fixture's clock.
// namesFreeWorkspace is a stored NONE workspace in which every artifact
// name is free.
func (f *fixture) namesFreeWorkspace() cairn.Workspace {
	ws := f.storedWorkspace(cairn.VolumeNone)
	f.store.ArtifactNameTakenFunc = func(context.Context, string, string) (bool, error) { return false, nil }
	return ws
}

func (f *fixture) newArtifact(workspaceID string) cairn.Artifact {
	desc := "quarterly numbers"
	return cairn.Artifact{
		ID:               ulid.Make().String(),
		WorkspaceID:      workspaceID,
		Name:             "report",
		Description:      &desc,
		ObjectKey:        "store/" + workspaceID + "/" + ulid.Make().String(),
		MIMEType:         "text/plain; charset=utf-8",
		Size:             42,
		State:            cairn.ArtifactRecorded,
		CreatedAt:        f.now.Add(-2 * time.Hour),
		UpdatedAt:        f.now.Add(-time.Hour),
		ContentWrittenAt: f.now.Add(-time.Hour),
	}
}

// artifactRow makes the store hold a: reads return a copy, any other ID is
// not found.
func (f *fixture) artifactRow(a cairn.Artifact) {
	find := func(_ context.Context, id string) (*cairn.Artifact, error) {
		if id != a.ID {
			return nil, errArtifactNotFound(id)
		}
		c := a
		return &c, nil
	}
	f.store.FindArtifactFunc = find
	f.store.LockArtifactRowFunc = find
}

func errArtifactNotFound(id string) error {
	return cairn.Errorf(cairn.ReasonArtifactNotFound, "artifact %s not found", id)
}

// artifactFlow is what the fakes saw of an artifact flow. calls lists every
// bucket and store write in order, with transactions as "begin" and
// "commit" or "rollback", and deletes as "delete <key>".
type artifactFlow struct {
	f        *fixture
	mu       sync.Mutex // the store's HEAD and ranged read run side by side
	calls    []string
	heads    []int64 // n of each ReadHead
	copies   []objectCopy
	inserted []cairn.Artifact
	updated  []cairn.Artifact
	released []releasedObject
	deleted  []string
}

// record notes one call; store fakes may be called from two goroutines.
func (fl *artifactFlow) record(call string) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.calls = append(fl.calls, call)
}

type objectCopy struct{ src, dst, contentType string }

type releasedObject struct {
	key, workspaceID string
	at               time.Time
}

// flow makes every artifact write and bucket copy or delete succeed and be
// recorded; stage puts an object in the bucket, whose Stat and ReadHead are
// otherwise unset.
func (f *fixture) flow() *artifactFlow {
	fl := &artifactFlow{f: f}
	f.store.WithTxFunc = func(_ context.Context, fn func(service.Store) error) error {
		fl.record("begin")
		err := fn(f.store)
		if err != nil {
			fl.record("rollback")
			return err
		}
		fl.record("commit")
		return nil
	}
	f.store.InsertArtifactFunc = func(_ context.Context, a *cairn.Artifact) error {
		fl.record("insert")
		fl.inserted = append(fl.inserted, *a)
		return nil
	}
	f.store.UpdateArtifactFunc = func(_ context.Context, a *cairn.Artifact) error {
		fl.record("update")
		fl.updated = append(fl.updated, *a)
		return nil
	}
	f.store.ReleaseObjectFunc = func(_ context.Context, key, workspaceID string, at time.Time) error {
		fl.record("release")
		fl.released = append(fl.released, releasedObject{key: key, workspaceID: workspaceID, at: at})
		return nil
	}
	audit := f.store.InsertAuditFunc
	f.store.InsertAuditFunc = func(ctx context.Context, ev *cairn.AuditEvent) error {
		fl.record("audit")
		return audit(ctx, ev)
	}
	f.objects.CopyFunc = func(_ context.Context, src, dst, contentType string) error {
		fl.record("copy")
		fl.copies = append(fl.copies, objectCopy{src: src, dst: dst, contentType: contentType})
		return nil
	}
	f.objects.DeleteFunc = func(_ context.Context, key string) error {
		fl.record("delete " + key)
		fl.deleted = append(fl.deleted, key)
		return nil
	}
	return fl
}

// stage makes the bucket hold one object at key, size bytes long, whose
// first bytes are head; every other key is absent. When head is the whole
// object its HEAD reports its SHA-256, as a checksum-bound PUT leaves it.
func (fl *artifactFlow) stage(key string, size int64, head []byte) {
	digest := ""
	if int64(len(head)) == size {
		d := sha256.Sum256(head)
		digest = base64.StdEncoding.EncodeToString(d[:])
	}
	fl.f.objects.StatFunc = func(_ context.Context, k string) (*service.ObjectInfo, error) {
		fl.record("stat")
		if k != key {
			return nil, fmt.Errorf("stat %s: %w", k, service.ErrObjectNotFound)
		}
		return &service.ObjectInfo{Key: k, Size: size, LastModified: fl.f.now.Add(-time.Minute),
			SHA256B64: digest}, nil
	}
	fl.f.objects.ReadHeadFunc = func(_ context.Context, k string, n int64) ([]byte, error) {
		fl.record("readhead")
		fl.mu.Lock()
		fl.heads = append(fl.heads, n)
		fl.mu.Unlock()
		if k != key {
			return nil, fmt.Errorf("get %s: %w", k, service.ErrObjectNotFound)
		}
		return head[:min(n, int64(len(head)))], nil
	}
}

func TestRegisterArtifact(t *testing.T) {
	t.Parallel()
	text := []byte("hello, cairn\n")

	t.Run("ErrValidation", func(t *testing.T) {
		t.Parallel()
		long := strings.Repeat("d", cairn.MaxDescriptionBytes+1)
		key := stagingKeyFor(uuid.NewString())
		tests := []struct {
			name   string
			create cairn.ArtifactCreate
			reason cairn.Reason
		}{
			{"ErrInvalidParametersMissingKey", cairn.ArtifactCreate{Name: "report"}, cairn.ReasonInvalidParameters},
			{"ErrInvalidNameEmpty", cairn.ArtifactCreate{StagingKey: key}, cairn.ReasonInvalidName},
			{"ErrInvalidNameDot", cairn.ArtifactCreate{StagingKey: key, Name: "report.pdf"}, cairn.ReasonInvalidName},
			{"ErrInvalidNameTooLong", cairn.ArtifactCreate{StagingKey: key, Name: strings.Repeat("a", 129)}, cairn.ReasonInvalidName},
			{"ErrInvalidParametersDescription", cairn.ArtifactCreate{StagingKey: key, Name: "report", Description: &long}, cairn.ReasonInvalidParameters},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				lookups := 0
				f.store.FindWorkspaceFunc = func(_ context.Context, id string) (*cairn.Workspace, error) {
					lookups++
					return nil, errNotFound(id)
				}
				fl := f.flow()
				fl.stage(tt.create.StagingKey, int64(len(text)), text)

				a, err := svc.RegisterArtifact(t.Context(), uuid.NewString(), tt.create)
				require.Equal(t, tt.reason, cairn.ErrorReason(err))
				require.Nil(t, a)
				require.Zero(t, lookups, "validation comes before any call")
				require.Empty(t, fl.calls)
			})
		}
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.row(f.newWorkspace(cairn.VolumeNone))
		checks := 0
		f.store.ArtifactNameTakenFunc = func(context.Context, string, string) (bool, error) {
			checks++
			return false, nil
		}
		fl := f.flow()
		id := uuid.NewString()
		key := stagingKeyFor(id)
		fl.stage(key, int64(len(text)), text)

		a, err := svc.RegisterArtifact(t.Context(), id, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
		require.Nil(t, a)
		require.Zero(t, checks)
		require.Empty(t, fl.calls)
	})

	t.Run("ErrNameTaken", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name string
			key  func(ws string) string
		}{
			{"ErrNameTaken", stagingKeyFor},
			{"ErrNameTakenBeforeKeyShape", func(ws string) string { return "elsewhere/" + ws }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				ws := f.storedWorkspace(cairn.VolumeNone)
				type check struct{ workspaceID, name string }
				var checks []check
				f.store.ArtifactNameTakenFunc = func(_ context.Context, workspaceID, name string) (bool, error) {
					checks = append(checks, check{workspaceID, name})
					return true, nil
				}
				fl := f.flow()
				key := tt.key(ws.ID)
				fl.stage(key, int64(len(text)), text)

				a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
				require.Equal(t, cairn.ReasonNameTaken, cairn.ErrorReason(err))
				require.Equal(t, "workspace "+ws.ID+" already has an artifact named 'report'", cairn.ErrorDetail(err))
				require.Nil(t, a)
				require.Equal(t, []check{{ws.ID, "report"}}, checks)
				require.Empty(t, fl.calls, "no object-store work for a taken name")
				require.Empty(t, f.audits)
			})
		}
	})

	t.Run("ErrNameCheckFailed", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		dbDown := cairn.Internal("database error", errors.New("connection refused"))
		f.store.ArtifactNameTakenFunc = func(context.Context, string, string) (bool, error) { return false, dbDown }
		fl := f.flow()
		key := stagingKeyFor(ws.ID)
		fl.stage(key, int64(len(text)), text)

		_, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.ErrorIs(t, err, dbDown)
		require.Empty(t, fl.calls)
	})

	t.Run("ErrStagingKeyInvalid", func(t *testing.T) {
		t.Parallel()
		ulid26 := ulid.Make().String()
		tests := []struct {
			name string
			key  func(ws string) string
		}{
			{"OtherWorkspace", func(string) string { return stagingKeyFor(uuid.NewString()) }},
			{"LowercaseULID", func(ws string) string { return "staging/" + ws + "/" + strings.ToLower(ulid26) }},
			{"ExtraSegment", func(ws string) string { return "staging/" + ws + "/extra/" + ulid26 }},
			{"DotDot", func(ws string) string { return "staging/" + uuid.NewString() + "/../" + ws + "/" + ulid26 }},
			{"DotDotInWorkspace", func(ws string) string { return "staging/" + ws + "/../" + ws + "/" + ulid26 }},
			{"DoubleSlash", func(ws string) string { return "staging//" + ws + "/" + ulid26 }},
			{"TrailingSlash", func(ws string) string { return "staging/" + ws + "/" + ulid26 + "/" }},
			{"LeadingSlash", func(ws string) string { return "/staging/" + ws + "/" + ulid26 }},
			{"StorePrefixOtherWorkspace", func(string) string { return "store/" + uuid.NewString() + "/" + ulid26 }},
			{"ULID25", func(ws string) string { return "staging/" + ws + "/" + ulid26[:25] }},
			{"ULID27", func(ws string) string { return "staging/" + ws + "/" + ulid26 + "0" }},
			{"NoULID", func(ws string) string { return "staging/" + ws + "/" }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				ws := f.namesFreeWorkspace()
				fl := f.flow()
				key := tt.key(ws.ID)
				fl.stage(key, int64(len(text)), text)

				a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
				require.Equal(t, cairn.ReasonStagingKeyInvalid, cairn.ErrorReason(err))
				require.Equal(t, "staging object key '"+key+"' was not issued for workspace "+ws.ID, cairn.ErrorDetail(err))
				require.Nil(t, a)
				require.Empty(t, fl.calls, "a foreign key is never stat'ed")
			})
		}
	})

	t.Run("ErrStagingKeyInvalidWithoutBase", func(t *testing.T) {
		t.Parallel()
		_, f := setup(t)
		svc := f.serviceWith(service.Config{Keys: service.KeyPrefixes{Base: "poc"}})
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := stagingKeyFor(ws.ID)
		fl.stage(key, int64(len(text)), text)

		_, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.Equal(t, cairn.ReasonStagingKeyInvalid, cairn.ErrorReason(err))
		require.Empty(t, fl.calls)
	})

	t.Run("OKLegacyStagingKey", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := stagingKeyFor(ws.ID)
		fl.stage(key, 5000, text) // the size comes from Stat, not from what was read
		desc := "the numbers"

		ctx := cairn.WithActor(t.Context(), "alice")
		a, err := svc.RegisterArtifact(ctx, ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report", Description: &desc})
		require.NoError(t, err)

		require.Len(t, fl.copies, 1)
		final := fl.copies[0].dst
		require.Regexp(t, `^store/`+ws.ID+`/`+keyULID+`$`, final)
		require.Equal(t, objectCopy{src: key, dst: final, contentType: "text/plain; charset=utf-8"}, fl.copies[0])
		require.Equal(t, []int64{3072}, fl.heads)

		_, err = ulid.ParseStrict(a.ID)
		require.NoError(t, err)
		want := cairn.Artifact{
			ID: a.ID, WorkspaceID: ws.ID, Name: "report", Description: &desc,
			ObjectKey: final, MIMEType: "text/plain; charset=utf-8", Size: 5000, State: cairn.ArtifactRecorded,
			CreatedAt: f.now, UpdatedAt: f.now, ContentWrittenAt: f.now,
		}
		require.Equal(t, &want, a)
		require.Equal(t, []cairn.Artifact{want}, fl.inserted)

		require.Len(t, f.audits, 1)
		ev := f.audits[0]
		require.Equal(t, cairn.AuditNewArtifact, ev.Type)
		require.Equal(t, map[string]any{
			"workspace_id": ws.ID, "artifact_id": a.ID, "artifact_name": "report",
			"object_key": final, "mime_type": "text/plain; charset=utf-8", "size": int64(5000),
		}, ev.Metadata)
		require.Equal(t, new("alice"), ev.Actor)
		require.Equal(t, f.now, ev.CreatedAt)

		require.Equal(t, []string{"stat", "readhead", "copy", "begin", "insert", "audit", "commit", "delete " + key}, fl.calls,
			"copy, then the row and its audit in one transaction, then the staging delete")
		require.Equal(t, []string{key}, fl.deleted)
	})

	t.Run("OKWithBasePrefix", func(t *testing.T) {
		t.Parallel()
		_, f := setup(t)
		svc := f.serviceWith(service.Config{Keys: service.KeyPrefixes{Base: "poc"}})
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := "poc/" + stagingKeyFor(ws.ID)
		fl.stage(key, int64(len(text)), text)

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.NoError(t, err)
		require.Regexp(t, `^poc/store/`+ws.ID+`/`+keyULID+`$`, a.ObjectKey)
		require.Nil(t, a.Description)
		require.Equal(t, []string{key}, fl.deleted)
	})

	t.Run("OKMIMESniffed", func(t *testing.T) {
		t.Parallel()
		png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
		tests := []struct {
			name  string
			body  []byte
			mime  string
			heads []int64
		}{
			{"OKEmptyNotRead", nil, "text/plain", nil},
			{"OKPDF", []byte("%PDF-1.4\n%âãÏÓ\n"), "application/pdf", []int64{3072}},
			{"OKJSON", []byte(`{"a":1}`), "application/json", []int64{3072}},
			{"OKText", []byte("plain words\n"), "text/plain; charset=utf-8", []int64{3072}},
			{"OKHTML", []byte("<!DOCTYPE html><html><body>hi</body></html>"), "text/html; charset=utf-8", []int64{3072}},
			{"OKPNG", png, "image/png", []int64{3072}},
			{"OKBinary", []byte{0x00, 0x01, 0x02, 0xfe, 0xff, 0x00}, "application/octet-stream", []int64{3072}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				ws := f.namesFreeWorkspace()
				fl := f.flow()
				key := stagingKeyFor(ws.ID)
				fl.stage(key, int64(len(tt.body)), tt.body)

				a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
				require.NoError(t, err)
				require.Equal(t, tt.mime, a.MIMEType)
				require.Equal(t, int64(len(tt.body)), a.Size)
				require.Len(t, fl.copies, 1)
				require.Equal(t, tt.mime, fl.copies[0].contentType, "the final object carries the sniffed type")
				require.Equal(t, tt.heads, fl.heads)
			})
		}
	})

	t.Run("ErrStagingNotFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		fl.stage(stagingKeyFor(ws.ID), int64(len(text)), text)
		key := stagingKeyFor(ws.ID) // issued, never uploaded

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.Equal(t, cairn.ReasonStagingNotFound, cairn.ErrorReason(err))
		require.Equal(t, "staging object '"+key+"' not found; upload it first", cairn.ErrorDetail(err))
		require.ErrorIs(t, err, service.ErrObjectNotFound)
		require.Nil(t, a)
		require.Equal(t, []string{"stat"}, fl.calls)
	})

	t.Run("ErrObjectTooLarge", func(t *testing.T) {
		t.Parallel()
		_, f := setup(t)
		svc := f.serviceWith(service.Config{MaxObjectSize: 100})
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := stagingKeyFor(ws.ID)
		fl.stage(key, 101, text)

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.Equal(t, cairn.ReasonObjectTooLarge, cairn.ErrorReason(err))
		require.Equal(t, "staged object '"+key+"' is 101 bytes, over the 100 byte size cap", cairn.ErrorDetail(err))
		require.Nil(t, a)
		require.Equal(t, []string{"stat"}, fl.calls)
	})

	t.Run("OKSizeAtCap", func(t *testing.T) {
		t.Parallel()
		_, f := setup(t)
		svc := f.serviceWith(service.Config{MaxObjectSize: 100})
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := stagingKeyFor(ws.ID)
		fl.stage(key, 100, text)

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.NoError(t, err)
		require.Equal(t, int64(100), a.Size)
	})

	t.Run("ErrStoreFailure", func(t *testing.T) {
		t.Parallel()
		vanished := fmt.Errorf("reaped: %w", service.ErrObjectNotFound)
		tests := []struct {
			name   string
			fail   func(*fixture)
			calls  []string
			reason cairn.Reason
		}{
			{"ErrStoreUnavailableStat", func(f *fixture) {
				f.objects.StatFunc = func(context.Context, string) (*service.ObjectInfo, error) { return nil, errStoreDown }
			}, nil, cairn.ReasonStoreUnavailable},
			{"ErrStoreUnavailableReadHead", func(f *fixture) {
				f.objects.ReadHeadFunc = func(context.Context, string, int64) ([]byte, error) { return nil, errStoreDown }
			}, []string{"stat"}, cairn.ReasonStoreUnavailable},
			{"ErrStoreUnavailableCopy", func(f *fixture) {
				f.objects.CopyFunc = func(context.Context, string, string, string) error { return errStoreDown }
			}, []string{"stat", "readhead"}, cairn.ReasonStoreUnavailable},
			{"ErrStagingNotFoundReadHead", func(f *fixture) {
				f.objects.ReadHeadFunc = func(context.Context, string, int64) ([]byte, error) { return nil, vanished }
			}, []string{"stat"}, cairn.ReasonStagingNotFound},
			{"ErrStagingNotFoundCopy", func(f *fixture) {
				f.objects.CopyFunc = func(context.Context, string, string, string) error { return vanished }
			}, []string{"stat", "readhead"}, cairn.ReasonStagingNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				ws := f.namesFreeWorkspace()
				fl := f.flow()
				key := stagingKeyFor(ws.ID)
				fl.stage(key, int64(len(text)), text)
				tt.fail(f)

				a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
				require.Equal(t, tt.reason, cairn.ErrorReason(err))
				if tt.reason == cairn.ReasonStoreUnavailable {
					require.ErrorIs(t, err, errStoreDown, "a store failure passes through")
				}
				require.Nil(t, a)
				require.Equal(t, tt.calls, fl.calls, "no insert and no delete")
				require.Empty(t, f.audits)
			})
		}
	})

	t.Run("ErrNameTakenRace", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := stagingKeyFor(ws.ID)
		fl.stage(key, int64(len(text)), text)
		taken := cairn.Errorf(cairn.ReasonNameTaken, "workspace %s already has an artifact named 'report'", ws.ID)
		f.store.InsertArtifactFunc = func(context.Context, *cairn.Artifact) error {
			fl.record("insert")
			return taken
		}

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.ErrorIs(t, err, taken)
		require.Nil(t, a)
		require.Len(t, fl.copies, 1)
		final := fl.copies[0].dst
		require.Equal(t, []string{"stat", "readhead", "copy", "begin", "insert", "rollback", "delete " + final}, fl.calls,
			"the orphaned copy is deleted; the staging object is kept")
		require.Empty(t, f.audits)
	})

	t.Run("ErrAuditFailed", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := stagingKeyFor(ws.ID)
		fl.stage(key, int64(len(text)), text)
		boom := errors.New("audit insert failed")
		f.store.InsertAuditFunc = func(context.Context, *cairn.AuditEvent) error { return boom }

		_, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.ErrorIs(t, err, boom)
		require.Len(t, fl.copies, 1)
		require.Equal(t, []string{fl.copies[0].dst}, fl.deleted, "the row rolled back, so its copy is deleted")
	})

	t.Run("OKStagingDeleteFails", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := stagingKeyFor(ws.ID)
		fl.stage(key, int64(len(text)), text)
		deletes := 0
		f.objects.DeleteFunc = func(context.Context, string) error {
			deletes++
			return errStoreDown
		}

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.NoError(t, err, "the reaper takes a staging object left behind")
		require.NotNil(t, a)
		require.Len(t, fl.inserted, 1)
		require.Equal(t, 1, deletes)
	})
}
