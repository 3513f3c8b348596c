package client_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

// remoteSetup is a client of a real server on a fresh backend.
func remoteSetup(t *testing.T) (*client.Client, *backend, string) {
	t.Helper()
	b := newBackend(t)
	url := b.remote(t)
	return newClient(t, url), b, url
}

// randomFile writes n pseudo-random bytes to a new file and returns its
// path and content.
func randomFile(t *testing.T, name string, n int) (string, []byte) {
	t.Helper()
	body := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(n), byte(n >> 8), byte(n >> 16)})
	_, _ = r.Read(body)
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, body, 0o600))
	return path, body
}

func TestTransfers(t *testing.T) {
	t.Parallel()
	c, b, _ := remoteSetup(t)
	ctx := t.Context()
	ws, err := c.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: unique("transfers")})
	require.NoError(t, err)

	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		src, body := randomFile(t, "data.bin", 3<<20+17)
		var last [2]int64
		var calls atomic.Int32
		progress := func(done, total int64) { calls.Add(1); last = [2]int64{done, total} }
		a, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{Progress: progress})
		require.NoError(t, err)
		require.Equal(t, "data_bin", a.Name, "the name comes from the file name")
		require.Equal(t, int64(len(body)), a.Size)
		require.Equal(t, digest(body), *a.SHA256B64)
		require.Equal(t, [2]int64{a.Size, a.Size}, last, "the last report is the whole file")

		dest := filepath.Join(t.TempDir(), "out.bin")
		last = [2]int64{}
		got, err := c.Download(ctx, a.ID, dest, client.DownloadOptions{Progress: progress})
		require.NoError(t, err)
		require.Equal(t, a, got)
		requireFile(t, dest, body)
		require.NoFileExists(t, dest+".part")
		require.Equal(t, [2]int64{a.Size, a.Size}, last)

		var buf bytes.Buffer
		_, err = c.DownloadTo(ctx, a.ID, &buf, client.DownloadOptions{})
		require.NoError(t, err)
		require.Equal(t, body, buf.Bytes())
	})
	t.Run("EmptyFile", func(t *testing.T) {
		t.Parallel()
		src, _ := randomFile(t, "empty", 0)
		a, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{Name: "empty", ContentType: "text/plain"})
		require.NoError(t, err)
		require.Equal(t, digest(nil), *a.SHA256B64)
		dest := filepath.Join(t.TempDir(), "empty")
		_, err = c.Download(ctx, a.ID, dest, client.DownloadOptions{})
		require.NoError(t, err)
		requireFile(t, dest, []byte{})
		head, total, err := c.ReadHead(ctx, a.ID, 10)
		require.NoError(t, err)
		require.Empty(t, head)
		require.Zero(t, total)
	})
	t.Run("ReadHead", func(t *testing.T) {
		t.Parallel()
		src, body := randomFile(t, "head", 5000)
		a, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{})
		require.NoError(t, err)
		head, total, err := c.ReadHead(ctx, a.ID, 100)
		require.NoError(t, err)
		require.Equal(t, body[:100], head)
		require.Equal(t, int64(5000), total)
		head, _, err = c.ReadHead(ctx, a.ID, 1<<20)
		require.NoError(t, err)
		require.Equal(t, body, head, "never more than the object")
	})
	t.Run("Replace", func(t *testing.T) {
		t.Parallel()
		src, _ := randomFile(t, "v1", 1000)
		a, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{Name: "versioned"})
		require.NoError(t, err)
		next, body := randomFile(t, "v2", 2000)
		got, err := c.Replace(ctx, a.ID, next, client.UploadOptions{})
		require.NoError(t, err)
		require.Equal(t, "versioned", got.Name)
		require.Equal(t, digest(body), *got.SHA256B64)
		var buf bytes.Buffer
		_, err = c.DownloadTo(ctx, a.ID, &buf, client.DownloadOptions{})
		require.NoError(t, err)
		require.Equal(t, body, buf.Bytes())

		_, err = c.Replace(ctx, unknownArtifact, next, client.UploadOptions{})
		require.Equal(t, cairn.ReasonArtifactNotFound, cairn.ErrorReason(err))
	})
	t.Run("UploadRefusals", func(t *testing.T) {
		t.Parallel()
		src, _ := randomFile(t, "once", 10)
		_, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{})
		require.NoError(t, err)
		_, err = c.Upload(ctx, ws.ID, src, client.UploadOptions{})
		ce := requireReason(t, err, cairn.ReasonNameTaken)
		require.Equal(t, 409, ce.Status)
		_, err = c.Upload(ctx, unknownWorkspace, src, client.UploadOptions{})
		_ = requireReason(t, err, cairn.ReasonWorkspaceNotFound)
		_, err = c.Upload(ctx, ws.ID, src, client.UploadOptions{Name: "not valid"})
		_ = requireReason(t, err, cairn.ReasonInvalidName)
		_, err = c.Upload(ctx, ws.ID, filepath.Join(t.TempDir(), "absent"), client.UploadOptions{})
		require.ErrorIs(t, err, fs.ErrNotExist)
		_, err = c.Upload(ctx, ws.ID, t.TempDir(), client.UploadOptions{Name: unique("dir")})
		require.ErrorContains(t, err, "not a regular file")
		big, _ := randomFile(t, "big", contractMaxObject+1)
		_, err = c.Upload(ctx, ws.ID, big, client.UploadOptions{})
		_ = requireReason(t, err, cairn.ReasonObjectTooLarge)
	})
	t.Run("ExistingDestination", func(t *testing.T) {
		t.Parallel()
		src, body := randomFile(t, "dest", 64)
		a, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{})
		require.NoError(t, err)
		dest := filepath.Join(t.TempDir(), "there")
		require.NoError(t, os.WriteFile(dest, []byte("keep me"), 0o600))
		_, err = c.Download(ctx, a.ID, dest, client.DownloadOptions{})
		require.ErrorIs(t, err, fs.ErrExist)
		requireFile(t, dest, []byte("keep me"))
		_, err = c.Download(ctx, a.ID, dest, client.DownloadOptions{Overwrite: true})
		require.NoError(t, err)
		requireFile(t, dest, body)
		_, err = c.Download(ctx, a.ID, t.TempDir(), client.DownloadOptions{Overwrite: true})
		require.ErrorContains(t, err, "is a directory")
	})
	t.Run("ChangedBehindOurBack", func(t *testing.T) {
		t.Parallel()
		src, body := randomFile(t, "tampered", 4096)
		a, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{})
		require.NoError(t, err)
		for name, forged := range map[string][]byte{
			"SameSize":  bytes.Repeat([]byte{'x'}, len(body)),
			"OtherSize": []byte("short"),
		} {
			b.putObject(t, a.ObjectKey, forged)
			dest := filepath.Join(t.TempDir(), name)
			_, err = c.Download(ctx, a.ID, dest, client.DownloadOptions{})
			require.ErrorIs(t, err, client.ErrVerification, name)
			require.NoFileExists(t, dest, name)
			require.NoFileExists(t, dest+".part", name)
		}
	})
	t.Run("LegacyArtifactVerifiedBySize", func(t *testing.T) {
		t.Parallel()
		src, body := randomFile(t, "legacy", 100)
		a, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{})
		require.NoError(t, err)
		_, err = b.db.Exec(ctx, `UPDATE artifacts SET sha256_b64 = NULL WHERE id = $1`, a.ID)
		require.NoError(t, err)
		var buf bytes.Buffer
		got, err := c.DownloadTo(ctx, a.ID, &buf, client.DownloadOptions{})
		require.NoError(t, err)
		require.Nil(t, got.SHA256B64)
		require.Equal(t, body, buf.Bytes())
	})
	t.Run("ObjectMissing", func(t *testing.T) {
		t.Parallel()
		src, _ := randomFile(t, "lost", 10)
		a, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{})
		require.NoError(t, err)
		_, err = b.gw.Client().DeleteObject(ctx, deleteInput(b.bucket, a.ObjectKey))
		require.NoError(t, err)
		dest := filepath.Join(t.TempDir(), "lost")
		_, err = c.Download(ctx, a.ID, dest, client.DownloadOptions{})
		_ = requireReason(t, err, cairn.ReasonObjectMissing)
		require.NoFileExists(t, dest+".part")

		b.markMissing(t, a.ID)
		_, err = c.Download(ctx, a.ID, dest, client.DownloadOptions{})
		ce := requireReason(t, err, cairn.ReasonObjectMissing)
		require.Equal(t, 409, ce.Status, "the server refuses to presign a MISSING artifact")
	})
	t.Run("CancelledDownloadLeavesNoPart", func(t *testing.T) {
		t.Parallel()
		src, _ := randomFile(t, "slow-down", 2<<20)
		a, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{})
		require.NoError(t, err)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		dest := filepath.Join(t.TempDir(), "cancelled")
		_, err = c.Download(cctx, a.ID, dest, client.DownloadOptions{RateLimit: 1 << 20,
			Progress: func(done, total int64) {
				if done < total {
					require.FileExists(t, dest+".part", "the bytes go to the part file")
					cancel()
				}
			}})
		require.ErrorIs(t, err, context.Canceled)
		require.NoFileExists(t, dest)
		require.NoFileExists(t, dest+".part")
	})
	t.Run("CancelledUploadRegistersNothing", func(t *testing.T) {
		t.Parallel()
		src, _ := randomFile(t, "slow-up", 2<<20)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		name := unique("cancelled")
		_, err := c.Upload(cctx, ws.ID, src, client.UploadOptions{Name: name, RateLimit: 1 << 20,
			Progress: func(done, total int64) {
				if done < total {
					cancel()
				}
			}})
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, client.IsUnreachable(err))
		list, err := c.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, Names: []string{name}})
		require.NoError(t, err)
		require.Empty(t, list)
	})
}

func requireFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "%s holds other bytes", path)
}

func requireReason(t *testing.T, err error, reason cairn.Reason) *cairn.Error {
	t.Helper()
	ce, ok := errors.AsType[*cairn.Error](err)
	require.True(t, ok, "%T is not a *cairn.Error: %v", err, err)
	require.Equal(t, reason, ce.Reason, ce.Detail)
	return ce
}
