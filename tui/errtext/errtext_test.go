package errtext_test

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/client/clienttest"
	"github.com/cairn-dev/cairn/tui/errtext"
)

// storeUnreachable is the error of a real download whose presigned GET
// points at a port where nothing listens, as a server with a wrong
// artifact.s3.presignEndpoint hands out.
func storeUnreachable(t *testing.T) (string, error) {
	t.Helper()
	s := clienttest.New(t)
	ws := s.AddWorkspace("ws-alpha", cairn.VolumeReady)
	a := s.AddArtifact(ws.ID, "report_csv", []byte("a,b\n"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	host := ln.Addr().String()
	require.NoError(t, ln.Close())
	s.SetStoreURL("http://" + host)
	_, err = s.Client(t).Download(t.Context(), a.ID, filepath.Join(t.TempDir(), "report.csv"), client.DownloadOptions{})
	require.Error(t, err)
	return host, err
}

func TestSentence(t *testing.T) {
	t.Parallel()
	host, storeErr := storeUnreachable(t)
	subject := errtext.Subject{Workspace: "ws-alpha", Artifact: "report_csv", Name: "report_csv"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"StoreUnreachable", storeErr,
			"cannot reach the object store at " + host + " — the server's artifact.s3.presignEndpoint must be reachable from clients"},
		{"StoreUnreachableWrapped", fmt.Errorf("upload report.csv: %w", storeErr),
			"cannot reach the object store at " + host + " — the server's artifact.s3.presignEndpoint must be reachable from clients"},
		{"ServerUnreachable", errors.New("GET /v1/workspaces: unreachable: connection refused"),
			"cannot reach the server — connection refused"},
		{"StoreUnavailable", &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Status: 503},
			"object store unavailable — try again"},
		{"NameTaken", &cairn.Error{Reason: cairn.ReasonNameTaken, Status: 409},
			"ws-alpha already has an artifact named report_csv"},
		{"Other", &cairn.Error{Status: 500, RequestID: "req-7"},
			"server error (HTTP 500) — request ID req-7"},
		{"PathNotFoundIsNoWorkspaceGone", &cairn.Error{Reason: cairn.ReasonPathNotFound, Status: 404},
			"no such file or directory in the volume"},
		{"PathIsSymlink", &cairn.Error{Reason: cairn.ReasonPathIsSymlink, Status: 400},
			"that is a symlink — cairn never follows links; name its target"},
		{"VolumeNotReadyOnTheFilesRoutes", &cairn.Error{Reason: cairn.ReasonVolumeNotReady, Status: 409},
			"ws-alpha has no volume — v provisions one"},
		{"TargetExists", &cairn.Error{Reason: cairn.ReasonTargetExists, Status: 409},
			"it exists already in the volume — choose a new name"},
		{"FileChanged", &cairn.Error{Reason: cairn.ReasonFileChanged, Status: 412},
			"it changed in the volume since it was read — r lists it again"},
		{"BodyTooLarge", &cairn.Error{Reason: cairn.ReasonBodyTooLarge, Status: 413},
			"larger than one request may be — past files.write.maxBytes a file goes in as an artifact (u), then L"},
		{"ArchiveRatio", &cairn.Error{Reason: cairn.ReasonArchiveRatio, Status: 400},
			"the archive compresses past the server's ratio limit — nothing was written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, errtext.Sentence(tc.err, subject))
		})
	}
}

// The files and unpack refusals about the path go under the path field;
// those about the archive are toasts.
func TestFieldErrorOfVolumeFiles(t *testing.T) {
	t.Parallel()
	for _, r := range []cairn.Reason{cairn.ReasonTargetExists, cairn.ReasonPathNotFound, cairn.ReasonSourceNotDir, cairn.ReasonPathIsSymlink} {
		field, ok := errtext.FieldError(&cairn.Error{Reason: r})
		require.True(t, ok, r)
		require.Equal(t, "path", field, r)
	}
	for _, r := range []cairn.Reason{cairn.ReasonArchiveInvalid, cairn.ReasonArchiveUnsafePath, cairn.ReasonArchiveTooLarge, cairn.ReasonArchiveRatio} {
		_, ok := errtext.FieldError(&cairn.Error{Reason: r})
		require.False(t, ok, r)
	}
}

// A snapshot's refusals name the snapshot; a fork's name_taken says which
// of its two names was taken, as the server's detail does.
func TestSnapshotSentences(t *testing.T) {
	t.Parallel()
	take := errtext.Subject{Workspace: "ws-alpha", Snapshot: "before"}
	fork := errtext.Subject{Workspace: "ws-alpha", Name: "exp", Snapshot: "fork-exp"}
	for _, tc := range []struct {
		name    string
		err     error
		subject errtext.Subject
		want    string
	}{
		{"SnapshotNameTaken", cairn.Errorf(cairn.ReasonNameTaken, "workspace w1 already has a snapshot named 'before'"), take,
			"ws-alpha already has a snapshot named before"},
		{"ForkWorkspaceTaken", cairn.Errorf(cairn.ReasonNameTaken, "a workspace named 'exp' already exists"), fork,
			"a workspace named exp already exists"},
		{"ForkSnapshotTaken", cairn.Errorf(cairn.ReasonNameTaken, "workspace w1 already has a snapshot named 'fork-exp'"), fork,
			"ws-alpha already has a snapshot named fork-exp"},
		{"NotFound", &cairn.Error{Reason: cairn.ReasonSnapshotNotFound, Status: 404}, take, "snapshot before no longer exists"},
		{"Corrupt", &cairn.Error{Reason: cairn.ReasonSnapshotCorrupt, Status: 422}, take,
			"snapshot before no longer matches its content in the store — nothing was changed"},
		{"TooMany", &cairn.Error{Reason: cairn.ReasonTooManySnapshots, Status: 409}, take,
			"ws-alpha holds 1 000 snapshots, the most a workspace may — delete some first"},
		{"InUse", &cairn.Error{Reason: cairn.ReasonVolumeInUse, Status: 409}, take,
			"volume is mounted by running containers — end their shells or tool runs first"},
		{"QuotedDetailIsSanitised", &cairn.Error{Reason: cairn.ReasonInvalidName, Status: 400, Detail: "name 'a\x1b[31mb' is invalid"}, take,
			"name 'a^[[31mb' is invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, errtext.Sentence(tc.err, tc.subject))
		})
	}
}
