package rest_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// TestStagingRefusedByStore checks that the store binds what the mint
// signed: every PUT that differs is refused there, and
// registering the key afterwards is 400 staging_not_found with no row, no
// audit and no final object.
func TestStagingRefusedByStore(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})
	minted := []byte("the bytes the URL was minted for")
	same := []byte("THE BYTES THE URL WAS MINTED FOR") // same length, other digest

	cases := []struct {
		name   string
		status int // versitygw's answer
		put    func(t *testing.T, st *staging) (int, string)
	}{
		{"ErrBodyDiffers", http.StatusBadRequest, func(t *testing.T, st *staging) (int, string) {
			return put(t, st.PutURL, same, sha256B64(minted))
		}},
		{"ErrLongerBody", http.StatusForbidden, func(t *testing.T, st *staging) (int, string) {
			return put(t, st.PutURL, append(append([]byte{}, minted...), '!'), sha256B64(minted))
		}},
		{"ErrShorterBody", http.StatusForbidden, func(t *testing.T, st *staging) (int, string) {
			return put(t, st.PutURL, minted[1:], sha256B64(minted))
		}},
		{"ErrOtherBodyWithItsChecksum", http.StatusForbidden, func(t *testing.T, st *staging) (int, string) {
			return put(t, st.PutURL, same, sha256B64(same))
		}},
		{"ErrChecksumDiffers", http.StatusForbidden, func(t *testing.T, st *staging) (int, string) {
			return put(t, st.PutURL, minted, sha256B64([]byte("other")))
		}},
		{"ErrChecksumMissing", http.StatusForbidden, func(t *testing.T, st *staging) (int, string) {
			return put(t, st.PutURL, minted, "")
		}},
		{"ErrContentTypeDiffers", http.StatusForbidden, func(t *testing.T, st *staging) (int, string) {
			// versitygw tolerates a Content-Type the signature does not
			// cover, so this case signs one and sends another.
			st2 := h.mintRaw(t, strings.Split(st.Key, "/")[1], sprintf(
				`{"size":%d,"sha256_b64":%q,"content_type":"text/plain"}`, len(minted), sha256B64(minted)))
			*st = *st2
			return put(t, st.PutURL, minted, sha256B64(minted), "Content-Type", "text/html")
		}},
		{"ErrTamperedKey", http.StatusForbidden, func(t *testing.T, st *staging) (int, string) {
			ulidPart := st.Key[strings.LastIndex(st.Key, "/")+1:]
			return put(t, strings.Replace(st.PutURL, ulidPart, newULID(), 1), minted, sha256B64(minted))
		}},
		{"ErrTamperedExpiry", http.StatusForbidden, func(t *testing.T, st *staging) (int, string) {
			return put(t, strings.Replace(st.PutURL, "X-Amz-Expires=360", "X-Amz-Expires=604800", 1),
				minted, sha256B64(minted))
		}},
		{"ErrTamperedSignature", http.StatusForbidden, func(t *testing.T, st *staging) (int, string) {
			sig := query(t, st.PutURL, "X-Amz-Signature")
			flipped := "0"
			if sig[0] == '0' {
				flipped = "1"
			}
			return put(t, strings.Replace(st.PutURL, sig, flipped+sig[1:], 1), minted, sha256B64(minted))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := h.newWorkspace(t)
			st := h.mint(t, ws, minted)
			status, resp := c.put(t, st)
			require.Equal(t, c.status, status, resp)

			_, _, found := h.head(t, st.Key)
			require.False(t, found, "a refused PUT stores nothing")
			e := h.failsArt(t, h.register(t, ws, st.Key, "refused"), http.StatusBadRequest, "staging_not_found")
			require.Equal(t, "Failed to register artifact 'refused' in workspace "+ws, e.Message)
			require.Equal(t, "staging object '"+st.Key+"' not found; upload it first", e.Detail)
			require.Zero(t, h.rows(t, ws))
			require.Empty(t, h.objects(t, "store/"+ws+"/"))
			require.Empty(t, h.objects(t, "staging/"+ws+"/"))
			require.Equal(t, []string{"NEW_WORKSPACE"}, h.b.auditTypes(t, ws))

			// The honest PUT to the same URL still works.
			status, resp = put(t, st.PutURL, minted, sha256B64(minted), contentTypeOf(st)...)
			require.Equal(t, http.StatusOK, status, resp)
			h.artifactOf(t, h.register(t, ws, st.Key, "honest"))
		})
	}

	t.Run("ErrBodyToEmptyURL", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		st := h.mint(t, ws, nil)
		status, resp := put(t, st.PutURL, []byte("x"), sha256B64(nil))
		require.Equal(t, http.StatusBadRequest, status, resp)
		h.failsArt(t, h.register(t, ws, st.Key, "empty"), http.StatusBadRequest, "staging_not_found")
		require.Zero(t, h.rows(t, ws))
		require.Empty(t, h.objects(t, "store/"+ws+"/"))
	})

	t.Run("ErrNeverUploaded", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		st := h.mint(t, ws, minted)
		h.failsArt(t, h.register(t, ws, st.Key, "x"), http.StatusBadRequest, "staging_not_found")
		h.failsArt(t, h.register(t, ws, "staging/"+ws+"/"+newULID(), "y"), http.StatusBadRequest, "staging_not_found")
		require.Zero(t, h.rows(t, ws))
	})

	t.Run("ErrAlreadyRegistered", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		key := h.stage(t, ws, minted)
		h.artifactOf(t, h.register(t, ws, key, "first"))
		h.failsArt(t, h.register(t, ws, key, "second"), http.StatusConflict, "staging_key_used")
		require.Equal(t, 1, h.rows(t, ws))
		require.Len(t, h.objects(t, "store/"+ws+"/"), 1)
	})
}

// contentTypeOf returns the header pair a PUT must send for the bundle:
// the Content-Type when one was signed.
func contentTypeOf(st *staging) []string {
	if strings.Contains(st.PutURL, "content-type") {
		return []string{"Content-Type", "text/plain"}
	}
	return nil
}

// TestObjectSizeCap checks artifact.store.maxObjectSize at mint (declared)
// and at register and replace (actual), with a 16-byte cap.
func TestObjectSizeCap(t *testing.T) {
	t.Parallel()
	const maxSize = 16
	h := setupArtifacts(t, artConfig{maxObjectSize: maxSize})
	atCap := []byte(strings.Repeat("c", maxSize))
	overCap := []byte(strings.Repeat("o", maxSize+1))

	t.Run("ErrMintOverCap", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		e := h.failsArt(t, do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/new-staging", mintBody(overCap)),
			http.StatusBadRequest, "object_too_large")
		require.Equal(t, "Failed to mint a staging upload URL for workspace "+ws, e.Message)
		require.Equal(t, "artifact staged for workspace "+ws+" is 17 bytes, over the 16 byte single-PUT size cap",
			e.Detail)
		h.failsArt(t, do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/new-staging",
			sprintf(`{"size":%d,"sha256_b64":%q}`, int64(1)<<62, sha256B64(nil))),
			http.StatusBadRequest, "object_too_large")
	})

	t.Run("OKAtCap", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "full", atCap)
		require.Equal(t, int64(maxSize), a.Size)
		status, _, got := fetch(t, h.presign(t, a.ID))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, atCap, got)
	})

	t.Run("ErrRegisterOverCap", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		key := "staging/" + ws + "/" + newULID()
		h.putDirect(t, key, overCap) // bypasses the mint's declared-size check
		e := h.failsArt(t, h.register(t, ws, key, "big"), http.StatusBadRequest, "object_too_large")
		require.Equal(t, "Failed to register artifact 'big' in workspace "+ws, e.Message)
		require.Equal(t, "staged object '"+key+"' is 17 bytes, over the 16 byte size cap", e.Detail)
		require.Zero(t, h.rows(t, ws))
		require.Empty(t, h.objects(t, "store/"+ws+"/"))
		require.Equal(t, []string{"NEW_WORKSPACE"}, h.b.auditTypes(t, ws))
	})

	t.Run("ErrReplaceOverCap", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "small", []byte("small"))
		key := "staging/" + ws + "/" + newULID()
		h.putDirect(t, key, overCap)
		e := h.failsArt(t, h.replace(t, a.ID, key), http.StatusBadRequest, "object_too_large")
		require.Equal(t, "Failed to update artifact "+a.ID+" content", e.Message)
		got, _ := h.getArtifact(t, a.ID, "")
		require.Equal(t, a.raw, got.raw)
		require.Equal(t, []string{a.ObjectKey}, h.objects(t, "store/"+ws+"/"))
		require.Empty(t, h.released(t, ws))
	})
}

// TestStagingValidation checks the mint's body rules and the register's
// key-shape rule (a key this server minted for this workspace) on both
// register and replace.
func TestStagingValidation(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})
	ws := h.newWorkspace(t)
	mint := func(t *testing.T, body string) *response {
		t.Helper()
		return do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/new-staging", body)
	}
	digest := []byte("some bytes")
	sum := sha256.Sum256(digest)
	raw := sum[:]

	t.Run("OKSizeOmittedMeansZero", func(t *testing.T) {
		t.Parallel()
		st := h.mintRaw(t, ws, sprintf(`{"sha256_b64":%q}`, sha256B64(nil)))
		require.Equal(t, "host;x-amz-checksum-sha256", query(t, st.PutURL, "X-Amz-SignedHeaders"))
		status, resp := put(t, st.PutURL, nil, sha256B64(nil))
		require.Equal(t, http.StatusOK, status, resp)
		a := h.artifactOf(t, h.register(t, ws, st.Key, "omitted-size"))
		require.Zero(t, a.Size)
		require.Equal(t, "text/plain", a.MIMEType)
	})

	t.Run("OKUnknownFieldsIgnored", func(t *testing.T) {
		t.Parallel()
		h.mintRaw(t, ws, sprintf(`{"size":3,"sha256_b64":%q,"colour":"red"}`, sha256B64([]byte("abc"))))
	})

	checksums := map[string]string{
		"Hex":           hex.EncodeToString(raw),
		"HexUpper":      strings.ToUpper(hex.EncodeToString(raw)),
		"Unpadded":      base64.RawStdEncoding.EncodeToString(raw),
		"URLSafe":       base64.URLEncoding.EncodeToString([]byte(strings.Repeat("\xfb\xff", 16))),
		"TooShort":      base64.StdEncoding.EncodeToString(raw[:31]),
		"TooLong":       base64.StdEncoding.EncodeToString(append(append([]byte{}, raw...), 0)),
		"NotBase64":     "not base64 at all!",
		"EmbeddedCRLF":  sha256B64(digest)[:20] + `\r\n` + sha256B64(digest)[20:],
		"TrailingSpace": sha256B64(digest) + " ",
	}
	for name, sum := range checksums {
		t.Run("ErrInvalidChecksum"+name, func(t *testing.T) {
			t.Parallel()
			e := h.failsArt(t, mint(t, `{"size":10,"sha256_b64":"`+sum+`"}`), http.StatusBadRequest, "invalid_checksum")
			require.Equal(t, "Staging upload parameters not valid", e.Message)
			if strings.HasPrefix(name, "Hex") {
				require.Equal(t, "sha256_b64 must be the base64 of the raw 32-byte SHA-256 digest, not hex", e.Detail)
			}
		})
	}

	t.Run("ErrInvalidChecksumBeforeLookup", func(t *testing.T) {
		t.Parallel()
		h.failsArt(t, do(t, http.MethodPost, h.url+"/v1/workspaces/"+newULID()+"/new-staging",
			`{"size":1,"sha256_b64":"`+hex.EncodeToString(raw)+`"}`), http.StatusBadRequest, "invalid_checksum")
	})

	for name, body := range map[string]string{
		"ChecksumMissing":  `{"size":10}`,
		"ChecksumEmpty":    `{"size":10,"sha256_b64":""}`,
		"ChecksumNull":     `{"size":10,"sha256_b64":null}`,
		"NegativeSize":     sprintf(`{"size":-1,"sha256_b64":%q}`, sha256B64(nil)),
		"StreamWithDigest": sprintf(`{"size":0,"stream":true,"sha256_b64":%q}`, sha256B64(nil)),
		"StreamMultipart":  `{"size":10,"stream":true,"multipart":true}`,
	} {
		t.Run("ErrInvalidParameters"+name, func(t *testing.T) {
			t.Parallel()
			e := h.failsArt(t, mint(t, body), http.StatusBadRequest, "invalid_parameters")
			require.Equal(t, "Staging upload parameters not valid", e.Message)
		})
	}

	for name, body := range map[string]string{
		"Empty":          "",
		"NotJSON":        "size=1",
		"SizeString":     sprintf(`{"size":"1","sha256_b64":%q}`, sha256B64(nil)),
		"SizeFractional": sprintf(`{"size":1.5,"sha256_b64":%q}`, sha256B64(nil)),
		"ChecksumNumber": `{"size":1,"sha256_b64":5}`,
	} {
		t.Run("ErrInvalidJSON"+name, func(t *testing.T) {
			t.Parallel()
			e := h.failsArt(t, mint(t, body), http.StatusBadRequest, "invalid_json")
			require.Equal(t, "Unable to parse staging upload parameters from request", e.Message)
		})
	}

	// Keys that are not exactly staging/<this workspace>/<ULID>.
	other := h.newWorkspace(t)
	otherKey := h.stage(t, other, []byte("another workspace's upload"))
	ownKey := h.stage(t, ws, []byte("this workspace's upload"))
	ownULID := ownKey[strings.LastIndex(ownKey, "/")+1:]
	existing := h.upload(t, ws, "existing", []byte("already an artifact"))
	badKeys := map[string]string{
		"OtherWorkspace":       otherKey,
		"DotDot":               "staging/" + ws + "/../" + other + "/" + otherKey[strings.LastIndex(otherKey, "/")+1:],
		"DotDotInside":         "staging/" + ws + "/x/../" + ownULID,
		"ExtraSegment":         ownKey + "/x",
		"ExtraMiddleSegment":   "staging/" + ws + "/x/" + ownULID,
		"TrailingSlash":        ownKey + "/",
		"DoubleSlash":          "staging/" + ws + "//" + ownULID,
		"LeadingSlash":         "/" + ownKey,
		"LowercaseULID":        "staging/" + ws + "/" + strings.ToLower(ownULID),
		"ShortULID":            "staging/" + ws + "/" + ownULID[:25],
		"ULIDOutOfRange":       "staging/" + ws + "/8" + ownULID[1:],
		"ULIDWithU":            "staging/" + ws + "/" + ownULID[:25] + "U",
		"StoreOtherWorkspace":  "store/" + other + "/" + ownULID,
		"NoWorkspace":          "staging/" + ownULID,
		"WorkspacePrefixOnly":  "staging/" + ws,
		"OtherPrefix":          "poc/" + ownKey,
		"UppercaseWorkspace":   "staging/" + strings.ToUpper(ws) + "/" + ownULID,
		"WorkspaceAsSubstring": "staging/" + ws + "x/" + ownULID,
	}
	for name, key := range badKeys {
		t.Run("ErrStagingKeyInvalid"+name, func(t *testing.T) {
			t.Parallel()
			e := h.failsArt(t, h.register(t, ws, key, "k-"+strings.ToLower(name)), http.StatusBadRequest,
				"staging_key_invalid")
			require.Equal(t, "staging object key '"+key+"' was not issued for workspace "+ws, e.Detail)
			e = h.failsArt(t, h.replace(t, existing.ID, key), http.StatusBadRequest, "staging_key_invalid")
			require.Equal(t, "Failed to update artifact "+existing.ID+" content", e.Message)

			// A refused key is never touched, nor is the artifact.
			_, _, found := h.head(t, otherKey)
			require.True(t, found)
			_, _, found = h.head(t, ownKey)
			require.True(t, found)
			got, _ := h.getArtifact(t, existing.ID, "")
			require.Equal(t, existing.ObjectKey, got.ObjectKey)
		})
	}

	t.Run("ErrInvalidParametersRegister", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{`{"name":"x"}`, `{"name":"x","staging_object_key":""}`} {
			e := h.failsArt(t, do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/artifacts", body),
				http.StatusBadRequest, "invalid_parameters")
			require.Equal(t, "New artifact parameters not valid", e.Message)
		}
		e := h.failsArt(t, do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/artifacts",
			sprintf(`{"name":"x","staging_object_key":%q,"description":%q}`, ownKey, strings.Repeat("d", 4097))),
			http.StatusBadRequest, "invalid_parameters")
		require.Equal(t, "New artifact parameters not valid", e.Message)
		for _, body := range []string{"", "[", `{"name":1}`, `{"staging_object_key":true}`} {
			e := h.failsArt(t, do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/artifacts", body),
				http.StatusBadRequest, "invalid_json")
			require.Equal(t, "Unable to parse new artifact parameters from request", e.Message)
		}
	})
}

// TestStagingStreamed: a mint with "stream" binds the size only and has the
// store hash what it receives, so a client sends a file in one read. On
// SeaweedFS, which hashes such a PUT, the register records the store's
// SHA-256 and refuses a declared one that differs (the object is deleted,
// no row); on versitygw, which does not, the mint is refused
// digest_required and nothing is minted.
func TestStagingStreamed(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})
	body := []byte("bytes the client hashed only as it sent them")
	mint := func(t *testing.T, ws string) *response {
		return do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/new-staging", sprintf(`{"size":%d,"stream":true}`, len(body)))
	}
	registerDeclared := func(t *testing.T, ws, key, sum string) *response {
		return do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/artifacts",
			sprintf(`{"staging_object_key":%q,"name":"streamed","sha256_b64":%q}`, key, sum))
	}
	if stacktest.StoreKind() != stack.StoreSeaweedFS {
		ws := h.newWorkspace(t)
		e := h.failsArt(t, mint(t, ws), http.StatusBadRequest, "digest_required")
		require.Contains(t, e.Detail, "send sha256_b64 instead of stream")
		return
	}

	// streamed mints a streamed upload in a new workspace and PUTs body.
	streamed := func(t *testing.T) (ws, key string) {
		ws = h.newWorkspace(t)
		st := h.mintRaw(t, ws, sprintf(`{"size":%d,"stream":true}`, len(body)))
		status, resp := put(t, st.PutURL, body, "")
		require.Equal(t, http.StatusOK, status, resp)
		return ws, st.Key
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		ws, key := streamed(t)
		a := h.artifactOf(t, registerDeclared(t, ws, key, sha256B64(body)))
		require.JSONEq(t, sprintf("%q", sha256B64(body)), string(a.raw["sha256_b64"]), "the store's digest, as declared")
	})

	t.Run("ErrDeclaredDigestDiffers", func(t *testing.T) {
		t.Parallel()
		ws, key := streamed(t)
		e := h.failsArt(t, registerDeclared(t, ws, key, sha256B64([]byte("what the client meant to send"))),
			http.StatusBadRequest, "checksum_mismatch")
		require.Contains(t, e.Detail, "not the "+sha256B64([]byte("what the client meant to send"))+" declared")
		require.Zero(t, h.rows(t, ws))
		require.Empty(t, h.objects(t, "store/"+ws+"/"), "the mismatched object is deleted")
	})

	t.Run("ErrLengthStillBound", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		st := h.mintRaw(t, ws, sprintf(`{"size":%d,"stream":true}`, len(body)))
		status, resp := put(t, st.PutURL, body[1:], "")
		require.Equal(t, http.StatusForbidden, status, resp)
		h.failsArt(t, registerDeclared(t, ws, st.Key, sha256B64(body)), http.StatusBadRequest, "staging_not_found")
	})
}
