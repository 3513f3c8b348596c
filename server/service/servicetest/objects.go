package servicetest

import (
	"context"
	"io"
	"time"

	"github.com/cairn-dev/cairn/server/service"
)

var _ service.ObjectStore = (*ObjectStore)(nil)

// ObjectStore is a fake service.ObjectStore.
type ObjectStore struct {
	PingFunc       func(ctx context.Context) error
	PresignPutFunc func(ctx context.Context, key string, put service.PutSpec) (string, error)
	PresignGetFunc func(ctx context.Context, key string, ttl time.Duration, contentType string) (string, error)
	StatFunc       func(ctx context.Context, key string) (*service.ObjectInfo, error)
	ReadHeadFunc   func(ctx context.Context, key string, n int64) ([]byte, error)
	CopyFunc       func(ctx context.Context, src, dst, contentType string) error
	DeleteFunc     func(ctx context.Context, key string) error
	PinFunc        func(ctx context.Context, prefix string) error
	ReadFunc       func(ctx context.Context, key string) (io.ReadCloser, error)
	PutFunc        func(ctx context.Context, key string, body io.Reader, size int64, sha256 []byte, contentType string) error

	CreateUploadFunc   func(ctx context.Context, key string) (string, error)
	PresignPartFunc    func(ctx context.Context, key, uploadID string, part service.PartSpec) (string, error)
	ListPartsFunc      func(ctx context.Context, key, uploadID string) ([]service.Part, error)
	CompleteUploadFunc func(ctx context.Context, key, uploadID string, parts []service.Part) error
	AbortUploadFunc    func(ctx context.Context, key, uploadID string) error
}

func (o *ObjectStore) Ping(ctx context.Context) error {
	if o.PingFunc == nil {
		return notSet("ObjectStore.Ping")
	}
	return o.PingFunc(ctx)
}

func (o *ObjectStore) PresignPut(ctx context.Context, key string, put service.PutSpec) (string, error) {
	if o.PresignPutFunc == nil {
		return "", notSet("ObjectStore.PresignPut")
	}
	return o.PresignPutFunc(ctx, key, put)
}

func (o *ObjectStore) PresignGet(ctx context.Context, key string, ttl time.Duration, contentType string) (string, error) {
	if o.PresignGetFunc == nil {
		return "", notSet("ObjectStore.PresignGet")
	}
	return o.PresignGetFunc(ctx, key, ttl, contentType)
}

func (o *ObjectStore) Stat(ctx context.Context, key string) (*service.ObjectInfo, error) {
	if o.StatFunc == nil {
		return nil, notSet("ObjectStore.Stat")
	}
	return o.StatFunc(ctx, key)
}

func (o *ObjectStore) ReadHead(ctx context.Context, key string, n int64) ([]byte, error) {
	if o.ReadHeadFunc == nil {
		return nil, notSet("ObjectStore.ReadHead")
	}
	return o.ReadHeadFunc(ctx, key, n)
}

func (o *ObjectStore) Copy(ctx context.Context, src, dst, contentType string) error {
	if o.CopyFunc == nil {
		return notSet("ObjectStore.Copy")
	}
	return o.CopyFunc(ctx, src, dst, contentType)
}

func (o *ObjectStore) Delete(ctx context.Context, key string) error {
	if o.DeleteFunc == nil {
		return notSet("ObjectStore.Delete")
	}
	return o.DeleteFunc(ctx, key)
}

func (o *ObjectStore) Pin(ctx context.Context, prefix string) error {
	if o.PinFunc == nil {
		return notSet("ObjectStore.Pin")
	}
	return o.PinFunc(ctx, prefix)
}

func (o *ObjectStore) Read(ctx context.Context, key string) (io.ReadCloser, error) {
	if o.ReadFunc == nil {
		return nil, notSet("ObjectStore.Read")
	}
	return o.ReadFunc(ctx, key)
}

func (o *ObjectStore) Put(ctx context.Context, key string, body io.Reader, size int64, sha256 []byte, contentType string) error {
	if o.PutFunc == nil {
		return notSet("ObjectStore.Put")
	}
	return o.PutFunc(ctx, key, body, size, sha256, contentType)
}

func (o *ObjectStore) CreateUpload(ctx context.Context, key string) (string, error) {
	if o.CreateUploadFunc == nil {
		return "", notSet("ObjectStore.CreateUpload")
	}
	return o.CreateUploadFunc(ctx, key)
}

func (o *ObjectStore) PresignPart(ctx context.Context, key, uploadID string, part service.PartSpec) (string, error) {
	if o.PresignPartFunc == nil {
		return "", notSet("ObjectStore.PresignPart")
	}
	return o.PresignPartFunc(ctx, key, uploadID, part)
}

func (o *ObjectStore) ListParts(ctx context.Context, key, uploadID string) ([]service.Part, error) {
	if o.ListPartsFunc == nil {
		return nil, notSet("ObjectStore.ListParts")
	}
	return o.ListPartsFunc(ctx, key, uploadID)
}

func (o *ObjectStore) CompleteUpload(ctx context.Context, key, uploadID string, parts []service.Part) error {
	if o.CompleteUploadFunc == nil {
		return notSet("ObjectStore.CompleteUpload")
	}
	return o.CompleteUploadFunc(ctx, key, uploadID, parts)
}

func (o *ObjectStore) AbortUpload(ctx context.Context, key, uploadID string) error {
	if o.AbortUploadFunc == nil {
		return notSet("ObjectStore.AbortUpload")
	}
	return o.AbortUploadFunc(ctx, key, uploadID)
}
