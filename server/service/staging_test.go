package service_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

func TestMintStaging(t *testing.T) {
	t.Parallel()
	sum := sha256B64([]byte("hello"))
	raw := sha256.Sum256([]byte("hello"))
	// A digest whose standard base64 has '+' and '/', so its URL-safe form differs.
	urlSafe := base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb, 0xff}, 16))
	const notHex = "sha256_b64 must be the base64 of the raw 32-byte SHA-256 digest, not hex"
	const notB64 = "sha256_b64 must be the standard padded base64 of the raw 32-byte SHA-256 digest"

	t.Run("ErrValidation", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			req    cairn.StagingRequest
			reason cairn.Reason
			detail string
		}{
			{"ErrInvalidParametersNegativeSize", cairn.StagingRequest{Size: -1, SHA256B64: sum}, cairn.ReasonInvalidParameters, "size must be 0 or more, not -1"},
			{"ErrInvalidParametersMissingSHA", cairn.StagingRequest{Size: 5}, cairn.ReasonInvalidParameters, "sha256_b64 is required"},
			{"ErrInvalidChecksumHex", cairn.StagingRequest{Size: 5, SHA256B64: hex.EncodeToString(raw[:])}, cairn.ReasonInvalidChecksum, notHex},
			{"ErrInvalidChecksumUppercaseHex", cairn.StagingRequest{Size: 5, SHA256B64: strings.ToUpper(hex.EncodeToString(raw[:]))}, cairn.ReasonInvalidChecksum, notHex},
			{"ErrInvalidChecksumUnpadded", cairn.StagingRequest{Size: 5, SHA256B64: base64.RawStdEncoding.EncodeToString(raw[:])}, cairn.ReasonInvalidChecksum, notB64},
			{"ErrInvalidChecksumURLSafe", cairn.StagingRequest{Size: 5, SHA256B64: urlSafe}, cairn.ReasonInvalidChecksum, notB64},
			{"ErrInvalidChecksum31Bytes", cairn.StagingRequest{Size: 5, SHA256B64: base64.StdEncoding.EncodeToString(raw[:31])}, cairn.ReasonInvalidChecksum, notB64},
			{"ErrInvalidChecksum33Bytes", cairn.StagingRequest{Size: 5, SHA256B64: base64.StdEncoding.EncodeToString(append(raw[:], 0))}, cairn.ReasonInvalidChecksum, notB64},
			{"ErrInvalidChecksum64CharBase64", cairn.StagingRequest{Size: 5, SHA256B64: strings.Repeat("Zm9v", 16)}, cairn.ReasonInvalidChecksum, notB64},
			{"ErrInvalidChecksumPaddingBits", cairn.StagingRequest{Size: 5, SHA256B64: strings.Repeat("A", 42) + "B="}, cairn.ReasonInvalidChecksum, notB64},
			{"ErrInvalidChecksumNotBase64", cairn.StagingRequest{Size: 5, SHA256B64: "not a digest"}, cairn.ReasonInvalidChecksum, notB64},
			{"ErrInvalidChecksumSpace", cairn.StagingRequest{Size: 5, SHA256B64: " " + sum}, cairn.ReasonInvalidChecksum, notB64},
			{"ErrInvalidChecksumTrailingNewline", cairn.StagingRequest{Size: 5, SHA256B64: sum + "\n"}, cairn.ReasonInvalidChecksum, notB64},
			{"ErrInvalidChecksumEmbeddedCRLF", cairn.StagingRequest{Size: 5, SHA256B64: sum[:20] + "\r\n" + sum[20:]}, cairn.ReasonInvalidChecksum, notB64},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				lookups := 0
				f.store.FindWorkspaceFunc = func(_ context.Context, id string) (*cairn.Workspace, error) {
					lookups++
					return nil, errNotFound(id)
				}

				st, err := svc.MintStaging(t.Context(), uuid.NewString(), tt.req)
				require.Equal(t, tt.reason, cairn.ErrorReason(err))
				require.Equal(t, tt.detail, cairn.ErrorDetail(err))
				require.Nil(t, st)
				require.Zero(t, lookups, "validation comes before the workspace lookup")
			})
		}
	})

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			cfg    service.Config
			req    cairn.StagingRequest
			prefix string
			ttl    time.Duration
		}{
			{"OKDefaults", service.Config{}, cairn.StagingRequest{Size: 5, SHA256B64: sum}, "store", 360 * time.Second},
			{"OKZeroSize", service.Config{}, cairn.StagingRequest{SHA256B64: sha256B64(nil)}, "store", 360 * time.Second},
			{"OKContentType", service.Config{}, cairn.StagingRequest{Size: 5, SHA256B64: sum, ContentType: "application/pdf"}, "store", 360 * time.Second},
			{"OKBasePrefix", service.Config{Keys: service.KeyPrefixes{Base: "poc"}}, cairn.StagingRequest{Size: 5, SHA256B64: sum}, "poc/store", 360 * time.Second},
			{"OKCleanedPrefixes", service.Config{Keys: service.KeyPrefixes{Base: "/a//b/", Staging: "up/"}}, cairn.StagingRequest{Size: 5, SHA256B64: sum}, "a/b/store", 360 * time.Second},
			{"OKPutURLTTL", service.Config{PutURLTTL: time.Minute}, cairn.StagingRequest{Size: 5, SHA256B64: sum}, "store", time.Minute},
			{"OKSizeAtCap", service.Config{MaxObjectSize: 5}, cairn.StagingRequest{Size: 5, SHA256B64: sum}, "store", 360 * time.Second},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				_, f := setup(t)
				svc := f.serviceWith(tt.cfg)
				ws := f.storedWorkspace(cairn.VolumeNone)
				var keys []string
				var specs []service.PutSpec
				f.objects.PresignPutFunc = func(_ context.Context, key string, put service.PutSpec) (string, error) {
					keys = append(keys, key)
					specs = append(specs, put)
					return "https://s3.example/put?sig", nil
				}

				st, err := svc.MintStaging(t.Context(), ws.ID, tt.req)
				require.NoError(t, err)
				require.Regexp(t, `^`+regexp.QuoteMeta(tt.prefix+"/"+ws.ID+"/")+keyULID+`$`, st.Key)
				require.Equal(t, []string{st.Key}, keys)
				require.Equal(t, []service.PutSpec{{
					Size: tt.req.Size, SHA256B64: tt.req.SHA256B64, ContentType: tt.req.ContentType, TTL: tt.ttl,
				}}, specs)
				require.Equal(t, "https://s3.example/put?sig", st.PutURL)
				require.Equal(t, f.now.Add(tt.ttl), st.ExpiresAt)
				require.Empty(t, f.updates, "minting writes nothing")
				require.Empty(t, f.audits, "minting is not audited")
			})
		}
	})

	t.Run("OKFreshKeyEachTime", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		f.objects.PresignPutFunc = func(context.Context, string, service.PutSpec) (string, error) { return "u", nil }

		a, err := svc.MintStaging(t.Context(), ws.ID, cairn.StagingRequest{Size: 5, SHA256B64: sum})
		require.NoError(t, err)
		b, err := svc.MintStaging(t.Context(), ws.ID, cairn.StagingRequest{Size: 5, SHA256B64: sum})
		require.NoError(t, err)
		require.NotEqual(t, a.Key, b.Key)
	})

	t.Run("ErrObjectTooLarge", func(t *testing.T) {
		t.Parallel()
		_, f := setup(t)
		svc := f.serviceWith(service.Config{MaxObjectSize: 5})
		ws := f.storedWorkspace(cairn.VolumeNone)
		presigns := 0
		f.objects.PresignPutFunc = func(context.Context, string, service.PutSpec) (string, error) {
			presigns++
			return "u", nil
		}

		st, err := svc.MintStaging(t.Context(), ws.ID, cairn.StagingRequest{Size: 6, SHA256B64: sum})
		require.Equal(t, cairn.ReasonObjectTooLarge, cairn.ErrorReason(err))
		require.Equal(t, "artifact staged for workspace "+ws.ID+" is 6 bytes, over the 5 byte single-PUT size cap",
			cairn.ErrorDetail(err))
		require.Nil(t, st)
		require.Zero(t, presigns)
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name string
			size int64
		}{
			{"ErrWorkspaceNotFound", 5},
			{"ErrWorkspaceNotFoundBeforeSizeCap", 6},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				_, f := setup(t)
				svc := f.serviceWith(service.Config{MaxObjectSize: 5})
				f.row(f.newWorkspace(cairn.VolumeNone))
				presigns := 0
				f.objects.PresignPutFunc = func(context.Context, string, service.PutSpec) (string, error) {
					presigns++
					return "u", nil
				}

				st, err := svc.MintStaging(t.Context(), uuid.NewString(), cairn.StagingRequest{Size: tt.size, SHA256B64: sum})
				require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
				require.Nil(t, st)
				require.Zero(t, presigns)
			})
		}
	})

	// A streamed mint asks the store to hash the PUT — unless the server
	// hashes every registered object itself (verify: server), when the
	// URL binds the size alone; a store that cannot hash is digest_required.
	t.Run("Stream", func(t *testing.T) {
		t.Parallel()
		for _, verify := range []bool{false, true} {
			_, f := setup(t)
			svc := f.serviceWith(service.Config{VerifyObjects: verify})
			ws := f.storedWorkspace(cairn.VolumeNone)
			var asked service.PutSpec
			f.objects.PresignPutFunc = func(_ context.Context, _ string, put service.PutSpec) (string, error) {
				asked = put
				return "u", nil
			}
			st, err := svc.MintStaging(t.Context(), ws.ID, cairn.StagingRequest{Size: 5, Stream: true})
			require.NoError(t, err)
			require.Equal(t, "u", st.PutURL)
			require.Equal(t, service.PutSpec{Size: 5, TTL: asked.TTL, StoreHashes: !verify}, asked, "verify %v", verify)
		}

		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		f.objects.PresignPutFunc = func(context.Context, string, service.PutSpec) (string, error) {
			return "", service.ErrStoreCannotHash
		}
		st, err := svc.MintStaging(t.Context(), ws.ID, cairn.StagingRequest{Size: 5, Stream: true})
		require.Equal(t, cairn.ReasonDigestRequired, cairn.ErrorReason(err))
		require.Nil(t, st)
	})

	t.Run("ErrStoreUnavailable", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		f.objects.PresignPutFunc = func(context.Context, string, service.PutSpec) (string, error) { return "", errStoreDown }

		st, err := svc.MintStaging(t.Context(), ws.ID, cairn.StagingRequest{Size: 5, SHA256B64: sum})
		require.ErrorIs(t, err, errStoreDown)
		require.Nil(t, st)
	})
}
