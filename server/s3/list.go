package s3

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// maxDeleteBatch is the most keys one DeleteObjects call takes.
const maxDeleteBatch = 1000

// List returns up to max objects under prefix in key order, after
// startAfter (empty: from the start). One ListObjectsV2 call; max is capped
// at 1000 by the store.
func (s *Store) List(ctx context.Context, prefix, startAfter string, max int) ([]service.ObjectInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix, MaxKeys: aws.Int32(int32(max))}
	if startAfter != "" {
		in.StartAfter = &startAfter
	}
	out, err := s.client.ListObjectsV2(ctx, in)
	if err != nil {
		return nil, translate("list objects", err)
	}
	list := make([]service.ObjectInfo, 0, len(out.Contents))
	for _, obj := range out.Contents {
		key := aws.ToString(obj.Key)
		if !strings.HasPrefix(key, prefix) { // a store that ignores the prefix must not widen the sweep
			continue
		}
		list = append(list, service.ObjectInfo{Key: key, Size: aws.ToInt64(obj.Size), LastModified: aws.ToTime(obj.LastModified)})
	}
	return list, nil
}

// DeleteMany deletes keys with bulk DeleteObjects calls of at most 1000
// keys. A key the store reports as missing counts as deleted (versitygw
// answers a missing key as deleted anyway). failed lists the keys the store
// refused; err is set when a call failed as a whole, and then failed also
// holds every key of that call and the ones after it.
func (s *Store) DeleteMany(ctx context.Context, keys []string) ([]string, error) {
	var failed []string
	for start := 0; start < len(keys); start += maxDeleteBatch {
		batch := keys[start:min(start+maxDeleteBatch, len(keys))]
		objs := make([]types.ObjectIdentifier, len(batch))
		for i, k := range batch {
			objs[i] = types.ObjectIdentifier{Key: aws.String(k)}
		}
		out, err := s.deleteObjects(ctx, objs)
		if err != nil {
			return append(failed, keys[start:]...), err
		}
		for _, e := range out.Errors {
			if aws.ToString(e.Code) == "NoSuchKey" {
				continue
			}
			failed = append(failed, aws.ToString(e.Key))
		}
	}
	return failed, nil
}

func (s *Store) deleteObjects(ctx context.Context, objs []types.ObjectIdentifier) (*s3.DeleteObjectsOutput, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: &s.bucket,
		Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(true)},
	})
	if err != nil {
		return nil, &cairn.Error{Reason: cairn.ReasonStoreUnavailable,
			Detail: "the object store failed to delete objects", Err: err}
	}
	return out, nil
}
