package sidecar

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"net/http"
	"sync"
)

// Shape of a ranger's reads.
const (
	rangerTail   = 1 << 20 // fetched first: the zip's directory end, and most often its whole directory
	rangerBuffer = 1 << 20 // read-ahead of the streaming body
	rangerSkip   = 4 << 20 // a gap forward is read through, not asked for anew, up to this
)

// ranger is an io.ReaderAt over the presigned GET of an archive, by HTTP
// Range requests. It fetches the archive's tail first (that is where a zip
// begins to be read), then serves reads before it from one open-ended
// streaming request ("bytes=N-") behind a read-ahead buffer: a read at or a
// little past the stream's position costs no request, only a jump back or
// far ahead opens a new one. So the directory and a front-to-back
// extraction take a handful of requests however many entries there are.
//
// When a digest is to be checked it hashes the archive front to back as
// bytes go by; digest fetches whatever the reads skipped.
type ranger struct {
	client *http.Client
	url    string
	size   int64
	tail   []byte
	tailAt int64

	mu       sync.Mutex
	body     io.ReadCloser
	br       *bufio.Reader
	pos      int64 // offset of br's next byte
	sum      *inOrder
	requests int
	f        *failure // the store's failure, kept for the result
	status   int
}

// openRanger fetches the tail of the archive at url, learning its size,
// which must not pass limit. On a failure, status is the store's answer,
// if it gave one.
func openRanger(client *http.Client, url string, limit int64, sum *inOrder) (r *ranger, status int, f *failure) {
	r = &ranger{client: client, url: url, sum: sum}
	if f := r.tailOf(limit); f != nil {
		return nil, r.status, f
	}
	return r, 0, nil
}

func (r *ranger) tailOf(limit int64) *failure {
	resp, f := r.get(fmt.Sprintf("bytes=-%d", rangerTail))
	if f != nil {
		return f
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusPartialContent:
		start, _, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok && resp.ContentLength == 0 {
			return fail(ReasonArchiveInvalid, "the archive is empty") // "bytes 0--1/0", as some stores put it
		}
		if !ok {
			return fail(ReasonStoreError, "the object store answered a range request without a valid Content-Range")
		}
		r.size, r.tailAt = total, start
	case http.StatusOK:
		// The store ignored the range: the body is the whole archive,
		// acceptable only when it is small enough to be the tail.
		if resp.ContentLength < 0 || resp.ContentLength > rangerTail {
			return fail(ReasonStoreError, "the object store does not serve byte ranges, which unpacking a zip needs")
		}
		r.size = resp.ContentLength
	case http.StatusRequestedRangeNotSatisfiable:
		return fail(ReasonArchiveInvalid, "the archive is empty")
	default:
		r.status = resp.StatusCode
		return statusFailure(resp.StatusCode, "download")
	}
	if r.size > limit {
		return fail(ReasonArchiveTooLarge, "the archive is %d bytes, over the %d byte cap", r.size, limit)
	}
	tail, err := io.ReadAll(io.LimitReader(resp.Body, r.size-r.tailAt))
	if err != nil {
		return brokeOff(err)
	}
	if int64(len(tail)) != r.size-r.tailAt {
		return fail(ReasonStoreError, "the object store sent %d bytes of the archive's tail, not %d", len(tail), r.size-r.tailAt)
	}
	r.tail = tail
	r.sum.observe(r.tailAt, tail)
	return nil
}

// get sends one GET with the given Range header.
func (r *ranger) get(rng string) (*http.Response, *failure) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, r.url, nil)
	if err != nil {
		return nil, fail(ReasonEnvInvalid, "%s is not a valid URL", EnvURL)
	}
	req.Header.Set("Range", rng)
	r.requests++
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, unreachable("download", err)
	}
	return resp, nil
}

// contentRange parses "bytes START-END/TOTAL".
func contentRange(h string) (start, end, total int64, ok bool) {
	if _, err := fmt.Sscanf(h, "bytes %d-%d/%d", &start, &end, &total); err != nil {
		return 0, 0, 0, false
	}
	return start, end, total, start >= 0 && end >= start && total > end
}

func (r *ranger) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if off < 0 || off >= r.size {
		return 0, io.EOF
	}
	want := p
	if rest := r.size - off; int64(len(p)) > rest {
		want = p[:rest]
	}
	var n int
	if off >= r.tailAt {
		n = copy(want, r.tail[off-r.tailAt:])
	} else {
		if f := r.seek(off); f != nil {
			return 0, f
		}
		var err error
		n, err = io.ReadFull(r.br, want)
		r.pos += int64(n)
		if err != nil {
			return n, r.broke(err)
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// seek puts the stream at off: by reading through a short gap forward, or
// by a new request.
func (r *ranger) seek(off int64) *failure {
	if r.br != nil && off >= r.pos && off-r.pos <= rangerSkip {
		n, err := r.br.Discard(int(off - r.pos))
		r.pos += int64(n)
		if err != nil {
			return r.broke(err)
		}
		return nil
	}
	r.close()
	resp, f := r.get(fmt.Sprintf("bytes=%d-", off))
	if f != nil {
		r.f = f
		return f
	}
	start, _, _, ok := contentRange(resp.Header.Get("Content-Range"))
	if resp.StatusCode != http.StatusPartialContent || !ok || start != off {
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			r.status = resp.StatusCode
			r.f = statusFailure(resp.StatusCode, "download")
		} else {
			r.f = fail(ReasonStoreError, "the object store did not serve the byte range asked for")
		}
		return r.f
	}
	r.body, r.pos = resp.Body, off
	src := &observed{r: resp.Body, at: off, sum: r.sum}
	if r.br == nil {
		r.br = bufio.NewReaderSize(src, rangerBuffer)
	} else {
		r.br.Reset(src)
	}
	return nil
}

// broke records the stream failing midway; an end before the archive's is
// the store's failure too.
func (r *ranger) broke(err error) *failure {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		r.f = fail(ReasonStoreError, "the object store ended the archive's bytes early")
	} else {
		r.f = brokeOff(err)
	}
	return r.f
}

// digest returns the SHA-256 of the whole archive, first reading what the
// extraction skipped; nil when no digest was asked for.
func (r *ranger) digest() ([]byte, *failure) {
	if r.sum == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if next := r.sum.next; next < r.tailAt {
		if f := r.seek(next); f != nil {
			return nil, f
		}
		n, err := r.br.Discard(int(r.tailAt - next))
		r.pos += int64(n)
		if err != nil {
			return nil, r.broke(err)
		}
	}
	r.sum.observe(r.tailAt, r.tail)
	return r.sum.digest(), nil
}

func (r *ranger) close() {
	if r.body != nil {
		r.body.Close()
		r.body = nil
	}
}

// observed shows every byte read from r, at its offset, to sum.
type observed struct {
	r   io.Reader
	at  int64
	sum *inOrder
}

func (o *observed) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	o.sum.observe(o.at, p[:n])
	o.at += int64(n)
	return n, err
}

// inOrder hashes a stream's bytes in order when it is shown them out of
// order and more than once: each byte is hashed the first time it is seen
// right after the last one hashed. A nil inOrder hashes nothing.
type inOrder struct {
	h    hash.Hash
	next int64
}

func newInOrder() *inOrder { return &inOrder{h: sha256.New()} }

func (s *inOrder) observe(at int64, p []byte) {
	if s == nil {
		return
	}
	if end := at + int64(len(p)); at <= s.next && end > s.next {
		s.h.Write(p[s.next-at:])
		s.next = end
	}
}

func (s *inOrder) digest() []byte {
	if s == nil {
		return nil
	}
	return s.h.Sum(nil)
}
