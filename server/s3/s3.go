// Package s3 is the aws-sdk-go-v2 adapter of service.ObjectStore: one
// bucket, presigned URLs for the address their users dial, and store errors
// translated at the boundary.
package s3

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

var _ service.ObjectStore = (*Store)(nil)

// Config locates the bucket. Endpoint and PresignEndpoint are full URLs
// (scheme://host:port); presigned URLs name PresignEndpoint, because a URL
// is signed for the host its user will dial.
type Config struct {
	Endpoint        string
	PresignEndpoint string // default: Endpoint
	Region          string // default: us-east-1
	Bucket          string
	AccessKey       string
	SecretKey       string
	HTTPClient      *http.Client // optional
}

// Deadlines of the server's own store calls, so a hung store fails a
// request with store_unavailable instead of holding it to the request
// deadline. A copy moves up to maxObjectSize bytes inside the store.
const (
	callTimeout = 30 * time.Second
	copyTimeout = 5 * time.Minute
)

// Store is one bucket of an S3-compatible store.
type Store struct {
	bucket  string
	client  *s3.Client
	presign *s3.PresignClient // for the address sidecars and clients dial
	direct  *s3.PresignClient // for the server's own endpoint: the probe
	http    *http.Client
	// unlistedParts: the probe found that the store lists parts without
	// their checksums, so uploads start without a checksum algorithm.
	unlistedParts atomic.Bool
	// hashesStreams: the probe found that the store computes the SHA-256
	// of a PUT that binds none, when its URL names the algorithm.
	hashesStreams atomic.Bool
}

// New builds the clients; it makes no call.
func New(cfg Config) (*Store, error) {
	if _, err := url.Parse(cfg.Endpoint); err != nil || cfg.Endpoint == "" {
		return nil, fmt.Errorf("object store endpoint %q is not a URL", cfg.Endpoint)
	}
	presignAt := cfg.PresignEndpoint
	if presignAt == "" {
		presignAt = cfg.Endpoint
	}
	client := s3.New(options(cfg, cfg.Endpoint))
	return &Store{
		bucket:  cfg.Bucket,
		client:  client,
		presign: s3.NewPresignClient(s3.New(options(cfg, presignAt))),
		direct:  s3.NewPresignClient(client),
		http:    cmp.Or(cfg.HTTPClient, http.DefaultClient),
	}, nil
}

// options are path-style (non-AWS stores want it), a fixed region, and
// checksums only when an operation requires them, so that the SDK adds no
// checksum of its own to what a presigned PUT binds.
func options(cfg Config, endpoint string) s3.Options {
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	o := s3.Options{
		Region:                     region,
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if cfg.HTTPClient != nil {
		o.HTTPClient = cfg.HTTPClient
	}
	return o
}

// Ping checks that the bucket exists and answers.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket}); err != nil {
		return &cairn.Error{Reason: cairn.ReasonStoreUnavailable,
			Detail: "the object store bucket is unreachable or missing", Err: err}
	}
	return nil
}

// PresignPut signs a PUT whose signed headers are host, content-length,
// x-amz-checksum-sha256 and, only when given, content-type. With
// StoreHashes the URL's signed query names the SHA-256 algorithm instead,
// so the URL alone has the store hash what it receives: a client PUTs it
// with no header of its own.
func (s *Store) PresignPut(ctx context.Context, key string, put service.PutSpec) (string, error) {
	if put.StoreHashes && !s.hashesStreams.Load() {
		return "", service.ErrStoreCannotHash
	}
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key}
	if put.Size != service.AnySize {
		in.ContentLength = aws.Int64(put.Size)
	}
	if put.SHA256B64 != "" {
		in.ChecksumSHA256 = aws.String(put.SHA256B64)
	}
	if put.ContentType != "" {
		in.ContentType = aws.String(put.ContentType)
	}
	req, err := s.presign.PresignPutObject(ctx, in, putOptions(put.TTL, put.StoreHashes)...)
	if err != nil {
		return "", translate("presign the upload", err)
	}
	return req.URL, nil
}

// putOptions presign a PUT valid for ttl, naming the SHA-256 algorithm in
// its query when the store is to hash what it receives.
func putOptions(ttl time.Duration, storeHashes bool) []func(*s3.PresignOptions) {
	opts := []func(*s3.PresignOptions){s3.WithPresignExpires(ttl)}
	if storeHashes {
		opts = append(opts, namingAlgorithm)
	}
	return opts
}

// namingAlgorithm adds X-Amz-Checksum-Algorithm=SHA256 to a presigned
// URL's query before it is signed. (The SDK's own ChecksumAlgorithm input
// would instead bind the checksum of the empty body it presigns.)
func namingAlgorithm(o *s3.PresignOptions) {
	o.ClientOptions = append(o.ClientOptions, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Build.Add(middleware.BuildMiddlewareFunc("cairnChecksumAlgorithm",
				func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (
					middleware.BuildOutput, middleware.Metadata, error) {
					if req, ok := in.Request.(*smithyhttp.Request); ok {
						q := req.URL.Query()
						q.Set("X-Amz-Checksum-Algorithm", string(types.ChecksumAlgorithmSha256))
						req.URL.RawQuery = q.Encode()
					}
					return next.HandleBuild(ctx, in)
				}), middleware.After)
		})
	})
}

// PresignGet signs a GET that browsers treat as a download, whatever the
// content type: MIME types are advisory, the disposition is the defence.
// The response's type is contentType when one is given: objects written
// straight from a client's PUT carry whatever type the client sent.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration, contentType string) (string, error) {
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &key, ResponseContentDisposition: aws.String("attachment")}
	if contentType != "" {
		in.ResponseContentType = aws.String(contentType)
	}
	req, err := s.presign.PresignGetObject(ctx, in, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", translate("presign the download", err)
	}
	return req.URL, nil
}

// Stat reads an object's size, modification time and the SHA-256 checksum
// the store verified at the PUT (asked for with the checksum mode; the
// store reports it without reading the object).
func (s *Store) Stat(ctx context.Context, key string) (*service.ObjectInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key,
		ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		return nil, translate("stat the object", err)
	}
	return &service.ObjectInfo{Key: key, Size: aws.ToInt64(out.ContentLength), LastModified: aws.ToTime(out.LastModified),
		SHA256B64: aws.ToString(out.ChecksumSHA256), ETag: strings.Trim(aws.ToString(out.ETag), `"`)}, nil
}

// ReadHead reads at most the first n bytes with a ranged GET. Callers must
// not ask for the head of an empty object: stores answer 416 to a range.
func (s *Store) ReadHead(ctx context.Context, key string, n int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: &s.bucket, Key: &key, Range: aws.String(fmt.Sprintf("bytes=0-%d", n-1)),
	})
	if err != nil {
		return nil, translate("read the object", err)
	}
	defer out.Body.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(out.Body, n)); err != nil {
		return nil, translate("read the object", err)
	}
	return buf.Bytes(), nil
}

// Copy copies src to dst (single part), replacing the metadata so dst has
// contentType.
func (s *Store) Copy(ctx context.Context, src, dst, contentType string) error {
	ctx, cancel := context.WithTimeout(ctx, copyTimeout)
	defer cancel()
	_, err := s.client.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket:            &s.bucket,
		Key:               &dst,
		CopySource:        aws.String(s.bucket + "/" + escapePath(src)),
		MetadataDirective: types.MetadataDirectiveReplace,
		ContentType:       &contentType,
	})
	return translate("copy the object", err)
}

// escapePath URL-encodes each segment of a key, keeping its slashes.
func escapePath(key string) string {
	segments := strings.Split(key, "/")
	for i, seg := range segments {
		segments[i] = url.PathEscape(seg)
	}
	return strings.Join(segments, "/")
}

// Delete removes an object; an absent one is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
	if err = translate("delete the object", err); errors.Is(err, service.ErrObjectNotFound) {
		return nil
	}
	return err
}

// Put writes an object in one checksum-bound PUT: the store refuses bytes
// whose length or SHA-256 is not the one given. It may take copyTimeout:
// it moves up to maxObjectSize bytes.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, size int64, sum []byte, contentType string) error {
	ctx, cancel := context.WithTimeout(ctx, copyTimeout)
	defer cancel()
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: body, ContentLength: aws.Int64(size),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum))}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	_, err := s.client.PutObject(ctx, in)
	return translate("write the object", err)
}

// Pin writes an empty directory marker, prefix + "/". File-backed stores
// such as versitygw's posix backend remove a directory once its last object
// is deleted, and a put racing that removal into a sibling directory fails;
// a directory holding a marker is never removed that way.
func (s *Store) Pin(ctx context.Context, prefix string) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	key := strings.TrimSuffix(prefix, "/") + "/"
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &key,
		Body: bytes.NewReader(nil), ContentLength: aws.Int64(0)})
	return translate("pin the key prefix", err)
}

// translate maps a store failure to cairn's vocabulary: a missing object is
// ErrObjectNotFound, anything else store_unavailable. The SDK's text, which
// may carry keys and endpoints, stays in the cause.
func translate(what string, err error) error {
	if err == nil {
		return nil
	}
	var noKey *types.NoSuchKey
	var notFound *types.NotFound
	var apiErr smithy.APIError
	switch {
	case errors.As(err, &noKey), errors.As(err, &notFound):
		return fmt.Errorf("%s: %w", what, service.ErrObjectNotFound)
	case errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchKey":
		return fmt.Errorf("%s: %w", what, service.ErrObjectNotFound)
	}
	return &cairn.Error{Reason: cairn.ReasonStoreUnavailable,
		Detail: "the object store failed to " + what, Err: err}
}
