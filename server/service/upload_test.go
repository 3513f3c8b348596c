package service_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// finalKeyFor returns a key of the shape mint issues for ws now.
func finalKeyFor(workspaceID string) string {
	return "store/" + workspaceID + "/" + ulid.Make().String()
}

func TestRegisterWithoutCopy(t *testing.T) {
	t.Parallel()
	text := []byte("hello, cairn\n")

	t.Run("OKStoreCalls", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := finalKeyFor(ws.ID)
		fl.stage(key, int64(len(text)), text)

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.NoError(t, err)
		require.Equal(t, key, a.ObjectKey, "the uploaded object is the artifact's, where it lies")
		require.Equal(t, "text/plain; charset=utf-8", a.MIMEType)
		require.ElementsMatch(t, []string{"stat", "readhead"}, fl.calls[:2], "one HEAD and one ranged read, side by side")
		require.Equal(t, []string{"begin", "insert", "audit", "commit"}, fl.calls[2:],
			"then the insert: no copy, no delete")
		require.Empty(t, fl.copies)
	})

	t.Run("ErrStagingKeyUsed", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := finalKeyFor(ws.ID)
		fl.stage(key, int64(len(text)), text)
		f.store.ObjectKeyUsedFunc = func(_ context.Context, k string) (bool, error) { return k == key, nil }

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "again"})
		require.Equal(t, cairn.ReasonStagingKeyUsed, cairn.ErrorReason(err))
		require.Equal(t, "staging object key '"+key+"' was already registered", cairn.ErrorDetail(err))
		require.Nil(t, a)
		require.ElementsMatch(t, []string{"stat", "readhead"}, fl.calls,
			"a used key is refused before any store call but the look at the object, which only reads")
	})

	t.Run("ErrPastRegisterWindow", func(t *testing.T) {
		t.Parallel()
		_, f := setup(t)
		svc := f.serviceWith(service.Config{RegisterWindow: 30 * time.Second})
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := finalKeyFor(ws.ID)
		fl.stage(key, int64(len(text)), text) // written a minute before now

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "late"})
		require.Equal(t, cairn.ReasonStagingNotFound, cairn.ErrorReason(err))
		require.Contains(t, cairn.ErrorDetail(err), "past the 30s register window")
		require.Nil(t, a)
		require.NotContains(t, fl.calls, "insert", "an object the reaper may take is never recorded")
	})

	t.Run("OKRowFailureKeepsUpload", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := finalKeyFor(ws.ID)
		fl.stage(key, int64(len(text)), text)
		f.store.InsertArtifactFunc = func(context.Context, *cairn.Artifact) error {
			return cairn.Errorf(cairn.ReasonNameTaken, "taken meanwhile")
		}

		_, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "report"})
		require.Equal(t, cairn.ReasonNameTaken, cairn.ErrorReason(err))
		require.Empty(t, fl.deleted, "the client may register its upload again under another name")
	})
}

// multipart is a fake store holding one multipart upload.
type multipart struct {
	key, id   string
	parts     []service.Part
	completed []byte // the assembled object, once completed
	at        time.Time
	calls     []string
}

func newMultipart(f *fixture, key string, at time.Time) *multipart {
	m := &multipart{key: key, id: "upload-1", at: at}
	f.objects.CreateUploadFunc = func(_ context.Context, k string) (string, error) {
		m.key = k
		m.calls = append(m.calls, "create")
		return m.id, nil
	}
	f.objects.ListPartsFunc = func(_ context.Context, k, id string) ([]service.Part, error) {
		m.calls = append(m.calls, "list")
		if k != m.key || id != m.id || m.completed != nil {
			return nil, fmt.Errorf("list: %w", service.ErrUploadNotFound)
		}
		return m.parts, nil
	}
	f.objects.CompleteUploadFunc = func(_ context.Context, k, id string, parts []service.Part) error {
		m.calls = append(m.calls, "complete")
		m.completed = []byte(strings.Repeat("p", int(total(parts))))
		return nil
	}
	f.objects.StatFunc = func(_ context.Context, k string) (*service.ObjectInfo, error) {
		m.calls = append(m.calls, "stat")
		if k != m.key || m.completed == nil {
			return nil, fmt.Errorf("stat: %w", service.ErrObjectNotFound)
		}
		return &service.ObjectInfo{Key: k, Size: int64(len(m.completed)), LastModified: m.at,
			SHA256B64: "composite-2"}, nil
	}
	f.objects.ReadFunc = func(_ context.Context, k string) (io.ReadCloser, error) {
		m.calls = append(m.calls, "read")
		return io.NopCloser(bytes.NewReader(m.completed)), nil
	}
	f.objects.PresignPartFunc = func(_ context.Context, k, id string, p service.PartSpec) (string, error) {
		return fmt.Sprintf("https://s3.example/%s?part=%d&size=%d", k, p.Number, p.Size), nil
	}
	return m
}

func total(parts []service.Part) int64 {
	var n int64
	for _, p := range parts {
		n += p.Size
	}
	return n
}

func TestMultipartUpload(t *testing.T) {
	t.Parallel()
	sum := sha256B64([]byte("x"))

	t.Run("OKPlan", func(t *testing.T) {
		t.Parallel()
		_, f := setup(t)
		svc := f.serviceWith(service.Config{MultipartThreshold: 10 << 20, PartSize: 5 << 20})
		ws := f.storedWorkspace(cairn.VolumeNone)
		m := newMultipart(f, "", f.now)

		st, err := svc.MintStaging(t.Context(), ws.ID, cairn.StagingRequest{Size: 12 << 20, Multipart: true})
		require.NoError(t, err)
		require.Regexp(t, `^store/`+ws.ID+`/`+keyULID+`$`, st.Key)
		require.Empty(t, st.PutURL)
		require.Equal(t, &cairn.UploadPlan{ID: "upload-1", PartSize: 5 << 20, PartCount: 3}, st.Upload)
		require.Equal(t, []string{"create"}, m.calls)

		f.objects.PresignPutFunc = func(context.Context, string, service.PutSpec) (string, error) { return "https://s3.example/put", nil }
		single, err := svc.MintStaging(t.Context(), ws.ID, cairn.StagingRequest{Size: 10 << 20, SHA256B64: sum, Multipart: true})
		require.NoError(t, err)
		require.Equal(t, "https://s3.example/put", single.PutURL, "at the threshold, with a digest, one PUT")
		require.Nil(t, single.Upload)
		require.Equal(t, []string{"create"}, m.calls)
	})

	t.Run("OKPartSizeGrowsPastMaxParts", func(t *testing.T) {
		t.Parallel()
		_, f := setup(t)
		svc := f.serviceWith(service.Config{MaxObjectSize: 5 << 40, PartSize: 5 << 20})
		ws := f.storedWorkspace(cairn.VolumeNone)
		newMultipart(f, "", f.now)

		st, err := svc.MintStaging(t.Context(), ws.ID, cairn.StagingRequest{Size: 1 << 40, Multipart: true})
		require.NoError(t, err)
		require.LessOrEqual(t, st.Upload.PartCount, cairn.MaxParts)
		require.Zero(t, st.Upload.PartSize%(1<<20), "whole MiB")
		require.GreaterOrEqual(t, st.Upload.PartSize*int64(st.Upload.PartCount), int64(1<<40))
	})

	t.Run("ErrPlanOverCap", func(t *testing.T) {
		t.Parallel()
		_, f := setup(t)
		svc := f.serviceWith(service.Config{MaxObjectSize: 1 << 30})
		ws := f.storedWorkspace(cairn.VolumeNone)
		m := newMultipart(f, "", f.now)

		_, err := svc.MintStaging(t.Context(), ws.ID, cairn.StagingRequest{Size: 1<<30 + 1, Multipart: true})
		require.Equal(t, cairn.ReasonObjectTooLarge, cairn.ErrorReason(err))
		require.Empty(t, m.calls, "no upload is started for an object over the cap")
	})

	t.Run("OKRegisterCompletesAndHashes", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := finalKeyFor(ws.ID)
		m := newMultipart(f, key, f.now)
		m.parts = []service.Part{{Number: 1, Size: 6, ETag: "e1"}, {Number: 2, Size: 2, ETag: "e2"}}
		want := sha256B64([]byte("pppppppp"))

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "big",
			Upload: &cairn.StagedUpload{ID: m.id, Size: 8, SHA256B64: want}})
		require.NoError(t, err)
		require.Equal(t, []string{"list", "complete", "stat", "read"}, m.calls)
		require.Equal(t, want, *a.SHA256B64, "the digest is the server's, of the stored bytes, not the composite the store reports")
		require.Equal(t, int64(8), a.Size)
		require.Contains(t, fl.calls, "insert")
	})

	t.Run("ErrChecksumMismatch", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		fl := f.flow()
		key := finalKeyFor(ws.ID)
		m := newMultipart(f, key, f.now)
		m.parts = []service.Part{{Number: 1, Size: 8, ETag: "e1"}}

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "big",
			Upload: &cairn.StagedUpload{ID: m.id, Size: 8, SHA256B64: sum}})
		require.Equal(t, cairn.ReasonChecksumMismatch, cairn.ErrorReason(err))
		require.Nil(t, a)
		require.Equal(t, []string{key}, fl.deleted, "bytes that are not what was declared are removed")
		require.NotContains(t, fl.calls, "insert")
	})

	t.Run("ErrUploadIncomplete", func(t *testing.T) {
		t.Parallel()
		for name, tc := range map[string]struct {
			parts  []service.Part
			size   int64
			detail string
		}{
			"Gap":        {[]service.Part{{Number: 1, Size: 4}, {Number: 3, Size: 4}}, 8, "lacks part 2"},
			"Short":      {[]service.Part{{Number: 1, Size: 4}}, 8, "hold 4 bytes; 8 were declared"},
			"Long":       {[]service.Part{{Number: 1, Size: 9}}, 8, "hold 9 bytes; 8 were declared"},
			"NoPartsYet": {nil, 8, "hold 0 bytes; 8 were declared"},
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				ws := f.namesFreeWorkspace()
				f.flow()
				key := finalKeyFor(ws.ID)
				m := newMultipart(f, key, f.now)
				m.parts = tc.parts

				_, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "big",
					Upload: &cairn.StagedUpload{ID: m.id, Size: tc.size}})
				require.Equal(t, cairn.ReasonUploadIncomplete, cairn.ErrorReason(err))
				require.Contains(t, cairn.ErrorDetail(err), tc.detail)
				require.Equal(t, []string{"list"}, m.calls, "nothing is assembled from parts that do not fit")
			})
		}
	})

	t.Run("OKRetryAfterCompletion", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		f.flow()
		key := finalKeyFor(ws.ID)
		m := newMultipart(f, key, f.now)
		m.completed = []byte("pppp") // a first register completed, then failed its insert

		a, err := svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: "big",
			Upload: &cairn.StagedUpload{ID: m.id, Size: 4}})
		require.NoError(t, err)
		require.Equal(t, []string{"list", "stat", "read"}, m.calls)
		require.Equal(t, sha256B64([]byte("pppp")), *a.SHA256B64)
	})

	t.Run("OKMintParts", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		key := finalKeyFor(ws.ID)
		m := newMultipart(f, key, f.now)

		urls, err := svc.MintParts(t.Context(), ws.ID, cairn.PartRequest{StagingKey: key, UploadID: m.id,
			Parts: []cairn.PartSpec{{Number: 2, Size: 7, SHA256B64: sum}}})
		require.NoError(t, err)
		require.Equal(t, []cairn.PartURL{{Number: 2, PutURL: "https://s3.example/" + key + "?part=2&size=7"}}, urls.Parts)
		require.Equal(t, f.now.Add(360*time.Second), urls.ExpiresAt)
	})

	t.Run("ErrMintParts", func(t *testing.T) {
		t.Parallel()
		for name, tc := range map[string]struct {
			key    func(ws string) string
			parts  []cairn.PartSpec
			reason cairn.Reason
		}{
			"NoParts":       {finalKeyFor, nil, cairn.ReasonInvalidParameters},
			"PartZero":      {finalKeyFor, []cairn.PartSpec{{Number: 0, Size: 1, SHA256B64: sum}}, cairn.ReasonInvalidParameters},
			"PartTooHigh":   {finalKeyFor, []cairn.PartSpec{{Number: cairn.MaxParts + 1, Size: 1, SHA256B64: sum}}, cairn.ReasonInvalidParameters},
			"Repeated":      {finalKeyFor, []cairn.PartSpec{{Number: 1, Size: 1, SHA256B64: sum}, {Number: 1, Size: 1, SHA256B64: sum}}, cairn.ReasonInvalidParameters},
			"EmptyPart":     {finalKeyFor, []cairn.PartSpec{{Number: 1, Size: 0, SHA256B64: sum}}, cairn.ReasonInvalidParameters},
			"HexDigest":     {finalKeyFor, []cairn.PartSpec{{Number: 1, Size: 1, SHA256B64: strings.Repeat("ab", 32)}}, cairn.ReasonInvalidChecksum},
			"LegacyKey":     {stagingKeyFor, []cairn.PartSpec{{Number: 1, Size: 1, SHA256B64: sum}}, cairn.ReasonStagingKeyInvalid},
			"ForeignKey":    {func(string) string { return finalKeyFor("other") }, []cairn.PartSpec{{Number: 1, Size: 1, SHA256B64: sum}}, cairn.ReasonStagingKeyInvalid},
			"UnknownUpload": {finalKeyFor, []cairn.PartSpec{{Number: 1, Size: 1, SHA256B64: sum}}, cairn.ReasonStagingNotFound},
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				ws := f.storedWorkspace(cairn.VolumeNone)
				newMultipart(f, "not-this-key", f.now)

				urls, err := svc.MintParts(t.Context(), ws.ID, cairn.PartRequest{StagingKey: tc.key(ws.ID), UploadID: "upload-1", Parts: tc.parts})
				require.Equal(t, tc.reason, cairn.ErrorReason(err), cairn.ErrorDetail(err))
				require.Nil(t, urls)
			})
		}
	})
}
