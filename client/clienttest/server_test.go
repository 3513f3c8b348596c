package clienttest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/client/clienttest"
	"github.com/cairn-dev/cairn/ptyshell"
)

func setup(t *testing.T) (*clienttest.Server, *client.Client, *cairn.Workspace) {
	t.Helper()
	s := clienttest.New(t)
	return s, s.Client(t), s.AddWorkspace("ws-alpha", cairn.VolumeReady)
}

func TestTransfersRoundTrip(t *testing.T) {
	t.Parallel()
	s, c, ws := setup(t)
	ctx := t.Context()
	src := filepath.Join(t.TempDir(), "report.csv")
	require.NoError(t, os.WriteFile(src, []byte("id,name\n1,alpha\n"), 0o600))
	a, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{})
	require.NoError(t, err)
	require.Equal(t, "report_csv", a.Name)
	require.Equal(t, "text/csv", a.MIMEType, "sniffed as the server sniffs")
	w, _ := s.Workspace(ws.ID)
	require.Equal(t, int64(1), w.ArtifactCounts.Recorded)

	head, total, err := c.ReadHead(ctx, a.ID, 4)
	require.NoError(t, err)
	require.Equal(t, "id,n", string(head))
	require.Equal(t, int64(16), total)

	dest := filepath.Join(t.TempDir(), "out.csv")
	_, err = c.Download(ctx, a.ID, dest, client.DownloadOptions{})
	require.NoError(t, err)
	b, _ := os.ReadFile(dest)
	require.Equal(t, "id,name\n1,alpha\n", string(b))

	s.CorruptObject(a.ID, []byte("id,name\n1,ALPHA\n"))
	_, err = c.Download(ctx, a.ID, dest, client.DownloadOptions{Overwrite: true})
	require.ErrorIs(t, err, client.ErrVerification, "the store's bytes are not the recorded ones")
	require.NoFileExists(t, dest+".part")

	s.MarkMissing(a.ID)
	_, err = c.Download(ctx, a.ID, dest, client.DownloadOptions{Overwrite: true})
	require.Equal(t, cairn.ReasonObjectMissing, cairn.ErrorReason(err))
	a, err = c.Replace(ctx, a.ID, src, client.UploadOptions{})
	require.NoError(t, err)
	require.Equal(t, cairn.ArtifactRecorded, a.State, "replace repairs it")

	require.NoError(t, os.WriteFile(src, []byte("changed"), 0o600))
	s.FailNext("PUT /store/{key...}", 400, "BadDigest")
	_, err = c.Upload(ctx, ws.ID, src, client.UploadOptions{Name: "again"})
	require.Equal(t, cairn.ReasonSourceChanged, cairn.ErrorReason(err))
	require.Equal(t, 3, s.Hits("PUT /store/{key...}"), "the refused PUT was counted")
}

func TestFailNextAndHold(t *testing.T) {
	t.Parallel()
	s, c, _ := setup(t)
	s.FailNext("GET /v1/workspaces", 503, cairn.ReasonDockerUnavailable)
	_, err := c.FindWorkspaces(t.Context(), cairn.WorkspaceFilter{})
	require.Equal(t, cairn.ReasonDockerUnavailable, cairn.ErrorReason(err))
	ws, err := c.FindWorkspaces(t.Context(), cairn.WorkspaceFilter{})
	require.NoError(t, err)
	require.Len(t, ws, 1, "only the next one fails")

	release := s.Hold("GET /v1/workspaces")
	done := make(chan error, 1)
	go func() {
		_, err := c.FindWorkspaces(t.Context(), cairn.WorkspaceFilter{})
		done <- err
	}()
	require.Eventually(t, func() bool { return s.Hits("GET /v1/workspaces") == 3 }, 10*time.Second, time.Millisecond, "the request arrives")
	require.Empty(t, done, "a held route does not answer")
	release()
	require.NoError(t, <-done)
}

func TestVolumeTransfers(t *testing.T) {
	t.Parallel()
	s, c, ws := setup(t)
	ctx := t.Context()
	_, err := c.ArtifactFromVolume(ctx, ws.ID, cairn.VolumeArtifactCreate{SourcePath: "/etc/passwd", Name: "x"})
	require.Equal(t, cairn.ReasonPathOutsideMount, cairn.ErrorReason(err))
	_, err = c.ArtifactFromVolume(ctx, ws.ID, cairn.VolumeArtifactCreate{SourcePath: "/mnt/cairn/ws/probe.txt", Name: "probe_txt"})
	require.Equal(t, cairn.ReasonSourceNotFound, cairn.ErrorReason(err))
	s.PutVolumeFile(ws.ID, "/mnt/cairn/ws/out/probe.txt", []byte("cairn-42\n"))
	a, err := c.ArtifactFromVolume(ctx, ws.ID, cairn.VolumeArtifactCreate{SourcePath: "/mnt/cairn/ws/out/probe.txt", Name: "probe_txt"})
	require.NoError(t, err)
	require.Equal(t, int64(9), a.Size)
	require.Equal(t, cairn.ReasonTargetDirMissing, cairn.ErrorReason(c.LoadIntoVolume(ctx, a.ID, "/mnt/cairn/ws/no/x")))
	require.Equal(t, cairn.ReasonTargetIsDirectory, cairn.ErrorReason(c.LoadIntoVolume(ctx, a.ID, "/mnt/cairn/ws/out")))
	require.NoError(t, c.LoadIntoVolume(ctx, a.ID, "/mnt/cairn/ws/copy.txt"))
	b, ok := s.VolumeFile(ws.ID, "/mnt/cairn/ws/copy.txt")
	require.True(t, ok)
	require.Equal(t, "cairn-42\n", string(b))
	s.MarkMissing(a.ID)
	a, err = c.UpdateFromVolume(ctx, a.ID, "/mnt/cairn/ws/copy.txt")
	require.NoError(t, err)
	require.Equal(t, cairn.ArtifactRecorded, a.State)
}

func TestEvents(t *testing.T) {
	t.Parallel()
	s, c, ws := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	stream, err := c.Events(ctx, cairn.EventFilter{})
	require.NoError(t, err)
	defer func() { require.NoError(t, stream.Close()) }()
	ev, err := stream.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, cairn.EventHello, ev.Type)
	s.AddArtifact(ws.ID, "notes", []byte("hi"))
	ev, err = stream.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, cairn.EventArtifactUpserted, ev.Type)
	require.Equal(t, int64(1), ev.Seq)
	ev, err = stream.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, cairn.EventWorkspaceUpserted, ev.Type, "the counts moved")
	require.Equal(t, int64(1), ev.Workspace.ArtifactCounts.Recorded)
	s.Resync()
	ev, _ = stream.Next(ctx)
	require.Equal(t, cairn.EventResync, ev.Type)
	s.DropConnection()
	_, err = stream.Next(ctx)
	var d *cairn.DisconnectedError
	require.ErrorAs(t, err, &d)
	ev, err = stream.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, cairn.EventHello, ev.Type, "the client redials")
}

func TestShell(t *testing.T) {
	t.Parallel()
	s, c, ws := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	list, err := c.FindShells(ctx, "")
	require.NoError(t, err)
	require.True(t, list.Enabled)
	sess, err := c.Shell(ctx, ws.ID, ptyshell.Size{Cols: 80, Rows: 24}, "")
	require.NoError(t, err)
	_, err = sess.Write([]byte("echo hi\rexit 3\r"))
	require.NoError(t, err)
	<-sess.Done()
	r := sess.Result()
	require.Equal(t, ptyshell.EndExit, r.Ending)
	require.Equal(t, 3, r.Exit.ExitCode)

	none := s.AddWorkspace("ws-none", cairn.VolumeNone)
	_, err = c.Shell(ctx, none.ID, ptyshell.Size{Cols: 80, Rows: 24}, "")
	var e *cairn.Error
	require.True(t, errors.As(err, &e))
	require.Equal(t, 409, e.Status)
	require.Equal(t, cairn.ReasonVolumeNotReady, e.Reason)
	s.SetShellEnabled(false)
	_, err = c.Shell(ctx, ws.ID, ptyshell.Size{Cols: 80, Rows: 24}, "")
	require.Equal(t, cairn.ReasonShellDisabled, cairn.ErrorReason(err))
}
