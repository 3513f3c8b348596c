package stacktest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-dev/cairn/internal/stack"
)

// LaxStore is a store that takes any checksum on faith: a proxy in front
// of a real one that writes every PUT of an object or a part as sent —
// whatever SHA-256 and length its URL binds — and afterwards reports the
// SHA-256 the client claimed as if it had checked it. It is what cairn must
// refuse to trust: the integrity probe's failing case.
type LaxStore struct {
	Endpoint string // HOST:PORT, loopback

	upstream *s3.Client
	proxy    *httputil.ReverseProxy

	mu      sync.Mutex
	claimed map[string]string // "bucket/key" → the SHA-256 the PUT claimed
}

// NewLaxStore starts a lax proxy in front of store, stopped when the test
// ends. Requests other than PUTs pass through unchanged (their signatures
// name the proxy's host, which is kept).
func NewLaxStore(t testing.TB, store *stack.S3) *LaxStore {
	t.Helper()
	target := &url.URL{Scheme: "http", Host: store.Endpoint}
	// The upstream client adds no checksum of its own either.
	upstream := store.Client(func(o *s3.Options) { o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired })
	l := &LaxStore{upstream: upstream, claimed: map[string]string{}}
	l.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host // the signature covers the host the client dialled
		},
		ModifyResponse: l.reportClaim,
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("lax store: %v", err)
	}
	srv := httptest.NewUnstartedServer(l)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	l.Endpoint = ln.Addr().String()
	return l
}

func (l *LaxStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut || r.Header.Get("X-Amz-Copy-Source") != "" {
		l.proxy.ServeHTTP(w, r)
		return
	}
	bucket, key, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if !ok || key == "" {
		l.proxy.ServeHTTP(w, r) // a bucket, not an object
		return
	}
	if err := l.put(r, bucket, key); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if sum := r.Header.Get("X-Amz-Checksum-Sha256"); sum != "" {
		w.Header().Set("X-Amz-Checksum-Sha256", sum)
	}
	w.Header().Set("ETag", `"lax"`)
	w.WriteHeader(http.StatusOK)
}

// put writes the body as sent, without the checksum or length its URL
// binds, and remembers the claimed SHA-256.
func (l *LaxStore) put(r *http.Request, bucket, key string) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if id := q.Get("uploadId"); id != "" {
		n, err := strconv.Atoi(q.Get("partNumber"))
		if err != nil {
			return err
		}
		// An upload started with SHA-256 part checksums wants one on every
		// part: the lax store gives the bytes' own, not the claimed one.
		actual := sha256.Sum256(body)
		_, err = l.upstream.UploadPart(r.Context(), &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: &id,
			PartNumber: aws.Int32(int32(n)), Body: bytes.NewReader(body),
			ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(actual[:]))})
		return err
	}
	if _, err := l.upstream.PutObject(r.Context(), &s3.PutObjectInput{Bucket: &bucket, Key: &key,
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))}); err != nil {
		return err
	}
	l.mu.Lock()
	l.claimed[bucket+"/"+key] = r.Header.Get("X-Amz-Checksum-Sha256")
	l.mu.Unlock()
	return nil
}

// reportClaim answers a HEAD or GET of an object with the SHA-256 its PUT
// claimed, as a store that records the header without checking it does.
func (l *LaxStore) reportClaim(resp *http.Response) error {
	r := resp.Request
	if r.Method != http.MethodHead && r.Method != http.MethodGet {
		return nil
	}
	l.mu.Lock()
	sum := l.claimed[strings.TrimPrefix(r.URL.Path, "/")]
	l.mu.Unlock()
	if sum != "" {
		resp.Header.Set("X-Amz-Checksum-Sha256", sum)
	}
	return nil
}
