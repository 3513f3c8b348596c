package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn/server/service"
)

// probeBytes is the size of each probe object: small, but more than one
// byte so a length one short is still a body.
const probeBytes = 64

// Probe is what the integrity probe found: each sentence names a promise
// the store broke. Empty means the store refused every upload it must
// refuse and kept the one it must keep.
type Probe struct {
	Failures []string
	// PartChecksumsListed: the store lists each part of an upload with the
	// checksum it verified; when not, uploads start without an algorithm
	// and a pack's archive is read back.
	PartChecksumsListed bool
	// HashesStreams: the store computes the SHA-256 of a PUT whose URL
	// binds none but names the algorithm, and reports the right one — so
	// a client may stream a file without hashing it first.
	HashesStreams bool
}

// Trusted reports whether the store passed every check.
func (p Probe) Trusted() bool { return len(p.Failures) == 0 }

// ProbeIntegrity tests what cairn's integrity rests on, through presigned
// URLs as clients use them: a PUT bound to a wrong SHA-256, a PUT bound to
// a wrong length and a multipart part bound to a wrong SHA-256 must each be
// refused; a PUT bound to the right ones must be kept and its SHA-256
// reported back. Probe objects go under prefix and are removed. An error
// means the probe could not run (the store did not answer), not that the
// store failed it.
func (s *Store) ProbeIntegrity(ctx context.Context, prefix string) (Probe, error) {
	body := make([]byte, probeBytes)
	_, _ = rand.Read(body) // never fails
	sum := sha256.Sum256(body)
	right := base64.StdEncoding.EncodeToString(sum[:])
	wrongSum := sha256.Sum256(append([]byte("not "), body...))
	wrong := base64.StdEncoding.EncodeToString(wrongSum[:])
	key := func() string { return prefix + "/" + ulid.Make().String() }

	var p Probe
	checks := []struct {
		failure string
		spec    service.PutSpec
		send    []byte
	}{
		{"it kept an upload whose bytes do not match the SHA-256 its URL binds",
			service.PutSpec{Size: probeBytes, SHA256B64: wrong}, body},
		{"it kept an upload shorter than the length its URL binds",
			service.PutSpec{Size: probeBytes + 1, SHA256B64: right}, body},
	}
	for _, c := range checks {
		k := key()
		kept, err := s.probePut(ctx, k, c.spec, c.send)
		if err != nil {
			return p, err
		}
		if kept {
			p.Failures = append(p.Failures, c.failure)
			_ = s.Delete(ctx, k) // best effort: the probe's prefix is reaped anyway
		}
	}
	failure, err := s.probePart(ctx, key(), body, right, wrong)
	if err != nil {
		return p, err
	}
	if failure != "" {
		p.Failures = append(p.Failures, failure)
	}
	p.PartChecksumsListed = !s.unlistedParts.Load()
	failure, err = s.probeKept(ctx, key(), body, right)
	if err != nil {
		return p, err
	}
	if failure != "" {
		p.Failures = append(p.Failures, failure)
	}
	p.HashesStreams, err = s.probeHashes(ctx, key(), body, right)
	s.hashesStreams.Store(p.HashesStreams)
	return p, err
}

// probeHashes PUTs body through a URL that binds no checksum but asks the
// store to compute the SHA-256, and reports whether the store reports the
// body's. Not doing so is no failure: uploads to such a store are hashed
// by the client first.
func (s *Store) probeHashes(ctx context.Context, key string, body []byte, right string) (bool, error) {
	kept, err := s.probePut(ctx, key, service.PutSpec{Size: int64(len(body)), StoreHashes: true}, body)
	if err != nil || !kept {
		return false, err
	}
	defer func() { _ = s.Delete(ctx, key) }() // best effort, as above
	info, err := s.Stat(ctx, key)
	if err != nil {
		return false, err
	}
	return info.SHA256B64 == right, nil
}

// probeKept PUTs body bound to its own SHA-256: the store must keep it and
// report that SHA-256 back, or no registered artifact would carry one.
func (s *Store) probeKept(ctx context.Context, key string, body []byte, sum string) (string, error) {
	kept, err := s.probePut(ctx, key, service.PutSpec{Size: int64(len(body)), SHA256B64: sum}, body)
	if err != nil {
		return "", err
	}
	if !kept {
		return "it refused an upload whose bytes match the length and SHA-256 its URL binds", nil
	}
	defer func() { _ = s.Delete(ctx, key) }() // best effort, as above
	info, err := s.Stat(ctx, key)
	if err != nil {
		return "", err
	}
	if info.SHA256B64 != sum {
		return fmt.Sprintf("it reported the SHA-256 of a checked upload as %q, not %q", info.SHA256B64, sum), nil
	}
	return "", nil
}

// probePart checks multipart uploads: a part bound to a wrong SHA-256 must
// be refused. It also learns whether the store lists the checksums it
// verified parts against: one that does not (SeaweedFS) also wants them
// back at completion, which cairn cannot give for a client's upload, so
// its uploads are started without a checksum algorithm — the store still
// verifies every part against the SHA-256 its URL binds, which this checks
// again in that mode.
func (s *Store) probePart(ctx context.Context, key string, body []byte, right, wrong string) (string, error) {
	listed, failure, err := s.probeUpload(ctx, key, body, right, wrong)
	if err != nil || failure != "" || listed {
		return failure, err
	}
	s.unlistedParts.Store(true)
	_, failure, err = s.probeUpload(ctx, key, body, right, wrong)
	return failure, err
}

// probeUpload starts an upload as CreateUpload does, PUTs a part bound to
// a wrong SHA-256 (which must be refused) and then the right one, and
// reports whether the store lists the right one's checksum. The upload is
// aborted.
func (s *Store) probeUpload(ctx context.Context, key string, body []byte, right, wrong string) (bool, string, error) {
	id, err := s.CreateUpload(ctx, key)
	if err != nil {
		return false, "", err
	}
	defer func() { _ = s.AbortUpload(context.WithoutCancel(ctx), key, id) }() // best effort, as above
	for _, sum := range []string{wrong, right} {
		kept, err := s.probeSend(ctx, key, id, body, sum)
		if err != nil {
			return false, "", err
		}
		if kept != (sum == right) {
			if kept {
				return false, "it kept a multipart part whose bytes do not match the SHA-256 its URL binds", nil
			}
			return false, "it refused a multipart part whose bytes match the length and SHA-256 its URL binds", nil
		}
	}
	parts, err := s.ListParts(ctx, key, id)
	if err != nil {
		return false, "", err
	}
	return len(parts) == 1 && parts[0].SHA256B64 == right, "", nil
}

// probeSend PUTs body as part 1 of the upload through a URL bound to sum.
func (s *Store) probeSend(ctx context.Context, key, id string, body []byte, sum string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := s.direct.PresignUploadPart(ctx, &s3.UploadPartInput{Bucket: &s.bucket, Key: &key, UploadId: &id,
		PartNumber: aws.Int32(1), ContentLength: aws.Int64(int64(len(body))), ChecksumSHA256: aws.String(sum)},
		s3.WithPresignExpires(time.Minute))
	if err != nil {
		return false, translate("presign the probe's part", err)
	}
	return s.send(ctx, req.URL, body, sum)
}

// probePut PUTs send through a URL presigned for spec and reports whether
// the store kept it.
func (s *Store) probePut(ctx context.Context, key string, spec service.PutSpec, send []byte) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, ContentLength: aws.Int64(spec.Size)}
	if !spec.StoreHashes {
		in.ChecksumSHA256 = aws.String(spec.SHA256B64)
	}
	req, err := s.direct.PresignPutObject(ctx, in, putOptions(time.Minute, spec.StoreHashes)...)
	if err != nil {
		return false, translate("presign the probe's upload", err)
	}
	return s.send(ctx, req.URL, send, spec.SHA256B64)
}

// send PUTs body to a presigned URL with the checksum header it binds (if
// any), as a client does, and reports whether the store answered 2xx. A
// refusal is any 4xx; anything else means the store did not answer the
// question.
func (s *Store) send(ctx context.Context, rawURL string, body []byte, sum string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, rawURL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	if sum != "" {
		req.Header.Set("X-Amz-Checksum-Sha256", sum)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		// The URL error quotes the presigned URL, whose signature is a
		// credential: keep only what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return false, translate("answer the integrity probe", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // drain for reuse
	switch resp.StatusCode / 100 {
	case 2:
		return true, nil
	case 4:
		return false, nil
	}
	return false, translate("answer the integrity probe", fmt.Errorf("status %s", resp.Status))
}
