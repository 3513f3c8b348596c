package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// maxListedParts is the store's page size for ListParts; an upload has at
// most service.MaxParts parts, so a listing is at most ten pages.
const maxListedParts = 1000

// CreateUpload starts a multipart upload of key whose parts carry SHA-256
// checksums, so the store verifies each part's bytes as it receives them
// and lists each part with its checksum. On a store the probe found not to
// list them, the upload names no algorithm: its parts are verified all the
// same, and it completes without them.
func (s *Store) CreateUpload(ctx context.Context, key string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	in := &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key}
	if !s.unlistedParts.Load() {
		in.ChecksumAlgorithm = types.ChecksumAlgorithmSha256
	}
	out, err := s.client.CreateMultipartUpload(ctx, in)
	if err != nil {
		return "", translateUpload("start the upload", err)
	}
	return aws.ToString(out.UploadId), nil
}

// PresignPart signs an UploadPart whose signed headers bind the part's
// length and SHA-256, as PresignPut does for a whole object.
func (s *Store) PresignPart(ctx context.Context, key, uploadID string, p service.PartSpec) (string, error) {
	req, err := s.presign.PresignUploadPart(ctx, &s3.UploadPartInput{
		Bucket:         &s.bucket,
		Key:            &key,
		UploadId:       &uploadID,
		PartNumber:     aws.Int32(int32(p.Number)),
		ContentLength:  aws.Int64(p.Size),
		ChecksumSHA256: aws.String(p.SHA256B64),
	}, s3.WithPresignExpires(p.TTL))
	if err != nil {
		return "", translate("presign the part", err)
	}
	return req.URL, nil
}

// ListParts lists every part the store holds for the upload, in part
// order. An upload the store does not know (completed, aborted, never
// started) is service.ErrUploadNotFound.
func (s *Store) ListParts(ctx context.Context, key, uploadID string) ([]service.Part, error) {
	var parts []service.Part
	var marker *string
	for {
		out, err := s.listParts(ctx, key, uploadID, marker)
		if err != nil {
			return nil, err
		}
		for _, p := range out.Parts {
			parts = keepLatest(parts, service.Part{Number: int(aws.ToInt32(p.PartNumber)), Size: aws.ToInt64(p.Size),
				ETag: aws.ToString(p.ETag), SHA256B64: aws.ToString(p.ChecksumSHA256), LastModified: aws.ToTime(p.LastModified)})
		}
		if !aws.ToBool(out.IsTruncated) || len(parts) > service.MaxParts {
			return parts, nil
		}
		marker = out.NextPartNumberMarker
	}
}

// keepLatest appends p to parts, listed in part order, unless it is
// another version of the last one: SeaweedFS keeps every upload of a part
// number and lists them all, and completes with the latest. The later of
// the two by time stays (on a tie, the one listed last).
func keepLatest(parts []service.Part, p service.Part) []service.Part {
	if n := len(parts); n > 0 && parts[n-1].Number == p.Number {
		if !p.LastModified.Before(parts[n-1].LastModified) {
			parts[n-1] = p
		}
		return parts
	}
	return append(parts, p)
}

func (s *Store) listParts(ctx context.Context, key, uploadID string, marker *string) (*s3.ListPartsOutput, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	out, err := s.client.ListParts(ctx, &s3.ListPartsInput{Bucket: &s.bucket, Key: &key, UploadId: &uploadID,
		MaxParts: aws.Int32(maxListedParts), PartNumberMarker: marker})
	if err != nil {
		return nil, translateUpload("list the upload's parts", err)
	}
	return out, nil
}

// CompleteUpload assembles the listed parts, in order, into the object.
// A store assembles without copying the bytes through the caller, but it
// may take a while for many parts, hence the copy deadline.
func (s *Store) CompleteUpload(ctx context.Context, key, uploadID string, parts []service.Part) error {
	ctx, cancel := context.WithTimeout(ctx, copyTimeout)
	defer cancel()
	done := make([]types.CompletedPart, len(parts))
	for i, p := range parts {
		done[i] = types.CompletedPart{PartNumber: aws.Int32(int32(p.Number)), ETag: aws.String(p.ETag)}
		if p.SHA256B64 != "" {
			done[i].ChecksumSHA256 = aws.String(p.SHA256B64)
		}
	}
	_, err := s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, UploadId: &uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
	})
	return translateUpload("complete the upload", err)
}

// AbortUpload discards an upload and the parts it holds; an unknown one is
// not an error.
func (s *Store) AbortUpload(ctx context.Context, key, uploadID string) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: &uploadID})
	if err = translateUpload("abort the upload", err); errors.Is(err, service.ErrUploadNotFound) {
		return nil
	}
	return err
}

// ListUploads returns up to max unfinished uploads under prefix, in key
// order, with keys after after.Key (empty: from the start). Pages are cut
// by key alone: cairn starts one upload per fresh key, and versitygw
// refuses an upload-ID marker it did not hand out itself.
func (s *Store) ListUploads(ctx context.Context, prefix string, after service.Upload, max int) ([]service.Upload, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	in := &s3.ListMultipartUploadsInput{Bucket: &s.bucket, Prefix: &prefix, MaxUploads: aws.Int32(int32(max))}
	if after.Key != "" {
		in.KeyMarker = aws.String(after.Key)
	}
	out, err := s.client.ListMultipartUploads(ctx, in)
	if err != nil {
		return nil, translate("list unfinished uploads", err)
	}
	list := make([]service.Upload, 0, len(out.Uploads))
	for _, u := range out.Uploads {
		key := aws.ToString(u.Key)
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		list = append(list, service.Upload{Key: key, ID: aws.ToString(u.UploadId), Initiated: aws.ToTime(u.Initiated)})
	}
	return list, nil
}

// Read opens the whole object for a streaming read. The body is bounded by
// the caller's context, not by a call deadline: reading gigabytes takes as
// long as it takes.
func (s *Store) Read(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, translate("read the object", err)
	}
	return out.Body, nil
}

// translateUpload is translate with the store's NoSuchUpload as
// service.ErrUploadNotFound.
func translateUpload(what string, err error) error {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchUpload" {
		return fmt.Errorf("%s: %w", what, service.ErrUploadNotFound)
	}
	if errors.As(err, &apiErr) && isPartRefusal(apiErr.ErrorCode()) {
		return &cairn.Error{Reason: cairn.ReasonUploadIncomplete,
			Detail: "the object store refused to assemble the parts: " + apiErr.ErrorCode(), Err: err}
	}
	return translate(what, err)
}

// isPartRefusal reports the store's answers to a completion whose parts do
// not fit together: the client's mistake, not the store's failure.
func isPartRefusal(code string) bool {
	switch code {
	case "EntityTooSmall", "InvalidPart", "InvalidPartOrder", "InvalidRequest", "BadDigest":
		return true
	}
	return false
}
