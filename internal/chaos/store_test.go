//go:build chaos

package chaos

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// transferSize is the size of every transfer the store dies under; the
// kill comes at half of it.
const transferSize = 24 << 20

// storeChaos is the stack of TestStoreKilled: a server whose presigned
// URLs go through a counting proxy, a workspace with a volume, and what
// was acknowledged so far.
type storeChaos struct {
	srv   *stacktest.Server
	proxy *stacktest.StoreProxy
	c     *client.Client
	ws    *cairn.Workspace
	acked map[string]string

	down     atomic.Bool   // the store is killed and not restarted yet
	recovery time.Duration // the longest from a kill to the next success
}

// TestStoreKilled kills the object store (SIGKILL) halfway through each of
// five transfers — a multipart upload by the client, a ranged download by
// the client, a volume file put by a sidecar, a pack and an unpack — and
// restarts it once the transfer has failed. The client's transfers fail
// with the store unreachable and resume; the sidecars' answer
// store_unavailable and leave no row, no container and nothing in the
// volume, and the same request succeeds once the store is back. After a
// sweep nothing leaked and every acknowledged artifact has its bytes.
func TestStoreKilled(t *testing.T) {
	s := newStoreChaos(t)
	s.clientUpload(t)
	s.rangedDownload(t)
	s.volumePut(t)
	s.pack(t)
	s.unpack(t)

	fresh := filepath.Join(t.TempDir(), "fresh.bin")
	stacktest.RandomFile(t, fresh, 0xf5, 1<<20)
	upload(t, s.c, s.ws.ID, fresh, "fresh", s.acked)
	sweep(t, s.srv)
	record(t, Row{Fault: "store SIGKILL mid-transfer (upload, ranged download, put, pack, unpack)", InFlight: 5,
		Resumed: 5, Lost: lostArtifacts(t, s.srv, s.acked), Leaked: leaks(t, s.srv), Recovery: s.recovery})
}

func newStoreChaos(t *testing.T) *storeChaos {
	t.Helper()
	store := stacktest.S3(t)
	proxy := stacktest.StartStoreProxy(t, store.Endpoint)
	srv := stacktest.StartServer(t, stacktest.ServerOptions{PresignEndpoint: proxy.Addr(),
		MultipartThreshold: 8 << 20, PartSize: 5 << 20})
	s := &storeChaos{srv: srv, proxy: proxy, c: apiClient(t, srv), acked: map[string]string{}}
	// The store is shared by the package's tests: whatever happens here,
	// it runs again when this test ends.
	t.Cleanup(func() {
		if s.down.Load() {
			require.NoError(t, store.Restart(context.Background()))
		}
	})
	var err error
	s.ws, err = s.c.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "storekill"})
	require.NoError(t, err)
	require.NoError(t, s.c.SetupVolume(t.Context(), s.ws.ID))
	runInVolume(t, srv, s.ws.VolumeName, "mkdir /mnt/cairn/ws/src && head -c "+strconv.Itoa(transferSize)+
		" /dev/urandom > /mnt/cairn/ws/src/data.bin")
	return s
}

// kill arms the store's SIGKILL at mark bytes one way through the proxy,
// which then drops what the store had sent ahead: without that, a loopback
// socket's buffers could hold the rest of a transfer, and it would finish
// after the kill.
func (s *storeChaos) kill(up bool, mark int64) <-chan struct{} {
	return s.proxy.At(up, mark, func() {
		s.down.Store(true)
		s.srv.S3.Kill()
		s.proxy.Cut()
	})
}

// restart brings the store back after a kill that must have happened,
// and returns when it was killed.
func (s *storeChaos) restart(t *testing.T, fired <-chan struct{}) {
	t.Helper()
	select {
	case <-fired:
	default:
		t.Fatal("the transfer ended before the store was killed")
	}
	s.proxy.Disarm()
	require.NoError(t, s.srv.S3.Restart(t.Context()))
	s.down.Store(false)
}

// recovered notes how long the service took from the kill at killed to
// a success.
func (s *storeChaos) recovered(killed time.Time) {
	s.recovery = max(s.recovery, time.Since(killed))
}

// requireStoreTrouble requires err to be the store's absence as the
// client tells it: unreachable, or the server's store_unavailable.
func requireStoreTrouble(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	if _, ok := errors.AsType[*client.StoreUnreachableError](err); ok {
		return
	}
	requireReason(t, err, cairn.ReasonStoreUnavailable)
}

// clientUpload: a multipart upload by the Go client, the store killed
// when half of the bytes went up. The client's retries give up while the
// store is down; the same upload run again sends only the missing parts.
func (s *storeChaos) clientUpload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "upload.bin")
	sum := stacktest.RandomFile(t, path, 0x5d, transferSize)
	// One part at a time: the kill finds two parts of 5 MiB acknowledged
	// and the third on its way.
	o := client.UploadOptions{Name: "upload", StateDir: t.TempDir(), MultipartAbove: 8 << 20, Parallel: 1}
	fired := s.kill(true, transferSize/2)
	_, err := s.c.Upload(t.Context(), s.ws.ID, path, o)
	requireStoreTrouble(t, err)
	killed := time.Now()
	require.Zero(t, s.rows(t, "upload"), "no artifact row for a failed upload")
	s.restart(t, fired)

	var resumed bool
	o.Notice = func(n client.Notice) { resumed = resumed || n.Kind == client.NoticeResumed }
	a, err := s.c.Upload(t.Context(), s.ws.ID, path, o)
	require.NoError(t, err)
	s.recovered(killed)
	require.Equal(t, sum, *a.SHA256B64)
	require.True(t, resumed, "the second run resumed")
	s.acked[a.ID] = *a.SHA256B64
}

// rangedDownload: a ranged download by the Go client, the store killed
// in its second range (of 16 MiB, one at a time). Nothing is at the
// destination; the same download run again fetches the rest and verifies
// the whole.
func (s *storeChaos) rangedDownload(t *testing.T) {
	a := s.artifact(t, "upload")
	dest := filepath.Join(t.TempDir(), "download.bin")
	o := client.DownloadOptions{RangedAbove: 8 << 20, Parallel: 1}
	fired := s.kill(false, 20<<20)
	_, err := s.c.Download(t.Context(), a.ID, dest, o)
	requireStoreTrouble(t, err)
	killed := time.Now()
	_, statErr := os.Stat(dest)
	require.ErrorIs(t, statErr, os.ErrNotExist, "no partial destination file")
	s.restart(t, fired)

	var resumed bool
	o.Notice = func(n client.Notice) { resumed = resumed || n.Kind == client.NoticeResumed }
	_, err = s.c.Download(t.Context(), a.ID, dest, o)
	require.NoError(t, err)
	require.True(t, resumed, "the second run resumed")
	s.recovered(killed)
	data, err := os.ReadFile(dest)
	require.NoError(t, err)
	require.Equal(t, *a.SHA256B64, sha256B64(data))
}

// volumePut: a volume file stored as an artifact by a put sidecar, the
// store killed when half of the file went up.
func (s *storeChaos) volumePut(t *testing.T) {
	vc := cairn.VolumeArtifactCreate{SourcePath: "/mnt/cairn/ws/src/data.bin", Name: "put"}
	fired := s.kill(true, transferSize/2)
	_, err := s.c.ArtifactFromVolume(t.Context(), s.ws.ID, vc)
	requireReason(t, err, cairn.ReasonStoreUnavailable)
	killed := time.Now()
	s.requireNothingLeft(t, "put")
	s.restart(t, fired)
	s.retryFromVolume(t, vc, killed)
}

// pack: the source directory packed into a tar.gz artifact by a pack
// sidecar (in parts of 16 MiB), the store killed in its second part.
func (s *storeChaos) pack(t *testing.T) {
	vc := cairn.VolumeArtifactCreate{SourcePath: "/mnt/cairn/ws/src", Name: "pack", Format: cairn.ArchiveTarGz}
	fired := s.kill(true, 20<<20)
	_, err := s.c.ArtifactFromVolume(t.Context(), s.ws.ID, vc)
	requireReason(t, err, cairn.ReasonStoreUnavailable)
	killed := time.Now()
	s.requireNothingLeft(t, "pack")
	s.restart(t, fired)
	s.retryFromVolume(t, vc, killed)
}

// retryFromVolume runs a failed volume → store transfer again, as a user
// would once the store is back.
func (s *storeChaos) retryFromVolume(t *testing.T, vc cairn.VolumeArtifactCreate, killed time.Time) {
	t.Helper()
	a, err := s.c.ArtifactFromVolume(t.Context(), s.ws.ID, vc)
	require.NoError(t, err)
	s.recovered(killed)
	s.acked[a.ID] = *a.SHA256B64
}

// unpack: the packed archive unpacked into a new volume directory by an
// unpack sidecar, the store killed when half of the archive came back.
// Neither the target nor the staging directory beside it is left.
func (s *storeChaos) unpack(t *testing.T) {
	a := s.artifact(t, "pack")
	fired := s.kill(false, a.Size/2)
	_, err := s.c.UnpackArtifact(t.Context(), a.ID, "/mnt/cairn/ws/out")
	requireReason(t, err, cairn.ReasonStoreUnavailable)
	killed := time.Now()
	requireOnlyEntries(t, listing(t, s.srv, s.ws.VolumeName, "/mnt/cairn/ws"), "src")
	require.Zero(t, leakedContainers(t, s.srv.App), "no sidecar is left")
	s.restart(t, fired)

	res, err := s.c.UnpackArtifact(t.Context(), a.ID, "/mnt/cairn/ws/out")
	require.NoError(t, err)
	s.recovered(killed)
	require.Equal(t, int64(transferSize), res.Bytes)
	require.Equal(t, runInVolume(t, s.srv, s.ws.VolumeName, "sha256sum < /mnt/cairn/ws/src/data.bin"),
		runInVolume(t, s.srv, s.ws.VolumeName, "sha256sum < /mnt/cairn/ws/out/data.bin"))
}

// requireNothingLeft requires a failed volume → store transfer to have
// left no artifact row, no container and nothing new in the volume.
func (s *storeChaos) requireNothingLeft(t *testing.T, name string) {
	t.Helper()
	require.Zero(t, s.rows(t, name), "no artifact row for a failed transfer")
	require.Zero(t, leakedContainers(t, s.srv.App), "no sidecar is left")
	requireOnlyEntries(t, listing(t, s.srv, s.ws.VolumeName, "/mnt/cairn/ws"), "src")
	requireOnlyEntries(t, listing(t, s.srv, s.ws.VolumeName, "/mnt/cairn/ws/src"), "data.bin")
}

// rows counts the workspace's artifact rows named name, in any state.
func (s *storeChaos) rows(t *testing.T, name string) int {
	t.Helper()
	var n int
	require.NoError(t, database(t, s.srv).QueryRow(t.Context(),
		`SELECT count(*) FROM artifacts WHERE workspace_id = $1 AND name = $2`, s.ws.ID, name).Scan(&n))
	return n
}

// artifact is the workspace's artifact named name.
func (s *storeChaos) artifact(t *testing.T, name string) *cairn.Artifact {
	t.Helper()
	for id := range s.acked {
		d, err := s.c.GetArtifact(t.Context(), id, cairn.ArtifactGet{})
		require.NoError(t, err)
		if d.Artifact.Name == name {
			return d.Artifact
		}
	}
	t.Fatalf("no acknowledged artifact is named %s", name)
	return nil
}
