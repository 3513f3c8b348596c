package client_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/client/clienttest"
)

// TestContract runs one behaviour suite against three implementations of
// the service interfaces: the service in this process and this client
// talking to the real server, both on the real stack (Postgres, versitygw,
// Docker), and this client talking to clienttest's in-memory server, the
// fake the client's and the TUI's tests use. Every expectation is shared,
// so the three agree or a test fails: the fake keeps no behaviour the real
// server does not have.
func TestContract(t *testing.T) {
	t.Parallel()
	t.Run("InProcess", func(t *testing.T) {
		t.Parallel()
		b := newBackend(t)
		runContract(t, subject{svc: b.serve(t), w: b, trail: true})
	})
	t.Run("Client", func(t *testing.T) {
		t.Parallel()
		b := newBackend(t)
		actor := "admin"
		c := newClient(t, b.remote(t))
		runContract(t, subject{svc: c, w: b, client: c, trail: true, actor: &actor})
	})
	t.Run("Fake", func(t *testing.T) {
		t.Parallel()
		fake := clienttest.New(t, clienttest.WithAppName(fakeApp), clienttest.WithMaxObjectSize(contractMaxObject))
		c := fake.Client(t)
		runContract(t, subject{svc: c, w: fakeWorld{fake}, client: c})
	})
}

// subject is one implementation under the contract and the world behind it.
type subject struct {
	svc services
	w   world
	// client is set when answers travel over HTTP: errors then carry a
	// status and a request ID, and lists answer conditional requests.
	client *client.Client
	// trail: the implementation keeps an audit trail and runs the
	// maintainer's sweeps. The fake has neither; tests that need them
	// script those answers.
	trail bool
	actor *string // what the audit trail records for its calls
}

// world is what the suite does behind the service's back: to the real
// stack's database and Docker volumes, or to the fake's memory.
type world interface {
	appName() string
	// mount starts a container that mounts ws's volume; stop ends it.
	mount(t testing.TB, ws *cairn.Workspace) (stop func())
	// markMissing flags an artifact MISSING_OBJECT, as a sweep would after
	// its object vanished.
	markMissing(t testing.TB, id string)
	writeVolume(t testing.TB, ws *cairn.Workspace, path, content string)
	readVolume(t testing.TB, ws *cairn.Workspace, path string) string
	mkdir(t testing.TB, ws *cairn.Workspace, path string)
	symlink(t testing.TB, ws *cairn.Workspace, path, target string)
	fifo(t testing.TB, ws *cairn.Workspace, path string)
}

func runContract(t *testing.T, s subject) {
	t.Run("Workspaces", func(t *testing.T) { t.Parallel(); contractWorkspaces(t, s) })
	t.Run("WorkspaceEdits", func(t *testing.T) { t.Parallel(); contractWorkspaceEdits(t, s) })
	t.Run("Volumes", func(t *testing.T) { t.Parallel(); contractVolumes(t, s) })
	t.Run("Staging", func(t *testing.T) { t.Parallel(); contractStaging(t, s) })
	t.Run("Artifacts", func(t *testing.T) { t.Parallel(); contractArtifacts(t, s) })
	t.Run("ArtifactEdits", func(t *testing.T) { t.Parallel(); contractArtifactEdits(t, s) })
	t.Run("Transfers", func(t *testing.T) { t.Parallel(); contractTransfers(t, s) })
	t.Run("Files", func(t *testing.T) { t.Parallel(); contractFiles(t, s) })
	t.Run("Archives", func(t *testing.T) { t.Parallel(); contractArchives(t, s) })
	if s.client != nil {
		t.Run("ConditionalLists", func(t *testing.T) { t.Parallel(); contractConditionalLists(t, s) })
	}
	if s.trail {
		t.Run("Audit", func(t *testing.T) { t.Parallel(); contractAudit(t, s) })
		t.Run("Maintenance", func(t *testing.T) { t.Parallel(); contractMaintenance(t, s) })
	}
}

// fails checks that err is a *cairn.Error with reason; over HTTP it also
// carries the reason's status, the route's message and a request ID.
func (s subject) fails(t *testing.T, err error, reason cairn.Reason) {
	t.Helper()
	status, _ := reason.HTTPStatus()
	s.failsWith(t, err, reason, status)
}

// failsInVolume is fails on the routes that work inside a volume, where
// some reasons have a status of their own.
func (s subject) failsInVolume(t *testing.T, err error, reason cairn.Reason) {
	t.Helper()
	status, _ := reason.VolumeRouteStatus()
	s.failsWith(t, err, reason, status)
}

func (s subject) failsWith(t *testing.T, err error, reason cairn.Reason, status int) {
	t.Helper()
	require.Error(t, err)
	ce, ok := errors.AsType[*cairn.Error](err)
	require.True(t, ok, "%T is not a *cairn.Error: %v", err, err)
	require.Equal(t, reason, ce.Reason, "detail: %s", ce.Detail)
	require.NotEmpty(t, ce.Detail)
	if s.client != nil {
		require.Equal(t, status, ce.Status, "status of %s", reason)
		require.NotEmpty(t, ce.Message)
		require.NotEmpty(t, ce.RequestID)
	}
}

// unique returns a fresh valid name.
func unique(prefix string) string { return prefix + "-" + strings.ToLower(ulid.Make().String()) }

// unknownWorkspace and unknownArtifact are well-formed IDs nothing has.
const (
	unknownWorkspace = "00000000-0000-4000-8000-000000000000"
	unknownArtifact  = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
)

func digest(body []byte) string {
	d := sha256.Sum256(body)
	return base64.StdEncoding.EncodeToString(d[:])
}

func (s subject) workspace(t *testing.T) *cairn.Workspace {
	t.Helper()
	ws, err := s.svc.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: unique("ws")})
	require.NoError(t, err)
	return ws
}

// readyWorkspace is a workspace with its volume set up.
func (s subject) readyWorkspace(t *testing.T) *cairn.Workspace {
	t.Helper()
	ws := s.workspace(t)
	require.NoError(t, s.svc.SetupVolume(t.Context(), ws.ID))
	ws.VolumeState = cairn.VolumeReady
	return ws
}

// stage mints a staging slot for body and uploads it; it returns the key.
func (s subject) stage(t *testing.T, wsID string, body []byte) string {
	t.Helper()
	st, err := s.svc.MintStaging(t.Context(), wsID, cairn.StagingRequest{Size: int64(len(body)), SHA256B64: digest(body)})
	require.NoError(t, err)
	putStaged(t, st, body, digest(body))
	return st.Key
}

// upload stages body and registers it under name.
func (s subject) upload(t *testing.T, wsID, name string, body []byte) *cairn.Artifact {
	t.Helper()
	a, err := s.svc.RegisterArtifact(t.Context(), wsID, cairn.ArtifactCreate{StagingKey: s.stage(t, wsID, body), Name: name})
	require.NoError(t, err)
	return a
}

// fetch GETs a presigned URL.
func fetch(t *testing.T, url string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return b
}

func contractWorkspaces(t *testing.T, s subject) {
	ctx := t.Context()
	t.Run("CreateOK", func(t *testing.T) {
		name, desc, size := unique("create"), "first", int64(1<<30)
		ws, err := s.svc.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: name, Description: &desc,
			VolumeMetadata: &cairn.VolumeMetadata{SizeBytes: &size}})
		require.NoError(t, err)
		require.Equal(t, name, ws.Name)
		require.Equal(t, &desc, ws.Description)
		require.Equal(t, &size, ws.VolumeMetadata.SizeBytes)
		require.Equal(t, cairn.VolumeNone, ws.VolumeState)
		require.Equal(t, s.w.appName()+"-"+ws.ID, ws.VolumeName)
		require.Equal(t, ws.CreatedAt, ws.UpdatedAt)
		require.Equal(t, time.UTC, ws.CreatedAt.Location())

		d, err := s.svc.InspectWorkspace(ctx, ws.ID)
		require.NoError(t, err)
		require.Equal(t, ws, d.Workspace, "what create returned is what is stored")
		require.Equal(t, -1, d.MountCount, "no volume")

		_, err = s.svc.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: name})
		s.fails(t, err, cairn.ReasonNameTaken)
	})
	t.Run("CreateRefusals", func(t *testing.T) {
		_, err := s.svc.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "has space"})
		s.fails(t, err, cairn.ReasonInvalidName)
		long := strings.Repeat("d", cairn.MaxDescriptionBytes+1)
		_, err = s.svc.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: unique("long"), Description: &long})
		s.fails(t, err, cairn.ReasonInvalidParameters)
		zero := int64(0)
		_, err = s.svc.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: unique("zero"),
			VolumeMetadata: &cairn.VolumeMetadata{SizeBytes: &zero}})
		s.fails(t, err, cairn.ReasonInvalidParameters)
	})
	t.Run("Find", func(t *testing.T) {
		var names []string
		for range 3 {
			names = append(names, s.workspace(t).Name)
		}
		list, err := s.svc.FindWorkspaces(ctx, cairn.WorkspaceFilter{Names: []string{names[2], names[0]}})
		require.NoError(t, err)
		require.Equal(t, []string{names[0], names[2]}, workspaceNames(list), "creation order")

		list, err = s.svc.FindWorkspaces(ctx, cairn.WorkspaceFilter{Names: names, Page: cairn.Page{Offset: 1, Limit: 1}})
		require.NoError(t, err)
		require.Equal(t, names[1:2], workspaceNames(list))

		list, err = s.svc.FindWorkspaces(ctx, cairn.WorkspaceFilter{Names: names, VolumeStates: []cairn.VolumeState{cairn.VolumeReady}})
		require.NoError(t, err)
		require.Empty(t, list)

		list, err = s.svc.FindWorkspaces(ctx, cairn.WorkspaceFilter{Names: []string{unique("none")}})
		require.NoError(t, err)
		require.Empty(t, list)

		_, err = s.svc.FindWorkspaces(ctx, cairn.WorkspaceFilter{Page: cairn.Page{Limit: cairn.MaxListLimit + 1}})
		s.fails(t, err, cairn.ReasonInvalidQuery)
		_, err = s.svc.FindWorkspaces(ctx, cairn.WorkspaceFilter{Page: cairn.Page{Offset: -1}})
		s.fails(t, err, cairn.ReasonInvalidQuery)
		_, err = s.svc.FindWorkspaces(ctx, cairn.WorkspaceFilter{Names: []string{"bad name"}})
		s.fails(t, err, cairn.ReasonInvalidName)
	})
	t.Run("InspectNotFound", func(t *testing.T) {
		_, err := s.svc.InspectWorkspace(ctx, unknownWorkspace)
		s.fails(t, err, cairn.ReasonWorkspaceNotFound)
	})
	t.Run("DeleteNotFound", func(t *testing.T) {
		s.fails(t, s.svc.DeleteWorkspace(ctx, unknownWorkspace), cairn.ReasonWorkspaceNotFound)
	})
	t.Run("DeleteOK", func(t *testing.T) {
		ws := s.workspace(t)
		a := s.upload(t, ws.ID, "doomed", []byte("x"))
		require.NoError(t, s.svc.DeleteWorkspace(ctx, ws.ID))
		_, err := s.svc.InspectWorkspace(ctx, ws.ID)
		s.fails(t, err, cairn.ReasonWorkspaceNotFound)
		_, err = s.svc.GetArtifact(ctx, a.ID, cairn.ArtifactGet{})
		s.fails(t, err, cairn.ReasonArtifactNotFound)
		s.fails(t, s.svc.DeleteWorkspace(ctx, ws.ID), cairn.ReasonWorkspaceNotFound)
	})
}

func workspaceNames(list []*cairn.Workspace) []string {
	out := make([]string, len(list))
	for i, ws := range list {
		out[i] = ws.Name
	}
	return out
}

func contractWorkspaceEdits(t *testing.T, s subject) {
	ctx := t.Context()
	t.Run("Rename", func(t *testing.T) {
		ws, other := s.workspace(t), s.workspace(t)
		name := unique("renamed")
		got, err := s.svc.RenameWorkspace(ctx, ws.ID, name)
		require.NoError(t, err)
		require.Equal(t, name, got.Name)
		require.Equal(t, ws.VolumeName, got.VolumeName, "the volume keeps its name")
		require.True(t, got.UpdatedAt.After(ws.UpdatedAt))

		_, err = s.svc.RenameWorkspace(ctx, ws.ID, name)
		require.NoError(t, err, "renaming to the current name succeeds")
		_, err = s.svc.RenameWorkspace(ctx, ws.ID, other.Name)
		s.fails(t, err, cairn.ReasonNameTaken)
		_, err = s.svc.RenameWorkspace(ctx, ws.ID, "no/slash")
		s.fails(t, err, cairn.ReasonInvalidName)
		_, err = s.svc.RenameWorkspace(ctx, unknownWorkspace, unique("x"))
		s.fails(t, err, cairn.ReasonWorkspaceNotFound)
	})
	t.Run("Description", func(t *testing.T) {
		ws := s.workspace(t)
		d := "notes"
		got, err := s.svc.SetWorkspaceDescription(ctx, ws.ID, &d)
		require.NoError(t, err)
		require.Equal(t, &d, got.Description)
		got, err = s.svc.SetWorkspaceDescription(ctx, ws.ID, nil)
		require.NoError(t, err)
		require.Nil(t, got.Description)
		long := strings.Repeat("d", cairn.MaxDescriptionBytes+1)
		_, err = s.svc.SetWorkspaceDescription(ctx, ws.ID, &long)
		s.fails(t, err, cairn.ReasonInvalidParameters)
		_, err = s.svc.SetWorkspaceDescription(ctx, unknownWorkspace, &d)
		s.fails(t, err, cairn.ReasonWorkspaceNotFound)
	})
	t.Run("VolumeMetadata", func(t *testing.T) {
		ws := s.workspace(t)
		size := int64(4096)
		got, err := s.svc.SetWorkspaceVolumeMetadata(ctx, ws.ID, &cairn.VolumeMetadata{SizeBytes: &size})
		require.NoError(t, err)
		require.Equal(t, &size, got.VolumeMetadata.SizeBytes)
		got, err = s.svc.SetWorkspaceVolumeMetadata(ctx, ws.ID, nil)
		require.NoError(t, err)
		require.Nil(t, got.VolumeMetadata)
		bad := int64(-1)
		_, err = s.svc.SetWorkspaceVolumeMetadata(ctx, ws.ID, &cairn.VolumeMetadata{SizeBytes: &bad})
		s.fails(t, err, cairn.ReasonInvalidParameters)
		_, err = s.svc.SetWorkspaceVolumeMetadata(ctx, unknownWorkspace, nil)
		s.fails(t, err, cairn.ReasonWorkspaceNotFound)
	})
}

func contractVolumes(t *testing.T, s subject) {
	ctx := t.Context()
	ws := s.workspace(t)
	require.NoError(t, s.svc.SetupVolume(ctx, ws.ID))
	require.NoError(t, s.svc.SetupVolume(ctx, ws.ID), "a repeat repairs, and succeeds")
	d, err := s.svc.InspectWorkspace(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, cairn.VolumeReady, d.Workspace.VolumeState)
	require.Equal(t, 0, d.MountCount)

	size := int64(1)
	_, err = s.svc.SetWorkspaceVolumeMetadata(ctx, ws.ID, &cairn.VolumeMetadata{SizeBytes: &size})
	s.fails(t, err, cairn.ReasonVolumeExists)
	s.fails(t, s.svc.DeleteWorkspace(ctx, ws.ID), cairn.ReasonVolumeExists)

	stop := s.w.mount(t, ws)
	d, err = s.svc.InspectWorkspace(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, 1, d.MountCount)
	s.fails(t, s.svc.TeardownVolume(ctx, ws.ID), cairn.ReasonVolumeInUse)
	stop()

	require.NoError(t, s.svc.TeardownVolume(ctx, ws.ID))
	require.NoError(t, s.svc.TeardownVolume(ctx, ws.ID), "idempotent")
	d, err = s.svc.InspectWorkspace(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, cairn.VolumeNone, d.Workspace.VolumeState)
	require.NoError(t, s.svc.DeleteWorkspace(ctx, ws.ID))

	s.fails(t, s.svc.SetupVolume(ctx, unknownWorkspace), cairn.ReasonWorkspaceNotFound)
	s.fails(t, s.svc.TeardownVolume(ctx, unknownWorkspace), cairn.ReasonWorkspaceNotFound)
}

func contractStaging(t *testing.T, s subject) {
	ctx := t.Context()
	ws := s.workspace(t)
	body := []byte("staged bytes")
	t.Run("MintOK", func(t *testing.T) {
		st, err := s.svc.MintStaging(ctx, ws.ID, cairn.StagingRequest{Size: int64(len(body)), SHA256B64: digest(body)})
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(st.Key, "store/"+ws.ID+"/"), st.Key)
		require.NotEmpty(t, st.PutURL)
		require.True(t, st.ExpiresAt.After(time.Now()))
	})
	t.Run("MintRefusals", func(t *testing.T) {
		sum := sha256.Sum256(body)
		_, err := s.svc.MintStaging(ctx, ws.ID, cairn.StagingRequest{Size: 1, SHA256B64: hex.EncodeToString(sum[:])})
		s.fails(t, err, cairn.ReasonInvalidChecksum)
		_, err = s.svc.MintStaging(ctx, ws.ID, cairn.StagingRequest{Size: -1, SHA256B64: digest(body)})
		s.fails(t, err, cairn.ReasonInvalidParameters)
		_, err = s.svc.MintStaging(ctx, ws.ID, cairn.StagingRequest{Size: 1})
		s.fails(t, err, cairn.ReasonInvalidParameters)
		_, err = s.svc.MintStaging(ctx, unknownWorkspace, cairn.StagingRequest{Size: 1, SHA256B64: digest(body)})
		s.fails(t, err, cairn.ReasonWorkspaceNotFound)
		_, err = s.svc.MintStaging(ctx, ws.ID, cairn.StagingRequest{Size: contractMaxObject + 1, SHA256B64: digest(body)})
		s.fails(t, err, cairn.ReasonObjectTooLarge)
	})
	t.Run("RegisterOK", func(t *testing.T) {
		desc := "from the contract"
		a, err := s.svc.RegisterArtifact(ctx, ws.ID, cairn.ArtifactCreate{StagingKey: s.stage(t, ws.ID, body),
			Name: "registered", Description: &desc})
		require.NoError(t, err)
		require.Equal(t, "registered", a.Name)
		require.Equal(t, ws.ID, a.WorkspaceID)
		require.Equal(t, &desc, a.Description)
		require.Equal(t, int64(len(body)), a.Size)
		require.Equal(t, cairn.ArtifactRecorded, a.State)
		require.Equal(t, "text/plain; charset=utf-8", a.MIMEType)
		require.NotNil(t, a.SHA256B64)
		require.Equal(t, digest(body), *a.SHA256B64, "the digest the staging PUT was bound to")
		require.True(t, strings.HasPrefix(a.ObjectKey, "store/"+ws.ID+"/"), a.ObjectKey)

		empty := s.upload(t, ws.ID, "empty", nil)
		require.Equal(t, int64(0), empty.Size)
		require.Equal(t, digest(nil), *empty.SHA256B64)
	})
	t.Run("RegisterRefusals", func(t *testing.T) {
		s.upload(t, ws.ID, "taken", body)
		key := s.stage(t, ws.ID, body)
		_, err := s.svc.RegisterArtifact(ctx, ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "taken"})
		s.fails(t, err, cairn.ReasonNameTaken)
		_, err = s.svc.RegisterArtifact(ctx, ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "bad.name"})
		s.fails(t, err, cairn.ReasonInvalidName)
		_, err = s.svc.RegisterArtifact(ctx, ws.ID, cairn.ArtifactCreate{Name: unique("nokey")})
		s.fails(t, err, cairn.ReasonInvalidParameters)
		_, err = s.svc.RegisterArtifact(ctx, ws.ID, cairn.ArtifactCreate{StagingKey: "staging/" + unknownWorkspace + "/" + unknownArtifact,
			Name: unique("foreign")})
		s.fails(t, err, cairn.ReasonStagingKeyInvalid)
		_, err = s.svc.RegisterArtifact(ctx, ws.ID, cairn.ArtifactCreate{StagingKey: "staging/" + ws.ID + "/" + unknownArtifact,
			Name: unique("absent")})
		s.fails(t, err, cairn.ReasonStagingNotFound)
		_, err = s.svc.RegisterArtifact(ctx, unknownWorkspace, cairn.ArtifactCreate{StagingKey: key, Name: unique("x")})
		s.fails(t, err, cairn.ReasonWorkspaceNotFound)
	})
}

func contractArtifacts(t *testing.T, s subject) {
	ctx := t.Context()
	ws := s.workspace(t)
	a0 := s.upload(t, ws.ID, "a0", []byte("zero"))
	a1 := s.upload(t, ws.ID, "a1", []byte("one"))
	a2 := s.upload(t, ws.ID, "a2", []byte("two"))
	s.w.markMissing(t, a1.ID)
	both := []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject}

	t.Run("Find", func(t *testing.T) {
		list, err := s.svc.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID})
		require.NoError(t, err)
		require.Equal(t, []string{"a0", "a2"}, artifactNames(list), "RECORDED only by default")
		list, err = s.svc.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, States: both})
		require.NoError(t, err)
		require.Equal(t, []string{"a0", "a1", "a2"}, artifactNames(list))
		require.Equal(t, a0, list[0], "a listed artifact is the registered one")
		list, err = s.svc.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID,
			States: []cairn.ArtifactState{cairn.ArtifactMissingObject}})
		require.NoError(t, err)
		require.Equal(t, []string{"a1"}, artifactNames(list))
		list, err = s.svc.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, States: both,
			Names: []string{"a2", "a0"}, Page: cairn.Page{Offset: 1, Limit: 5}})
		require.NoError(t, err)
		require.Equal(t, []string{"a2"}, artifactNames(list))

		_, err = s.svc.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: unknownWorkspace})
		s.fails(t, err, cairn.ReasonWorkspaceNotFound)
		_, err = s.svc.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, Names: []string{"bad name"}})
		s.fails(t, err, cairn.ReasonInvalidName)
		_, err = s.svc.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, Page: cairn.Page{Limit: cairn.MaxListLimit + 1}})
		s.fails(t, err, cairn.ReasonInvalidQuery)
	})
	t.Run("Get", func(t *testing.T) {
		d, err := s.svc.GetArtifact(ctx, a0.ID, cairn.ArtifactGet{})
		require.NoError(t, err)
		require.Equal(t, a0, d.Artifact)
		require.Empty(t, d.GetURL)
		d, err = s.svc.GetArtifact(ctx, a2.ID, cairn.ArtifactGet{Presign: true, TTL: 30 * time.Second})
		require.NoError(t, err)
		require.Equal(t, []byte("two"), fetch(t, d.GetURL))

		_, err = s.svc.GetArtifact(ctx, a1.ID, cairn.ArtifactGet{Presign: true})
		s.fails(t, err, cairn.ReasonObjectMissing)
		d, err = s.svc.GetArtifact(ctx, a1.ID, cairn.ArtifactGet{})
		require.NoError(t, err, "a MISSING artifact's metadata is readable")
		require.Equal(t, cairn.ArtifactMissingObject, d.Artifact.State)
		_, err = s.svc.GetArtifact(ctx, unknownArtifact, cairn.ArtifactGet{})
		s.fails(t, err, cairn.ReasonArtifactNotFound)
	})
	t.Run("Delete", func(t *testing.T) {
		gone := s.upload(t, ws.ID, "gone", []byte("bye"))
		require.NoError(t, s.svc.DeleteArtifact(ctx, gone.ID))
		_, err := s.svc.GetArtifact(ctx, gone.ID, cairn.ArtifactGet{})
		s.fails(t, err, cairn.ReasonArtifactNotFound)
		require.NoError(t, s.svc.DeleteArtifact(ctx, gone.ID), "deleting an unknown ID succeeds")
		again := s.upload(t, ws.ID, "gone", []byte("back"))
		require.Equal(t, "gone", again.Name, "the name is free again")
	})
}

func artifactNames(list []*cairn.Artifact) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.Name
	}
	return out
}

func contractArtifactEdits(t *testing.T, s subject) {
	ctx := t.Context()
	ws := s.workspace(t)
	t.Run("Rename", func(t *testing.T) {
		a := s.upload(t, ws.ID, "before", []byte("r"))
		s.upload(t, ws.ID, "occupied", []byte("o"))
		got, err := s.svc.RenameArtifact(ctx, a.ID, "after")
		require.NoError(t, err)
		require.Equal(t, "after", got.Name)
		require.Equal(t, a.ObjectKey, got.ObjectKey)
		_, err = s.svc.RenameArtifact(ctx, a.ID, "after")
		require.NoError(t, err, "renaming to the current name succeeds")
		_, err = s.svc.RenameArtifact(ctx, a.ID, "occupied")
		s.fails(t, err, cairn.ReasonNameTaken)
		_, err = s.svc.RenameArtifact(ctx, a.ID, "bad name")
		s.fails(t, err, cairn.ReasonInvalidName)
		_, err = s.svc.RenameArtifact(ctx, unknownArtifact, "x")
		s.fails(t, err, cairn.ReasonArtifactNotFound)
	})
	t.Run("Description", func(t *testing.T) {
		a := s.upload(t, ws.ID, "described", []byte("d"))
		d := "what it is"
		got, err := s.svc.SetArtifactDescription(ctx, a.ID, &d)
		require.NoError(t, err)
		require.Equal(t, &d, got.Description)
		got, err = s.svc.SetArtifactDescription(ctx, a.ID, nil)
		require.NoError(t, err)
		require.Nil(t, got.Description)
		long := strings.Repeat("d", cairn.MaxDescriptionBytes+1)
		_, err = s.svc.SetArtifactDescription(ctx, a.ID, &long)
		s.fails(t, err, cairn.ReasonInvalidParameters)
		_, err = s.svc.SetArtifactDescription(ctx, unknownArtifact, &d)
		s.fails(t, err, cairn.ReasonArtifactNotFound)
	})
	t.Run("ReplaceContent", func(t *testing.T) {
		a := s.upload(t, ws.ID, "replaced", []byte("old"))
		s.w.markMissing(t, a.ID)
		body := []byte("{\"new\": true}")
		got, err := s.svc.ReplaceContent(ctx, a.ID, cairn.Staged{Key: s.stage(t, ws.ID, body)})
		require.NoError(t, err)
		require.Equal(t, cairn.ArtifactRecorded, got.State, "a replacement repairs a MISSING artifact")
		require.Equal(t, int64(len(body)), got.Size)
		require.Equal(t, digest(body), *got.SHA256B64)
		require.Equal(t, "application/json", got.MIMEType)
		require.NotEqual(t, a.ObjectKey, got.ObjectKey, "every content write has a new key")
		if s.trail {
			events, err := s.svc.FindAuditEvents(ctx, cairn.AuditFilter{WorkspaceID: ws.ID,
				Types: []cairn.AuditType{cairn.AuditUpdateArtifactObject}})
			require.NoError(t, err)
			require.Equal(t, a.ObjectKey, events[len(events)-1].Metadata["old_object_key"])
		}

		other := s.workspace(t)
		_, err = s.svc.ReplaceContent(ctx, a.ID, cairn.Staged{Key: s.stage(t, other.ID, body)})
		s.fails(t, err, cairn.ReasonStagingKeyInvalid)
		_, err = s.svc.ReplaceContent(ctx, a.ID, cairn.Staged{Key: "staging/" + ws.ID + "/" + unknownArtifact})
		s.fails(t, err, cairn.ReasonStagingNotFound)
		_, err = s.svc.ReplaceContent(ctx, a.ID, cairn.Staged{Key: ""})
		s.fails(t, err, cairn.ReasonInvalidParameters)
		_, err = s.svc.ReplaceContent(ctx, unknownArtifact, cairn.Staged{Key: "staging/" + ws.ID + "/" + unknownArtifact})
		s.fails(t, err, cairn.ReasonArtifactNotFound)
	})
}

func contractTransfers(t *testing.T, s subject) {
	ctx := t.Context()
	ws := s.readyWorkspace(t)
	const content = "hello from the volume"
	s.w.writeVolume(t, ws, cairn.MountPath+"/in.txt", content)
	s.w.mkdir(t, ws, cairn.MountPath+"/dir")

	a, err := s.svc.ArtifactFromVolume(ctx, ws.ID, cairn.VolumeArtifactCreate{SourcePath: cairn.MountPath + "/in.txt", Name: "saved"})
	require.NoError(t, err)
	require.Equal(t, int64(len(content)), a.Size)
	require.Equal(t, digest([]byte(content)), *a.SHA256B64, "the digest the put sidecar took while sending")
	require.Equal(t, "text/plain; charset=utf-8", a.MIMEType)

	t.Run("ArtifactFromVolumeRefusals", func(t *testing.T) {
		save := func(path, name string) error {
			_, err := s.svc.ArtifactFromVolume(ctx, ws.ID, cairn.VolumeArtifactCreate{SourcePath: path, Name: name})
			return err
		}
		s.fails(t, save(cairn.MountPath+"/in.txt", "saved"), cairn.ReasonNameTaken)
		s.fails(t, save("/etc/passwd", unique("x")), cairn.ReasonPathOutsideMount)
		s.fails(t, save(cairn.MountPath, unique("x")), cairn.ReasonPathIsMountRoot)
		s.fails(t, save(cairn.MountPath+"/absent", unique("x")), cairn.ReasonSourceNotFound)
		s.fails(t, save(cairn.MountPath+"/dir", unique("x")), cairn.ReasonSourceIsDirectory)
		s.fails(t, save("", unique("x")), cairn.ReasonInvalidParameters)
		_, err := s.svc.ArtifactFromVolume(ctx, unknownWorkspace, cairn.VolumeArtifactCreate{SourcePath: cairn.MountPath + "/in.txt", Name: "x"})
		s.fails(t, err, cairn.ReasonWorkspaceNotFound)
		none := s.workspace(t)
		_, err = s.svc.ArtifactFromVolume(ctx, none.ID, cairn.VolumeArtifactCreate{SourcePath: cairn.MountPath + "/in.txt", Name: "x"})
		s.fails(t, err, cairn.ReasonVolumeNotReady)
	})
	t.Run("UpdateFromVolume", func(t *testing.T) {
		target := s.upload(t, ws.ID, "updated", []byte("before"))
		s.w.markMissing(t, target.ID)
		const next = "the newer bytes of the volume"
		s.w.writeVolume(t, ws, cairn.MountPath+"/next.txt", next)
		got, err := s.svc.UpdateFromVolume(ctx, target.ID, cairn.MountPath+"/next.txt")
		require.NoError(t, err)
		require.Equal(t, cairn.ArtifactRecorded, got.State, "an update repairs a MISSING artifact")
		require.Equal(t, digest([]byte(next)), *got.SHA256B64)
		require.Equal(t, int64(len(next)), got.Size)

		_, err = s.svc.UpdateFromVolume(ctx, target.ID, cairn.MountPath+"/absent")
		s.fails(t, err, cairn.ReasonSourceNotFound)
		_, err = s.svc.UpdateFromVolume(ctx, unknownArtifact, cairn.MountPath+"/next.txt")
		s.fails(t, err, cairn.ReasonArtifactNotFound)
	})
	t.Run("LoadIntoVolume", func(t *testing.T) {
		require.NoError(t, s.svc.LoadIntoVolume(ctx, a.ID, cairn.MountPath+"/out.txt"))
		require.Equal(t, content, s.w.readVolume(t, ws, cairn.MountPath+"/out.txt"))

		s.fails(t, s.svc.LoadIntoVolume(ctx, a.ID, cairn.MountPath+"/nodir/out.txt"), cairn.ReasonTargetDirMissing)
		s.fails(t, s.svc.LoadIntoVolume(ctx, a.ID, ""), cairn.ReasonInvalidParameters)
		s.fails(t, s.svc.LoadIntoVolume(ctx, unknownArtifact, cairn.MountPath+"/x"), cairn.ReasonArtifactNotFound)
		missing := s.upload(t, ws.ID, "missing", []byte("m"))
		s.w.markMissing(t, missing.ID)
		s.fails(t, s.svc.LoadIntoVolume(ctx, missing.ID, cairn.MountPath+"/m.txt"), cairn.ReasonObjectMissing)
	})
}

func contractMaintenance(t *testing.T, s subject) {
	ctx := t.Context()
	ws := s.workspace(t)
	res, err := s.svc.Sweep(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, ws.ID, res.WorkspaceID)
	require.Empty(t, res.Errors)
	require.False(t, res.FinishedAt.Before(res.StartedAt))

	full, err := s.svc.Sweep(ctx, "")
	require.NoError(t, err)
	require.Empty(t, full.WorkspaceID)
	require.GreaterOrEqual(t, full.VolumesExamined, 1)

	_, err = s.svc.Sweep(ctx, unknownWorkspace)
	s.fails(t, err, cairn.ReasonWorkspaceNotFound)
}

func contractAudit(t *testing.T, s subject) {
	ctx := t.Context()
	ws := s.workspace(t)
	_, err := s.svc.RenameWorkspace(ctx, ws.ID, unique("audited"))
	require.NoError(t, err)
	events, err := s.svc.FindAuditEvents(ctx, cairn.AuditFilter{WorkspaceID: ws.ID})
	require.NoError(t, err)
	require.Len(t, events, 2)
	require.Equal(t, cairn.AuditNewWorkspace, events[0].Type)
	require.Equal(t, cairn.AuditRenameWorkspace, events[1].Type)
	require.Equal(t, s.actor, events[1].Actor)
	require.Equal(t, ws.ID, events[1].Metadata["workspace_id"])

	renames, err := s.svc.FindAuditEvents(ctx, cairn.AuditFilter{WorkspaceID: ws.ID,
		Types: []cairn.AuditType{cairn.AuditRenameWorkspace}})
	require.NoError(t, err)
	require.Equal(t, events[1:], renames)
	page, err := s.svc.FindAuditEvents(ctx, cairn.AuditFilter{WorkspaceID: ws.ID, Page: cairn.Page{Offset: 1, Limit: 1}})
	require.NoError(t, err)
	require.Equal(t, events[1:], page)
	_, err = s.svc.FindAuditEvents(ctx, cairn.AuditFilter{Page: cairn.Page{Limit: -1}})
	s.fails(t, err, cairn.ReasonInvalidQuery)
}
