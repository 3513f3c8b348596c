package sidecar

import (
	"context"
	"errors"
	"io"
	"net/http"
)

// errChanged marks a source whose length no longer matches the one it had
// when it was opened.
var errChanged = errors.New("source changed size")

func changedSize(src string) *failure {
	return fail(ReasonSourceChanged, "the source file '%s' changed size while the upload was in flight", src)
}

// send PUTs exactly size bytes of body to url, never chunked (a
// literal empty body for 0), and returns the store's status. A failure
// means the store never answered, or body ran short or long (errChanged),
// in which case the PUT is never completed.
func send(url string, body io.Reader, size int64, src string) (int, *failure) {
	if size == 0 {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPut, url, body)
	if err != nil {
		return 0, fail(ReasonEnvInvalid, "%s is not a valid URL", EnvURL)
	}
	req.ContentLength = size
	resp, err := httpClient().Do(req)
	if errors.Is(err, errChanged) {
		return 0, changedSize(src)
	}
	if err != nil {
		return 0, unreachable("upload", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16)) //nolint:errcheck // draining only
	return resp.StatusCode, nil
}

// exactReader yields exactly left bytes of r and fails with errChanged if r
// ends early or holds more. The check for more happens before the last
// bytes are handed out, so a file that grew or shrank never completes the
// PUT.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	switch {
	case e.left > 0 && err == io.EOF:
		return n, errChanged
	case e.left > 0:
		return n, err
	}
	var probe [1]byte
	if m, _ := e.r.Read(probe[:]); m > 0 {
		return 0, errChanged
	}
	return n, nil
}
