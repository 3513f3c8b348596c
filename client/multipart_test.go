package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
)

// partSize is the part size of the multipart stacks: the smallest S3
// allows, so that a few MiB make several parts.
const partSize = cairn.MinPartSize

// multipartStack is a real server whose upload plans cut 5 MiB parts,
// with a workspace.
type multipartStack struct {
	b   *backend
	url string
	ws  *cairn.Workspace
}

func newMultipartStack(t *testing.T) *multipartStack {
	t.Helper()
	b := newBackend(t)
	url := b.remote(t, func(cfg *server.Config) {
		cfg.Artifact.Store.MaxObjectSize = 1 << 30
		cfg.Artifact.Store.PartSize = partSize
	})
	ws, err := newClient(t, url).CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: unique("multipart")})
	require.NoError(t, err)
	return &multipartStack{b: b, url: url, ws: ws}
}

// client is a client of the stack whose transfers go through traffic.
func (s *multipartStack) client(t *testing.T, traffic *storeTraffic) *client.Client {
	t.Helper()
	return newClient(t, s.url, client.WithHTTPClient(&http.Client{Transport: traffic}))
}

// uploadOptions send every file above 1 byte in parts, with the resume
// state in dir.
func uploadOptions(dir string) client.UploadOptions {
	return client.UploadOptions{MultipartAbove: 1, StateDir: dir}
}

// storeTraffic is a transport that counts what presigned requests move:
// bytes read from PUT bodies, bytes read from GET answers, and how many
// part PUTs are in flight at once. With gate set, the first part PUTs wait
// until gate of them are in flight together.
type storeTraffic struct {
	rt       http.RoundTripper
	sent     atomic.Int64
	received atomic.Int64

	gate     int
	mu       sync.Mutex
	inFlight int
	most     int
	opened   chan struct{} // closed when gate PUTs were in flight together
}

func newTraffic() *storeTraffic {
	return &storeTraffic{rt: http.DefaultTransport.(*http.Transport).Clone(), opened: make(chan struct{})}
}

func (s *storeTraffic) RoundTrip(r *http.Request) (*http.Response, error) {
	if !r.URL.Query().Has("X-Amz-Signature") {
		return s.rt.RoundTrip(r)
	}
	if r.Method == http.MethodPut && r.Body != nil && r.Body != http.NoBody {
		r = r.Clone(r.Context())
		r.Body = &counting{r.Body, &s.sent}
	}
	if r.URL.Query().Has("partNumber") {
		if err := s.enter(r.Context()); err != nil {
			return nil, err
		}
		defer s.leave()
	}
	resp, err := s.rt.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet {
		resp.Body = &counting{resp.Body, &s.received}
	}
	return resp, err
}

// enter counts a part PUT in flight and, while the gate is closed, waits
// for it to open.
func (s *storeTraffic) enter(ctx context.Context) error {
	s.mu.Lock()
	s.inFlight++
	s.most = max(s.most, s.inFlight)
	if s.gate > 0 && s.inFlight == s.gate {
		close(s.opened)
		s.gate = 0
	}
	gated := s.gate > 0
	s.mu.Unlock()
	if !gated {
		return nil
	}
	select {
	case <-s.opened:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(30 * time.Second):
		return context.DeadlineExceeded
	}
}

func (s *storeTraffic) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
}

func (s *storeTraffic) mostInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.most
}

// counting is a body that adds what is read from it to n.
type counting struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *counting) Read(p []byte) (int, error) {
	k, err := c.ReadCloser.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// notices collects the notices of a transfer.
type notices struct {
	mu   sync.Mutex
	seen []client.Notice
}

func (n *notices) add(x client.Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seen = append(n.seen, x)
}

func (n *notices) texts() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, x := range n.seen {
		out = append(out, x.Text)
	}
	return out
}

func (n *notices) kinds() []client.NoticeKind {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []client.NoticeKind
	for _, x := range n.seen {
		out = append(out, x.Kind)
	}
	return out
}

// interruptedUpload starts an upload of src with o and cancels it once
// after parts are stored; it returns the pending upload left behind. The
// parts go one at a time, so that none is in flight at the cut: the store
// may still complete a part whose client gave up after sending it all,
// and an abort racing such a part leaves versitygw with an upload that
// lists parts but cannot complete.
func interruptedUpload(t *testing.T, c *client.Client, wsID, src string, o client.UploadOptions, after int) client.PendingUpload {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	o.Parallel = 1
	o.PartProgress = func(done, _ int) {
		if done >= after {
			cancel()
		}
	}
	_, err := c.Upload(ctx, wsID, src, o)
	require.ErrorIs(t, err, context.Canceled)
	pending, err := c.PendingUploads(o.StateDir)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	return pending[0]
}

func fileDigest(t *testing.T, path string) string {
	t.Helper()
	body, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(body)
	return base64.StdEncoding.EncodeToString(sum[:])
}

func TestMultipartUpload(t *testing.T) {
	t.Parallel()
	s := newMultipartStack(t)

	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		traffic := newTraffic()
		c := s.client(t, traffic)
		src, body := randomFile(t, "parts.bin", 4*partSize+123)
		dir := t.TempDir()
		var parts [2]int
		var r recorder
		o := uploadOptions(dir)
		o.PhaseProgress, o.PartProgress = r.phase, func(done, total int) { parts = [2]int{done, total} }
		a, err := c.Upload(t.Context(), s.ws.ID, src, o)
		require.NoError(t, err)
		require.Equal(t, int64(len(body)), a.Size)
		require.Equal(t, digest(body), *a.SHA256B64, "the server hashed the assembled parts")
		require.Equal(t, [2]int{5, 5}, parts)
		require.Equal(t, int64(len(body)), traffic.sent.Load(), "every byte once")
		require.Empty(t, r.of(client.PhaseHashing), "a fresh multipart upload has no hash pass")
		require.Equal(t, report{client.PhaseUploading, int64(len(body)), int64(len(body))}, r.seen[len(r.seen)-1])
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, entries, "the state goes once registered")

		dest := filepath.Join(t.TempDir(), "back.bin")
		do := client.WithRangeSize(client.DownloadOptions{RangedAbove: 1}, 3<<20)
		do.PartProgress = func(done, total int) { parts = [2]int{done, total} }
		got, err := c.Download(t.Context(), a.ID, dest, do)
		require.NoError(t, err)
		require.Equal(t, a.ID, got.ID)
		requireFile(t, dest, body)
		require.Equal(t, [2]int{7, 7}, parts, "20 MiB in 3 MiB ranges")
		require.NoFileExists(t, dest+".part")
		require.NoFileExists(t, dest+".part.json")
	})
	t.Run("PartsInParallel", func(t *testing.T) {
		t.Parallel()
		traffic := newTraffic()
		traffic.gate = client.DefaultParallel
		c := s.client(t, traffic)
		src, body := randomFile(t, "wide.bin", 6*partSize)
		a, err := c.Upload(t.Context(), s.ws.ID, src, uploadOptions(t.TempDir()))
		require.NoError(t, err, "the first parts waited for %d of them in flight together", client.DefaultParallel)
		require.Equal(t, digest(body), *a.SHA256B64)
		require.Equal(t, client.DefaultParallel, traffic.mostInFlight(), "never more than Parallel")
	})
	t.Run("Replace", func(t *testing.T) {
		t.Parallel()
		c := s.client(t, newTraffic())
		small, _ := randomFile(t, "v1", 100)
		a, err := c.Upload(t.Context(), s.ws.ID, small, client.UploadOptions{Name: unique("replaced")})
		require.NoError(t, err)
		src, body := randomFile(t, "v2", 2*partSize+1)
		got, err := c.Replace(t.Context(), a.ID, src, uploadOptions(t.TempDir()))
		require.NoError(t, err)
		require.Equal(t, a.Name, got.Name)
		require.Equal(t, digest(body), *got.SHA256B64)
	})
	t.Run("RefusedName", func(t *testing.T) {
		t.Parallel()
		c := s.client(t, newTraffic())
		src, _ := randomFile(t, "taken", 2*partSize)
		name := unique("taken")
		_, err := c.Upload(t.Context(), s.ws.ID, src, client.UploadOptions{Name: name})
		require.NoError(t, err)
		dir := t.TempDir()
		o := uploadOptions(dir)
		o.Name = name
		_, err = c.Upload(t.Context(), s.ws.ID, src, o)
		_ = requireReason(t, err, cairn.ReasonNameTaken)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, entries, "refused before an upload started")
	})
}

func TestMultipartResume(t *testing.T) {
	t.Parallel()
	s := newMultipartStack(t)

	t.Run("SendsOnlyTheMissingParts", func(t *testing.T) {
		t.Parallel()
		c := s.client(t, newTraffic())
		src, body := randomFile(t, "resumed.bin", 8*partSize+5)
		dir := t.TempDir()
		o := uploadOptions(dir)
		o.Name = unique("resumed")
		p := interruptedUpload(t, c, s.ws.ID, src, o, 2)
		require.Equal(t, o.Name, p.Name)
		require.Equal(t, s.ws.ID, p.WorkspaceID)
		require.Equal(t, src, p.Path)
		require.False(t, p.SourceChanged)
		stored, storedBytes, err := c.PendingProgress(t.Context(), p)
		require.NoError(t, err)
		require.Equal(t, 2, stored, "the cut came after the second part")

		traffic := newTraffic()
		var heard notices
		var r recorder
		o.Notice, o.PhaseProgress = heard.add, r.phase
		a, err := s.client(t, traffic).Upload(t.Context(), s.ws.ID, src, o)
		require.NoError(t, err)
		require.Equal(t, digest(body), *a.SHA256B64)
		require.Equal(t, []client.NoticeKind{client.NoticeResumed}, heard.kinds())
		require.Equal(t, stored, heard.seen[0].PartsDone)
		require.Equal(t, 9, heard.seen[0].PartsTotal)
		require.Equal(t, report{client.PhaseHashing, 0, storedBytes}, r.seen[0], "the stored parts are hashed from the file first")
		require.Equal(t, report{client.PhaseUploading, storedBytes, int64(len(body))}, r.of(client.PhaseUploading)[0],
			"the upload starts at the bytes stored")
		require.Equal(t, int64(len(body))-storedBytes, traffic.sent.Load(), "only the missing parts went up")
		pending, err := c.PendingUploads(dir)
		require.NoError(t, err)
		require.Empty(t, pending)
	})
	t.Run("StoredPartOfOtherBytesSentAgain", func(t *testing.T) {
		t.Parallel()
		c := s.client(t, newTraffic())
		src, _ := randomFile(t, "patched.bin", 6*partSize)
		o := uploadOptions(t.TempDir())
		p := interruptedUpload(t, c, s.ws.ID, src, o, 2)
		stored, storedBytes, err := c.PendingProgress(t.Context(), p)
		require.NoError(t, err)
		key, upload := client.PendingRef(p)
		parts, err := c.UploadedParts(t.Context(), s.ws.ID, key, upload)
		require.NoError(t, err)
		// Rewrite a stored part in place and keep the file's fingerprint:
		// only its hash can tell.
		fi, err := os.Stat(src)
		require.NoError(t, err)
		f, err := os.OpenFile(src, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("patched"), int64(parts[0].Number-1)*partSize+10)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.NoError(t, os.Chtimes(src, fi.ModTime(), fi.ModTime()))

		traffic := newTraffic()
		var heard notices
		o.Notice = heard.add
		a, err := s.client(t, traffic).Upload(t.Context(), s.ws.ID, src, o)
		require.NoError(t, err)
		require.Equal(t, fileDigest(t, src), *a.SHA256B64, "the patched bytes were stored")
		if stacktest.StoreKind() == stack.StoreSeaweedFS {
			// SeaweedFS lists parts without checksums (compared by MD5
			// ETag) and keeps every version of a part sent twice: a changed
			// part means starting over.
			require.Contains(t, heard.texts(), "a stored part differs from the file, and this store keeps every version of a part; starting over")
			require.Equal(t, int64(6*partSize), traffic.sent.Load())
			return
		}
		require.Equal(t, stored-1, heard.seen[0].PartsDone, "the changed part does not count as stored")
		require.Equal(t, int64(6*partSize)-storedBytes+partSize, traffic.sent.Load())
	})
	t.Run("SourceChangedStartsOver", func(t *testing.T) {
		t.Parallel()
		c := s.client(t, newTraffic())
		src, _ := randomFile(t, "changed.bin", 6*partSize)
		o := uploadOptions(t.TempDir())
		p := interruptedUpload(t, c, s.ws.ID, src, o, 2)
		_, body := randomFile(t, "other", 6*partSize+1)
		require.NoError(t, os.WriteFile(src, body, 0o600))
		pending, err := c.PendingUploads(o.StateDir)
		require.NoError(t, err)
		require.True(t, pending[0].SourceChanged)

		traffic := newTraffic()
		var heard notices
		o.Notice = heard.add
		a, err := s.client(t, traffic).Upload(t.Context(), s.ws.ID, src, o)
		require.NoError(t, err)
		require.Equal(t, digest(body), *a.SHA256B64)
		require.Equal(t, []client.NoticeKind{client.NoticeSourceChanged}, heard.kinds())
		require.Equal(t, "source changed since the interrupted upload; starting over", heard.seen[0].Text)
		require.Equal(t, int64(len(body)), traffic.sent.Load(), "all of it again")
		key, upload := client.PendingRef(p)
		_, err = c.UploadedParts(t.Context(), s.ws.ID, key, upload)
		_ = requireReason(t, err, cairn.ReasonStagingNotFound) // the old upload was aborted
	})
	t.Run("UploadGoneStartsOver", func(t *testing.T) {
		t.Parallel()
		c := s.client(t, newTraffic())
		src, body := randomFile(t, "gone.bin", 4*partSize)
		o := uploadOptions(t.TempDir())
		p := interruptedUpload(t, c, s.ws.ID, src, o, 1)
		key, upload := client.PendingRef(p)
		require.NoError(t, c.AbortUpload(t.Context(), s.ws.ID, key, upload), "as the maintainer would after the grace window")

		var heard notices
		o.Notice = heard.add
		a, err := c.Upload(t.Context(), s.ws.ID, src, o)
		require.NoError(t, err)
		require.Equal(t, digest(body), *a.SHA256B64)
		require.Equal(t, []client.NoticeKind{client.NoticeUploadGone}, heard.kinds())
	})
	t.Run("Discarded", func(t *testing.T) {
		t.Parallel()
		c := s.client(t, newTraffic())
		src, _ := randomFile(t, "discarded.bin", 4*partSize)
		o := uploadOptions(t.TempDir())
		p := interruptedUpload(t, c, s.ws.ID, src, o, 1)
		require.NoError(t, c.DiscardUpload(t.Context(), p))
		pending, err := c.PendingUploads(o.StateDir)
		require.NoError(t, err)
		require.Empty(t, pending)
		_, _, err = c.PendingProgress(t.Context(), p)
		_ = requireReason(t, err, cairn.ReasonStagingNotFound)
	})
	t.Run("RegisterAnswerLost", func(t *testing.T) {
		t.Parallel()
		lossy := &loseRegister{rt: http.DefaultTransport.(*http.Transport).Clone()}
		c := newClient(t, s.url, client.WithHTTPClient(&http.Client{Transport: lossy}))
		src, body := randomFile(t, "lost-answer.bin", 2*partSize)
		o := uploadOptions(t.TempDir())
		o.Name = unique("lost-answer")
		_, err := c.Upload(t.Context(), s.ws.ID, src, o)
		require.True(t, client.IsUnreachable(err), "%v", err)

		a, err := c.Upload(t.Context(), s.ws.ID, src, o)
		require.NoError(t, err, "the artifact the first run registered is the result")
		require.Equal(t, o.Name, a.Name)
		require.Equal(t, digest(body), *a.SHA256B64)
		pending, err := c.PendingUploads(o.StateDir)
		require.NoError(t, err)
		require.Empty(t, pending)
	})
}

// loseRegister sends the first register and loses its answer, as a
// connection dropped after the server committed would.
type loseRegister struct {
	rt   http.RoundTripper
	lost atomic.Bool
}

func (l *loseRegister) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/artifacts") && !l.lost.Swap(true) {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, io.ErrUnexpectedEOF
	}
	return resp, err
}

// A part PUT whose bytes are not the ones its URL was minted for is
// refused by the store, and a register of the upload then lacks it.
func TestMultipartRefusesOtherBytes(t *testing.T) {
	t.Parallel()
	s := newMultipartStack(t)
	c := newClient(t, s.url)
	ctx := t.Context()
	st, err := c.MintStaging(ctx, s.ws.ID, cairn.StagingRequest{Size: partSize + 10, Multipart: true})
	require.NoError(t, err)
	require.NotNil(t, st.Upload)
	require.Empty(t, st.PutURL)
	require.Equal(t, 2, st.Upload.PartCount)

	good := strings.Repeat("a", partSize)
	urls, err := c.MintParts(ctx, s.ws.ID, cairn.PartRequest{StagingKey: st.Key, UploadID: st.Upload.ID,
		Parts: []cairn.PartSpec{{Number: 1, Size: partSize, SHA256B64: digest([]byte(good))}}})
	require.NoError(t, err)
	putPart := func(body string, length int64) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, urls.Parts[0].PutURL, strings.NewReader(body))
		require.NoError(t, err)
		req.ContentLength = length
		req.Header.Set("x-amz-checksum-sha256", digest([]byte(good)))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		return resp.StatusCode
	}
	other := strings.Repeat("b", partSize)
	require.Equal(t, http.StatusBadRequest, putPart(other, partSize), "BadDigest: not the bytes the URL is bound to")
	// A short body, so that the store's early answer is read, not reset
	// under a body still being written.
	require.Equal(t, http.StatusForbidden, putPart(good[:1<<10], 1<<10), "another length breaks the signature")
	parts, err := c.UploadedParts(ctx, s.ws.ID, st.Key, st.Upload.ID)
	require.NoError(t, err)
	require.Empty(t, parts, "nothing was stored")

	_, err = c.RegisterArtifact(ctx, s.ws.ID, cairn.ArtifactCreate{StagingKey: st.Key, Name: unique("refused"),
		Upload: &cairn.StagedUpload{ID: st.Upload.ID, Size: partSize + 10}})
	_ = requireReason(t, err, cairn.ReasonUploadIncomplete)
}

func TestRangedDownloadResume(t *testing.T) {
	t.Parallel()
	s := newMultipartStack(t)
	c := newClient(t, s.url)
	src, body := randomFile(t, "ranged.bin", 20<<20+3)
	a, err := c.Upload(t.Context(), s.ws.ID, src, client.UploadOptions{Name: unique("ranged")})
	require.NoError(t, err)
	options := func() client.DownloadOptions {
		return client.WithRangeSize(client.DownloadOptions{RangedAbove: 1, Parallel: 2}, 1<<20)
	}
	// interrupted downloads a to dest and cancels it once after ranges
	// are complete, leaving the part file and its sidecar.
	interrupted := func(t *testing.T, dest string, after int) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		o := options()
		o.PartProgress = func(done, _ int) {
			if done >= after {
				cancel()
			}
		}
		_, err := c.Download(ctx, a.ID, dest, o)
		require.ErrorIs(t, err, context.Canceled)
		require.FileExists(t, dest+".part")
		require.FileExists(t, dest+".part.json")
		require.NoFileExists(t, dest)
	}

	t.Run("FetchesOnlyTheMissingRanges", func(t *testing.T) {
		t.Parallel()
		dest := filepath.Join(t.TempDir(), "out")
		interrupted(t, dest, 5)
		traffic := newTraffic()
		var heard notices
		o := options()
		o.Notice = heard.add
		_, err := s.client(t, traffic).Download(t.Context(), a.ID, dest, o)
		require.NoError(t, err)
		requireFile(t, dest, body)
		require.Equal(t, []client.NoticeKind{client.NoticeResumed}, heard.kinds())
		kept := heard.seen[0].PartsDone
		require.GreaterOrEqual(t, kept, 5)
		require.Equal(t, int64(len(body))-int64(kept)<<20, traffic.received.Load(), "only the missing ranges came")
		require.NoFileExists(t, dest+".part")
		require.NoFileExists(t, dest+".part.json")
	})
	t.Run("ChangedArtifactStartsOver", func(t *testing.T) {
		t.Parallel()
		other, err := c.Upload(t.Context(), s.ws.ID, src, client.UploadOptions{Name: unique("to-change")})
		require.NoError(t, err)
		dest := filepath.Join(t.TempDir(), "out")
		ctx, cancel := context.WithCancel(t.Context())
		o := options()
		o.PartProgress = func(done, _ int) {
			if done >= 3 {
				cancel()
			}
		}
		_, err = c.Download(ctx, other.ID, dest, o)
		cancel()
		require.ErrorIs(t, err, context.Canceled)
		next, newBody := randomFile(t, "next", 20<<20+9)
		_, err = c.Replace(t.Context(), other.ID, next, client.UploadOptions{})
		require.NoError(t, err)

		var heard notices
		o = options()
		o.Notice = heard.add
		_, err = c.Download(t.Context(), other.ID, dest, o)
		require.NoError(t, err)
		requireFile(t, dest, newBody)
		require.Equal(t, []client.NoticeKind{client.NoticeArtifactChanged}, heard.kinds())
	})
	t.Run("MismatchKeepsNothing", func(t *testing.T) {
		t.Parallel()
		forged, err := c.Upload(t.Context(), s.ws.ID, src, client.UploadOptions{Name: unique("forged")})
		require.NoError(t, err)
		flipped := append([]byte(nil), body...)
		flipped[len(flipped)-1] ^= 0xff
		s.b.putObject(t, forged.ObjectKey, flipped)
		dest := filepath.Join(t.TempDir(), "out")
		_, err = c.Download(t.Context(), forged.ID, dest, options())
		require.ErrorIs(t, err, client.ErrVerification)
		require.NoFileExists(t, dest)
		require.NoFileExists(t, dest+".part")
		require.NoFileExists(t, dest+".part.json")
	})
}
