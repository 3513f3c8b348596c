package sidecar

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
)

// errChanged marks a source whose length no longer matches the signed one.
var errChanged = errors.New("source changed size")

// upload re-checks the source and streams exactly CAIRN_OBJECT_SIZE bytes of
// it to the presigned PUT, with exactly the signed headers.
func upload(env Env) Result {
	root, fail := mountRoot(env)
	if fail != nil {
		return *fail
	}
	vals, f := requireEnv(env, EnvSourcePath, EnvURL, EnvObjectSize, EnvSHA256B64)
	if f != nil {
		return failed(f, 0)
	}
	size, err := strconv.ParseInt(vals[EnvObjectSize], 10, 64)
	if err != nil || size < 0 {
		return failed(&failure{reason: ReasonEnvInvalid, message: EnvObjectSize + " must be a non-negative decimal integer"}, 0)
	}
	src := vals[EnvSourcePath]
	m, f := openMount(root)
	if f != nil {
		return failed(f, 0)
	}
	defer m.close()
	rel, f := m.resolveSource(src)
	if f != nil {
		return failed(f, 0)
	}
	file, fi, f := m.openSource(src, rel)
	if f != nil {
		return failed(f, 0)
	}
	defer file.Close()
	if fi.Size() != size {
		return failed(changedSize(src), 0)
	}
	header := http.Header{"X-Amz-Checksum-Sha256": {vals[EnvSHA256B64]}}
	if ct := env(EnvContentType); ct != "" {
		header.Set("Content-Type", ct)
	}
	status, f := send(vals[EnvURL], &exactReader{r: file, left: size}, size, header, src)
	if f == nil {
		f = signedStatus(status, src)
	}
	if f != nil {
		return failed(f, status)
	}
	return Result{OK: true, UploadedPath: m.display(rel), Size: &size}
}

func changedSize(src string) *failure {
	return fail(ReasonSourceChanged, "the source file '%s' changed size while the upload was in flight", src)
}

// send PUTs exactly size bytes of body to url with header, never chunked (a
// literal empty body for 0), and returns the store's status. A failure
// means the store never answered, or body ran short or long (errChanged),
// in which case the PUT is never completed.
func send(url string, body io.Reader, size int64, header http.Header, src string) (int, *failure) {
	if size == 0 {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPut, url, body)
	if err != nil {
		return 0, fail(ReasonEnvInvalid, "%s is not a valid URL", EnvURL)
	}
	req.ContentLength = size
	for k, v := range header {
		req.Header[k] = v
	}
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

// signedStatus classifies the answer to a checksum-bound PUT: a 400 is the
// store refusing bytes that no longer match the digest signed for.
func signedStatus(status int, src string) *failure {
	switch {
	case status < 300:
		return nil
	case status == http.StatusBadRequest:
		return fail(ReasonSourceChanged, "the object store rejected the upload (HTTP %d); the source file '%s' "+
			"most likely changed while the upload was in flight, so its content no longer matches the checksum the upload "+
			"was signed for", status, src)
	default:
		return statusFailure(status, "upload")
	}
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
