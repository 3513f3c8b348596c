package client_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/client/clienttest"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
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
		ce := requireReason(t, err, cairn.ReasonObjectMissing)
		require.Equal(t, 409, ce.Status, "the server's HEAD finds the object gone before it presigns")
		require.NoFileExists(t, dest+".part")
		d, err := c.GetArtifact(ctx, a.ID, cairn.ArtifactGet{})
		require.NoError(t, err)
		require.Equal(t, cairn.ArtifactMissingObject, d.Artifact.State, "flagged on the spot, no sweep needed")

		_, err = c.Download(ctx, a.ID, dest, client.DownloadOptions{})
		ce = requireReason(t, err, cairn.ReasonObjectMissing)
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

// fakeSetup is a client of clienttest's in-memory server with one
// workspace.
func fakeSetup(t *testing.T) (*client.Client, *clienttest.Server, *cairn.Workspace) {
	t.Helper()
	s := clienttest.New(t)
	return s.Client(t), s, s.AddWorkspace(unique("fake"), cairn.VolumeReady)
}

// report is one PhaseProgress or Progress call; Phase 0 is Progress.
type report struct {
	Phase       client.Phase
	Done, Total int64
}

// recorder collects the reports of both callbacks in the order they came.
type recorder struct {
	mu   sync.Mutex
	seen []report
}

func (r *recorder) phase(p client.Phase, done, total int64) { r.add(report{p, done, total}) }
func (r *recorder) plain(done, total int64)                 { r.add(report{0, done, total}) }
func (r *recorder) add(x report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, x)
}

// of returns the reports of one phase (0: Progress's).
func (r *recorder) of(p client.Phase) []report {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []report
	for _, x := range r.seen {
		if x.Phase == p {
			out = append(out, x)
		}
	}
	return out
}

func TestPhaseProgress(t *testing.T) {
	t.Parallel()
	c, _, ws := fakeSetup(t)
	src, body := randomFile(t, "phases.bin", 1<<20+3)
	size := int64(len(body))

	t.Run("UploadHashesThenPuts", func(t *testing.T) {
		t.Parallel()
		var r recorder
		_, err := c.Upload(t.Context(), ws.ID, src, client.UploadOptions{Name: unique("up"), Progress: r.plain, PhaseProgress: r.phase})
		require.NoError(t, err)
		hashing, uploading := r.of(client.PhaseHashing), r.of(client.PhaseUploading)
		require.Equal(t, report{client.PhaseHashing, 0, size}, r.seen[0], "the hash pass is announced before a byte is read")
		require.Equal(t, report{client.PhaseHashing, size, size}, hashing[len(hashing)-1], "the hash pass ends at the whole file")
		require.Equal(t, report{client.PhaseUploading, 0, size}, uploading[0])
		require.Equal(t, report{client.PhaseUploading, size, size}, r.seen[len(r.seen)-1])
		firstUpload := slices.Index(r.seen, uploading[0])
		require.Len(t, hashing, firstUpload, "every hashing report comes before the PUT")
		for _, x := range r.seen[:firstUpload] {
			require.NotZero(t, x.Phase, "Progress hears nothing of the hash pass")
		}
		require.Equal(t, report{0, size, size}, r.of(0)[len(r.of(0))-1], "Progress still hears the PUT")
	})
	t.Run("ReplaceHashesThenPuts", func(t *testing.T) {
		t.Parallel()
		a, err := c.Upload(t.Context(), ws.ID, src, client.UploadOptions{Name: unique("rep")})
		require.NoError(t, err)
		var r recorder
		_, err = c.Replace(t.Context(), a.ID, src, client.UploadOptions{PhaseProgress: r.phase})
		require.NoError(t, err)
		require.Equal(t, report{client.PhaseHashing, 0, size}, r.seen[0])
		require.Contains(t, r.seen, report{client.PhaseHashing, size, size})
		require.Equal(t, report{client.PhaseUploading, size, size}, r.seen[len(r.seen)-1])
	})
	t.Run("Download", func(t *testing.T) {
		t.Parallel()
		a, err := c.Upload(t.Context(), ws.ID, src, client.UploadOptions{Name: unique("down")})
		require.NoError(t, err)
		var r recorder
		_, err = c.Download(t.Context(), a.ID, filepath.Join(t.TempDir(), "out"), client.DownloadOptions{PhaseProgress: r.phase})
		require.NoError(t, err)
		require.Equal(t, report{client.PhaseDownloading, 0, size}, r.seen[0])
		require.Equal(t, report{client.PhaseDownloading, size, size}, r.seen[len(r.seen)-1])
		require.Len(t, r.of(client.PhaseDownloading), len(r.seen))
	})
}

func TestDownloadPresignTTL(t *testing.T) {
	t.Parallel()
	c, s, ws := fakeSetup(t)
	a := s.AddArtifact(ws.ID, "ttl", []byte("short-lived"))
	const route = "GET /v1/artifacts/{id}"
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		want string
	}{
		{"Configured", 300 * time.Second, "300"},
		{"RoundedUp", 1500 * time.Millisecond, "2"},
		{"ServerMaximum", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Not parallel: the subtests read the route's last query in turn.
			_, err := c.Download(t.Context(), a.ID, filepath.Join(t.TempDir(), "out"), client.DownloadOptions{TTL: tc.ttl})
			require.NoError(t, err)
			q := s.LastQuery(route)
			require.Equal(t, "true", q.Get("presign"))
			require.Equal(t, tc.want, q.Get("ttl"))
		})
	}
}

// partRecorder is a part file that logs what Download does to it.
type partRecorder struct {
	f       *os.File
	dest    string
	syncErr error
	t       *testing.T
	events  []string
}

func (p *partRecorder) Write(b []byte) (int, error) {
	if len(p.events) == 0 || p.events[len(p.events)-1] != "write" {
		p.events = append(p.events, "write")
	}
	return p.f.Write(b)
}

func (p *partRecorder) Sync() error {
	require.NoFileExists(p.t, p.dest, "fsync comes before the rename")
	p.events = append(p.events, "sync")
	if p.syncErr != nil {
		return p.syncErr
	}
	return p.f.Sync()
}

func (p *partRecorder) Close() error {
	p.events = append(p.events, "close")
	return p.f.Close()
}

func TestDownloadSyncsBeforeRename(t *testing.T) {
	t.Parallel()
	c, s, ws := fakeSetup(t)
	body := []byte("durable bytes")
	a := s.AddArtifact(ws.ID, "durable", body)
	download := func(t *testing.T, syncErr error) (*partRecorder, string, error) {
		dest := filepath.Join(t.TempDir(), "out")
		rec := &partRecorder{dest: dest, syncErr: syncErr, t: t}
		o := client.WithPartFile(client.DownloadOptions{}, func(path string) (client.PartFile, error) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			rec.f = f
			return rec, err
		})
		_, err := c.Download(t.Context(), a.ID, dest, o)
		return rec, dest, err
	}
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		rec, dest, err := download(t, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"write", "sync", "close"}, rec.events)
		requireFile(t, dest, body)
		require.NoFileExists(t, dest+".part")
	})
	t.Run("SyncFailsNothingPlaced", func(t *testing.T) {
		t.Parallel()
		failed := errors.New("disk said no")
		rec, dest, err := download(t, failed)
		require.ErrorIs(t, err, failed)
		require.ErrorContains(t, err, "flush "+dest+".part")
		require.Equal(t, []string{"write", "sync", "close"}, rec.events)
		require.NoFileExists(t, dest)
		require.NoFileExists(t, dest+".part")
	})
}

// closedPort is a local address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func TestStoreUnreachable(t *testing.T) {
	t.Parallel()
	c, s, ws := fakeSetup(t)
	a := s.AddArtifact(ws.ID, "far", []byte("out of reach"))
	src, _ := randomFile(t, "near", 100)
	host := closedPort(t)
	s.SetStoreURL("http://" + host)
	requireStore := func(t *testing.T, err error, op string) {
		t.Helper()
		su, ok := errors.AsType[*client.StoreUnreachableError](err)
		require.True(t, ok, "%T: %v", err, err)
		require.Equal(t, host, su.Host)
		require.True(t, client.IsUnreachable(err), "the server is fine, but nothing answered")
		_, answered := errors.AsType[*cairn.Error](err)
		require.False(t, answered, "not an answer of cairn's")
		require.ErrorContains(t, err, op+" the object store at "+host)
		require.NotContains(t, err.Error(), "X-Amz-Signature", "the signature never shows")
		require.NotContains(t, err.Error(), "/store/", "nor the object's key")
	}
	for _, tc := range []struct {
		name string
		op   string
		call func(t *testing.T) error
	}{
		{"Upload", "upload to", func(t *testing.T) error {
			_, err := c.Upload(t.Context(), ws.ID, src, client.UploadOptions{Name: unique("far")})
			return err
		}},
		{"Replace", "upload to", func(t *testing.T) error {
			_, err := c.Replace(t.Context(), a.ID, src, client.UploadOptions{})
			return err
		}},
		{"Download", "download from", func(t *testing.T) error {
			dest := filepath.Join(t.TempDir(), "far")
			_, err := c.Download(t.Context(), a.ID, dest, client.DownloadOptions{})
			require.NoFileExists(t, dest)
			require.NoFileExists(t, dest+".part")
			return err
		}},
		{"ReadHead", "download from", func(t *testing.T) error {
			_, _, err := c.ReadHead(t.Context(), a.ID, 10)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireStore(t, tc.call(t), tc.op)
		})
	}
}

// TestTransfersStreamed: from client.StreamAbove, a single-PUT upload reads
// the file once where the store hashes what it receives (SeaweedFS) and
// hashes it first where it does not (versitygw, which refuses the
// streamed mint); either way the artifact's SHA-256 is the file's. A file
// rewritten while it is sent is refused source_changed and registers
// nothing, whichever way it went up.
func TestTransfersStreamed(t *testing.T) {
	t.Parallel()
	c := newClient(t, newBackend(t).remote(t, func(cfg *server.Config) { cfg.Artifact.Store.MaxObjectSize = 64 << 20 }))
	ctx := t.Context()
	ws, err := c.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: unique("streamed")})
	require.NoError(t, err)
	storeHashes := stacktest.StoreKind() == stack.StoreSeaweedFS

	t.Run("OK", func(t *testing.T) {
		src, body := randomFile(t, "one-read.bin", client.StreamAbove+5)
		for range 2 { // the second upload goes the way the first learned
			var r recorder
			a, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{Name: unique("s"), PhaseProgress: r.phase})
			require.NoError(t, err)
			require.Equal(t, digest(body), *a.SHA256B64)
			require.Equal(t, !storeHashes, len(r.of(client.PhaseHashing)) > 0, "a hash pass only where the store hashes nothing")
			require.Equal(t, report{client.PhaseUploading, a.Size, a.Size}, r.seen[len(r.seen)-1])
		}
	})
	t.Run("ErrRewrittenWhileSent", func(t *testing.T) {
		src, body := randomFile(t, "rewritten.bin", client.StreamAbove+5)
		name := unique("rewritten")
		var once sync.Once
		rewrite := func(p client.Phase, done, _ int64) {
			if p == client.PhaseUploading && done > 0 {
				once.Do(func() {
					f, err := os.OpenFile(src, os.O_WRONLY, 0)
					require.NoError(t, err)
					_, err = f.WriteAt([]byte{^body[len(body)-1]}, int64(len(body)-1))
					require.NoError(t, err)
					require.NoError(t, f.Close())
				})
			}
		}
		// Sent at 4 MiB/s, the last byte is still unread at the first report.
		_, err := c.Upload(ctx, ws.ID, src, client.UploadOptions{Name: name, PhaseProgress: rewrite, RateLimit: 4 << 20})
		e := requireReason(t, err, cairn.ReasonSourceChanged)
		require.Contains(t, e.Detail, "changed while it was uploaded")
		found, err := c.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, Names: []string{name}})
		require.NoError(t, err)
		require.Empty(t, found)
	})
}
