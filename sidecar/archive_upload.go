package sidecar

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Bounds of a pack's upload.
const (
	MinPartSize  = 5 << 20   // the object store's smallest part but the last
	MaxPartSize  = 32 << 20  // two of these must fit the container's 128 MiB beside the compressor
	MaxParts     = 10000     // the object store's most parts in one upload
	maxGrantLine = 256 << 10 // a longer Grant line is refused; a locate's holds LocateBatch presigned URLs
)

// checksumHeader carries a PUT's SHA-256, which its presigned URL binds.
const checksumHeader = "x-amz-checksum-sha256"

// spool uploads an archive as it is written, never holding more than two
// parts: the one being filled and the one on its way to the store. The
// archive's size is unknown until it ends, so a full part is sent only once
// the next byte arrives; an archive that ends inside the first part goes up
// as one object, any other as parts of exactly partSize bytes, the last
// possibly short. Compression (the writer's goroutine) and the upload of
// the previous part (the spool's) run at the same time.
//
// Memory: 2 × partSize (32 MiB at the 16 MiB the server sends, 64 MiB at
// MaxPartSize), plus the compressor's ~1 MiB; the pack container has
// 128 MiB.
type spool struct {
	partSize int64
	limit    int64
	total    int64
	cur      []byte
	buffers  int // allocated so far, at most two
	parts    int // handed to the uploader

	jobs chan spoolJob
	free chan []byte
	done chan struct{} // closed when the uploader failed
	wg   sync.WaitGroup

	// Owned by the uploader goroutine until wg.Wait returns.
	talk   *conversation
	client *http.Client
	sums   *digests
	f      *failure
	status int
}

type spoolJob struct {
	need string
	n    int
	buf  []byte
}

func newSpool(partSize, limit int64, talk *conversation) *spool {
	s := &spool{partSize: partSize, limit: limit, talk: talk, client: httpClient(), sums: newDigests(),
		jobs: make(chan spoolJob, 1), free: make(chan []byte, 2), done: make(chan struct{})}
	s.cur = s.buffer()
	s.wg.Add(1)
	go s.upload()
	return s
}

// buffer returns an empty part buffer: a new one while fewer than two
// exist, else the next one the uploader is done with.
func (s *spool) buffer() []byte {
	if s.buffers < 2 {
		s.buffers++
		return make([]byte, 0, s.partSize)
	}
	select {
	case b := <-s.free:
		return b
	case <-s.done:
		return nil
	}
}

func (s *spool) Write(p []byte) (int, error) {
	if s.total+int64(len(p)) > s.limit {
		return 0, fail(ReasonObjectTooLarge, "the archive grew past the %d byte cap of an artifact packed from a volume", s.limit)
	}
	written := len(p)
	for len(p) > 0 {
		if len(s.cur) == cap(s.cur) {
			if f := s.send(NeedPart); f != nil {
				return 0, f
			}
		}
		n := copy(s.cur[len(s.cur):cap(s.cur)], p)
		s.cur = s.cur[:len(s.cur)+n]
		p = p[n:]
	}
	s.total += int64(written)
	return written, nil
}

// send hands the current buffer to the uploader and takes an empty one.
func (s *spool) send(need string) *failure {
	if s.parts == MaxParts {
		return fail(ReasonObjectTooLarge, "the archive needs more than %d parts of %d bytes", MaxParts, s.partSize)
	}
	s.parts++
	select {
	case s.jobs <- spoolJob{need: need, n: s.parts, buf: s.cur}:
	case <-s.done:
		return s.f
	}
	if s.cur = s.buffer(); s.cur == nil {
		return s.f
	}
	return nil
}

// finish sends what is left, waits for the uploads and reports the parts
// sent (0: one object) and the store's status on a failure.
func (s *spool) finish() (parts int, f *failure) {
	need := NeedPart
	if s.parts == 0 {
		need = NeedObject
	}
	f = s.send(need)
	s.stop()
	if f == nil {
		f = s.f
	}
	if need == NeedObject {
		return 0, f
	}
	return s.parts, f
}

// stop ends the uploader and waits for it; a failed pack calls it to
// abandon the upload.
func (s *spool) stop() {
	close(s.jobs)
	s.wg.Wait()
}

func (s *spool) upload() {
	defer s.wg.Done()
	for j := range s.jobs {
		if s.f != nil {
			continue // draining after a failure
		}
		if s.f, s.status = s.put(j); s.f != nil {
			close(s.done)
			continue
		}
		s.free <- j.buf[:0]
	}
}

// put asks for a URL bound to the part's size and digest and sends it.
func (s *spool) put(j spoolJob) (*failure, int) {
	_, _ = s.sums.Write(j.buf) // never fails
	digest := sha256.Sum256(j.buf)
	need := Need{Need: j.need, Size: int64(len(j.buf)), SHA256B64: base64.StdEncoding.EncodeToString(digest[:])}
	what := "the archive"
	if j.need == NeedPart {
		need.Number = j.n
		what = fmt.Sprintf("part %d of the archive", j.n)
	}
	grant, f := s.talk.ask(need, what)
	if f != nil {
		return f, 0
	}
	return putBytes(s.client, grant.URL, j.buf, need.SHA256B64)
}

// putBytes PUTs body with its length and SHA-256, both of which the
// presigned URL binds.
func putBytes(client *http.Client, url string, body []byte, sha string) (*failure, int) {
	return putReader(client, url, bytes.NewReader(body), int64(len(body)), sha)
}

// putReader PUTs exactly size bytes of body (never chunked, a literal
// empty body for 0) with their SHA-256.
func putReader(client *http.Client, url string, body io.Reader, size int64, sha string) (*failure, int) {
	if size == 0 {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPut, url, body)
	if err != nil {
		return fail(ReasonEnvInvalid, "the server granted an upload URL that is not valid"), 0
	}
	req.ContentLength = size
	req.Header.Set(checksumHeader, sha)
	resp, err := client.Do(req)
	if err != nil {
		return unreachable("upload", err), 0
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16)) //nolint:errcheck // draining only
	if resp.StatusCode >= 300 {
		return statusFailure(resp.StatusCode, "upload"), resp.StatusCode
	}
	return nil, 0
}

// conversation is a sidecar's side of the Need/Grant exchange: one Need
// line out, one Grant line in, strictly in turn, also between goroutines
// (a pack's uploads and its progress reports).
type conversation struct {
	mu  sync.Mutex
	out io.Writer
	in  *bufio.Reader
}

func newConversation(in io.Reader, out io.Writer) *conversation {
	return &conversation{out: out, in: bufio.NewReaderSize(in, maxGrantLine)}
}

// ask prints need and reads the Grant that answers it with an upload URL;
// what names the bytes for messages.
func (c *conversation) ask(need Need, what string) (Grant, *failure) {
	g, f := c.roundTrip(need, what)
	switch {
	case f != nil:
		return Grant{}, f
	case g.Error != "":
		return Grant{}, fail(ReasonSidecarRejected, "the server refused to grant an upload of %s: %s", what, g.Error)
	case g.URL == "":
		return Grant{}, fail(ReasonEnvInvalid, "the grant for %s holds no URL", what)
	}
	return g, nil
}

// exchange prints need and reads the Grant that answers it, whatever it
// holds but an error: a have's or a locate's answer carries no URL. what
// names the question for messages.
func (c *conversation) exchange(need Need, what string) (Grant, *failure) {
	g, f := c.roundTrip(need, what)
	switch {
	case f != nil:
		return Grant{}, f
	case g.Error != "":
		return Grant{}, fail(ReasonSidecarRejected, "the server refused to answer %s: %s", what, g.Error)
	}
	return g, nil
}

// roundTrip prints need as one line and reads one Grant line.
func (c *conversation) roundTrip(need Need, what string) (Grant, *failure) {
	c.mu.Lock()
	defer c.mu.Unlock()
	line, err := json.Marshal(need)
	if err != nil {
		return Grant{}, fail(ReasonEnvInvalid, "cannot encode the request for %s", what)
	}
	if _, err := c.out.Write(append(line, '\n')); err != nil {
		return Grant{}, fail(ReasonEnvInvalid, "cannot send the request for %s: %v", what, err)
	}
	if fl, ok := c.out.(interface{ Flush() error }); ok {
		if err := fl.Flush(); err != nil {
			return Grant{}, fail(ReasonEnvInvalid, "cannot send the request for %s: %v", what, err)
		}
	}
	reply, err := c.in.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return Grant{}, fail(ReasonEnvInvalid, "the answer for %s is longer than %d bytes", what, maxGrantLine)
	case err != nil && (len(reply) == 0 || !errors.Is(err, io.EOF)):
		return Grant{}, fail(ReasonEnvInvalid, "no answer came for %s (standard input ended)", what)
	}
	var g Grant
	if err := json.Unmarshal(reply, &g); err != nil {
		return Grant{}, fail(ReasonEnvInvalid, "the answer for %s is not a grant line", what)
	}
	return g, nil
}
