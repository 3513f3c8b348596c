package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/reconcile"
	"github.com/cairn-dev/cairn/server/service"
)

func TestStagingObjects(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := e.reconciler(reconcile.Config{Keys: service.KeyPrefixes{Base: "poc"}})
	reconcile.SetPageSize(r, 2) // three objects: two listing pages
	keys := []string{"poc/staging/w1/" + ulid.Make().String(), "poc/staging/w1/" + ulid.Make().String(),
		"poc/staging/w2/" + ulid.Make().String()}
	for _, k := range keys {
		e.put(t, k)
	}
	outside := []string{"staging/w1/" + ulid.Make().String(), "poc/stagingx/" + ulid.Make().String(), "poc/other"}
	for _, k := range outside {
		e.put(t, k)
	}
	require.NoError(t, e.store.Pin(context.Background(), "poc/staging"))
	outside = append(outside, "poc/staging/") // a directory marker is never examined nor reaped

	e.ahead(ageOut / 2) // fresh
	res := pass(t, r)
	require.Equal(t, 3, res.StagingExamined)
	require.Zero(t, res.StagingDeleted)
	require.Empty(t, res.Errors)

	e.ahead(2 * ageOut) // aged
	res = pass(t, r)
	require.Equal(t, 3, res.StagingDeleted)
	require.ElementsMatch(t, outside, e.keys(t))
}

func TestStorageObjects(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	r := e.reconciler(reconcile.Config{})
	reconcile.SetPageSize(r, 2)
	ws := e.workspace(t, cairn.VolumeNone)
	key := func() string { return "store/" + ws.ID + "/" + ulid.Make().String() }

	live, deleted, replacedOld, never, flagged := key(), key(), key(), key(), key()
	outside := "store-x/" + ulid.Make().String()
	for _, k := range []string{live, deleted, replacedOld, never, outside, "other"} {
		e.put(t, k)
	}
	require.NoError(t, e.store.Pin(ctx, "store"))
	e.artifact(t, ws, live)
	// A deleted artifact and a replacement's old key, released three hours
	// from now (their objects age out earlier by LastModified).
	releasedAt := cairn.Now().Add(3 * ageOut)
	require.NoError(t, e.db.ReleaseObject(ctx, deleted, ws.ID, releasedAt))
	require.NoError(t, e.db.ReleaseObject(ctx, replacedOld, ws.ID, releasedAt))
	gone := e.artifact(t, ws, flagged) // its object was never there

	e.ahead(ageOut / 2)
	res := pass(t, r)
	require.Empty(t, res.Errors)
	require.Equal(t, 4, res.StorageExamined)
	require.Zero(t, res.StorageDeleted, "unreferenced objects keep their grace")
	require.Equal(t, 1, res.ArtifactsFlagged, "a vanished object is flagged on the next pass, with no grace")
	require.Equal(t, cairn.ArtifactMissingObject, e.artifactState(t, gone.ID))

	e.ahead(2 * ageOut) // past the never-referenced grace, not the released one
	res = pass(t, r)
	require.Equal(t, 1, res.StorageDeleted)
	require.False(t, e.exists(t, never))
	require.True(t, e.exists(t, deleted))
	require.True(t, e.exists(t, replacedOld))
	require.Zero(t, res.ArtifactsFlagged, "a flagged row is never flagged again")
	events, err := e.db.FindAuditEvents(ctx, cairn.AuditFilter{Types: []cairn.AuditType{cairn.AuditArtifactMissing}})
	require.NoError(t, err)
	require.Len(t, events, 1)
	require.Equal(t, "maintainer", *events[0].Actor)
	require.Equal(t, map[string]any{"workspace_id": ws.ID, "artifact_id": gone.ID,
		"artifact_name": gone.Name, "object_key": flagged}, events[0].Metadata)

	e.ahead(5 * ageOut) // past the released grace
	res = pass(t, r)
	require.Equal(t, 2, res.StorageDeleted)
	require.Zero(t, res.ArtifactsFlagged)
	require.ElementsMatch(t, []string{live, outside, "other", "store/"}, e.keys(t))
	require.Zero(t, res.ReleasedPruned, "rows deleted with their objects are not pruned again")
	refs, released, err := e.db.ObjectRefs(ctx, []string{live, deleted, replacedOld})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{live: true}, refs)
	require.Empty(t, released)
}

func TestPruneReleased(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	r := e.reconciler(reconcile.Config{})
	require.NoError(t, e.db.ReleaseObject(ctx, "store/w/"+ulid.Make().String(), "w", cairn.Now()))
	e.ahead(2 * ageOut)
	res := pass(t, r)
	require.Equal(t, 1, res.ReleasedPruned)
}

// failingObjects fails List from the given call on.
type failingObjects struct {
	reconcile.Objects
	calls, failFrom int
}

func (f *failingObjects) List(ctx context.Context, prefix, startAfter string, max int) ([]service.ObjectInfo, error) {
	f.calls++
	if f.calls >= f.failFrom {
		return nil, &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Detail: "the object store failed to list objects",
			Err: errors.New("boom")}
	}
	return f.Objects.List(ctx, prefix, startAfter, max)
}

func TestStorageListingFailsMidway(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ws := e.workspace(t, cairn.VolumeNone)
	key := func() string { return "store/" + ws.ID + "/" + ulid.Make().String() }
	k1, k2, k3 := key(), key(), key()
	for _, k := range []string{k1, k2, k3} {
		e.put(t, k)
	}
	missing := e.artifact(t, ws, key())
	// Staging listing is call 1 (empty), the store's first page call 2.
	objs := &failingObjects{Objects: e.store, failFrom: 3}
	r := e.reconcilerWith(objs, reconcile.Config{})
	reconcile.SetPageSize(r, 2)
	e.ahead(2 * ageOut)

	res := pass(t, r)
	require.Equal(t, 2, res.StorageDeleted, "deletions of the first page stand")
	require.Zero(t, res.ArtifactsFlagged)
	require.Len(t, res.Errors, 1)
	require.Contains(t, res.Errors[0], "storage-objects: listing failed midway")
	require.NotContains(t, res.Errors[0], "boom")
	require.Equal(t, cairn.ArtifactRecorded, e.artifactState(t, missing.ID))
	require.True(t, e.exists(t, k3))
}

func TestScopedPass(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := e.reconciler(reconcile.Config{})
	mine, other := e.workspace(t, cairn.VolumeNone), e.workspace(t, cairn.VolumeNone)
	mineKeys := []string{"staging/" + mine.ID + "/" + ulid.Make().String(), "store/" + mine.ID + "/" + ulid.Make().String()}
	otherKeys := []string{"staging/" + other.ID + "/" + ulid.Make().String(), "store/" + other.ID + "/" + ulid.Make().String()}
	for _, k := range append(append([]string{}, mineKeys...), otherKeys...) {
		e.put(t, k)
	}
	a := e.artifact(t, other, "store/"+other.ID+"/"+ulid.Make().String())
	e.ahead(2 * ageOut)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := r.RunOnce(ctx, mine.ID)
	require.NoError(t, err)
	require.Equal(t, mine.ID, res.WorkspaceID)
	require.Equal(t, 1, res.VolumesExamined)
	require.Equal(t, 1, res.StagingDeleted)
	require.Equal(t, 1, res.StorageDeleted)
	require.Zero(t, res.ArtifactsFlagged)
	require.ElementsMatch(t, otherKeys, e.keys(t))
	require.Equal(t, cairn.ArtifactRecorded, e.artifactState(t, a.ID))

	_, err = r.RunOnce(ctx, "no-such-workspace")
	require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
}

// racingObjects runs during once, on the first List of the final prefix:
// a write that races the listing; and hides the keys in hide from every
// List, as a listing that missed an object would.
type racingObjects struct {
	reconcile.Objects
	during func()
	hide   map[string]bool
}

func (o *racingObjects) List(ctx context.Context, prefix, startAfter string, max int) ([]service.ObjectInfo, error) {
	if strings.HasPrefix(prefix, "store") && o.during != nil {
		o.during()
		o.during = nil
	}
	page, err := o.Objects.List(ctx, prefix, startAfter, max)
	kept := page[:0]
	for _, obj := range page {
		if !o.hide[obj.Key] {
			kept = append(kept, obj)
		}
	}
	return kept, err
}

// TestMissingFlagRaces: a row whose content is written while the listing
// runs is never flagged, though its key is not in the listing; a row the
// listing missed but a HEAD finds is not flagged either; a vanished one is,
// on the same pass.
func TestMissingFlagRaces(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ws := e.workspace(t, cairn.VolumeNone)
	key := func() string { return "store/" + ws.ID + "/" + ulid.Make().String() }
	missedKey, goneKey := key(), key()
	e.put(t, missedKey)
	missed := e.artifact(t, ws, missedKey)
	gone := e.artifact(t, ws, goneKey) // its object was never there
	var during *cairn.Artifact
	objs := &racingObjects{Objects: e.store, hide: map[string]bool{missedKey: true}}
	objs.during = func() { during = e.artifact(t, ws, key()) } // written at or after the listing's start
	r := e.reconcilerWith(objs, reconcile.Config{})

	res := pass(t, r)
	require.Empty(t, res.Errors)
	require.NotNil(t, during, "the racing write ran")
	require.Equal(t, 1, res.ArtifactsFlagged)
	require.Equal(t, cairn.ArtifactMissingObject, e.artifactState(t, gone.ID))
	require.Equal(t, cairn.ArtifactRecorded, e.artifactState(t, during.ID), "written while the listing ran: never flagged")
	require.Equal(t, cairn.ArtifactRecorded, e.artifactState(t, missed.ID), "the HEAD found what the listing missed")
}

func TestMultipartUploads(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	r := e.reconciler(reconcile.Config{})
	reconcile.SetPageSize(r, 2) // three uploads: two listing pages
	ws := e.workspace(t, cairn.VolumeNone)
	var ids []string
	var keys []string
	for range 3 {
		key := "store/" + ws.ID + "/" + ulid.Make().String()
		id, err := e.store.CreateUpload(ctx, key)
		require.NoError(t, err)
		keys, ids = append(keys, key), append(ids, id)
	}
	outside := "staging/" + ws.ID + "/" + ulid.Make().String() // never touched: not under the store prefix
	outsideID, err := e.store.CreateUpload(ctx, outside)
	require.NoError(t, err)
	// A long upload, started long ago but still receiving parts.
	long := &busyUpload{Objects: e.store, key: "store/" + ws.ID + "/" + ulid.Make().String(), now: e.now}
	long.id, err = e.store.CreateUpload(ctx, long.key)
	require.NoError(t, err)
	r = e.reconcilerWith(long, reconcile.Config{})
	reconcile.SetPageSize(r, 2)

	e.ahead(ageOut / 2) // started within the grace
	res := pass(t, r)
	require.Empty(t, res.Errors)
	require.Zero(t, res.UploadsAborted)
	for i, k := range keys {
		_, err := e.store.ListParts(ctx, k, ids[i])
		require.NoError(t, err, "an upload within its grace may still be registered")
	}

	e.ahead(2 * ageOut) // abandoned
	res = pass(t, r)
	require.Empty(t, res.Errors)
	require.Equal(t, 3, res.UploadsAborted)
	for i, k := range keys {
		_, err := e.store.ListParts(ctx, k, ids[i])
		require.ErrorIs(t, err, service.ErrUploadNotFound)
	}
	_, err = e.store.ListParts(ctx, outside, outsideID)
	require.NoError(t, err, "an upload outside the store prefix is never touched")
	_, err = e.store.ListParts(ctx, long.key, long.id)
	require.NoError(t, err, "an upload that received a part within the grace is not abandoned")
	for _, u := range []service.Upload{{Key: outside, ID: outsideID}, {Key: long.key, ID: long.id}} {
		require.NoError(t, e.store.AbortUpload(ctx, u.Key, u.ID))
	}
}

// busyUpload is the store with one upload that has just received a part,
// by the reconciler's clock.
type busyUpload struct {
	reconcile.Objects
	key, id string
	now     func() time.Time
}

func (b *busyUpload) ListParts(ctx context.Context, key, uploadID string) ([]service.Part, error) {
	if key == b.key && uploadID == b.id {
		return []service.Part{{Number: 1, Size: 1, LastModified: b.now()}}, nil
	}
	return b.Objects.ListParts(ctx, key, uploadID)
}

// What the service failed to discard while the store was down goes on the
// next full pass, within the age-out grace; a key a row names is left,
// and what the store refuses again is kept for the pass after.
func TestLeftovers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	left := &service.Leftovers{}
	ws := e.workspace(t, cairn.VolumeNone)
	key := func() string { return "store/" + ws.ID + "/" + ulid.Make().String() }
	upload, object, named := key(), key(), key()
	uploadID, err := e.store.CreateUpload(ctx, upload)
	require.NoError(t, err)
	e.put(t, object)
	e.put(t, named)
	e.artifact(t, ws, named)
	left.Add(service.Leftover{Key: upload, UploadID: uploadID})
	left.Add(service.Leftover{Key: object})
	left.Add(service.Leftover{Key: named})

	refusing := &refusingDeletes{Objects: e.store}
	r := e.reconcilerWith(refusing, reconcile.Config{Leftovers: left})
	res := pass(t, r)
	require.Equal(t, 1, res.UploadsAborted)
	require.Zero(t, res.StorageDeleted)
	require.NotEmpty(t, res.Errors)
	_, err = e.store.ListParts(ctx, upload, uploadID)
	require.ErrorIs(t, err, service.ErrUploadNotFound, "within the grace, at once")
	require.True(t, e.exists(t, object), "the store refused")

	refusing.fixed.Store(true)
	res = pass(t, r)
	require.Empty(t, res.Errors)
	require.Equal(t, 1, res.StorageDeleted, "kept for the next pass")
	require.False(t, e.exists(t, object))
	require.True(t, e.exists(t, named), "a key a row names is never a leftover's to delete")
	require.Empty(t, left.Take())
}

// refusingDeletes is the store failing its bulk deletes until fixed.
type refusingDeletes struct {
	reconcile.Objects
	fixed atomic.Bool
}

func (r *refusingDeletes) DeleteMany(ctx context.Context, keys []string) ([]string, error) {
	if !r.fixed.Load() {
		return nil, errors.New("connection refused")
	}
	return r.Objects.DeleteMany(ctx, keys)
}
