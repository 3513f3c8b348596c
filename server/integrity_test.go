package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
)

// TestIntegrityProbeAtStart: on a store that takes checksums on faith the
// server refuses to start, naming what the store failed and the way out;
// with artifact.s3.verify: server it starts, says so in /liveness/ready
// and its log, and refuses at register an upload whose bytes are not the
// ones its URL bound, while the right bytes register.
func TestIntegrityProbeAtStart(t *testing.T) {
	t.Parallel()
	lax := stacktest.NewLaxStore(t, stacktest.S3(t))

	t.Run("Refused", func(t *testing.T) {
		cfg, secrets := testConfig(t)
		cfg.Artifact.S3.Endpoint = lax.Endpoint
		srv, err := server.Open(context.Background(), cfg, secrets, server.Options{Migrate: true})
		if err == nil {
			srv.Close()
		}
		require.ErrorContains(t, err, "the object store at http://"+lax.Endpoint+" failed the integrity probe: "+
			"it kept an upload whose bytes do not match the SHA-256 its URL binds; "+
			"it kept an upload shorter than the length its URL binds; "+
			"it kept a multipart part whose bytes do not match the SHA-256 its URL binds")
		require.ErrorContains(t, err, "set artifact.s3.verify: server")
	})

	t.Run("VerifyByServer", func(t *testing.T) {
		cfg, secrets := testConfig(t)
		cfg.Artifact.S3.Endpoint = lax.Endpoint
		cfg.Artifact.S3.Verify = server.VerifyByServer
		var logs bytes.Buffer
		srv := startServer(t, cfg, secrets, slog.New(slog.NewTextHandler(&logs, nil)))
		require.Contains(t, logs.String(), "failed the integrity probe")
		require.Contains(t, logs.String(), "the server reads back and hashes every registered object")
		base := "http://" + srv.APIAddr()

		status, body := call(t, "GET", base+"/liveness/ready", "")
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, `"integrity":"server"`)

		status, body = call(t, "POST", base+"/v1/workspaces", `{"name":"verified"}`)
		require.Equal(t, http.StatusOK, status, body)
		ws := regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(body)[1]
		right := []byte("the bytes the URL binds")
		status, body = upload(t, base, ws, right, []byte("other bytes, same claim"))
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Contains(t, body, `"reason":"checksum_mismatch"`)
		status, body = upload(t, base, ws, right, right)
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, `"sha256_b64":"`+digest(right)+`"`)
	})
}

// TestReadySaysTheStoreVerifies: on a store that passed the probe, ready
// says the store checks the bytes.
func TestReadySaysTheStoreVerifies(t *testing.T) {
	t.Parallel()
	cfg, secrets := testConfig(t)
	status, body := call(t, "GET", "http://"+startServer(t, cfg, secrets, nil).APIAddr()+"/liveness/ready", "")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"integrity":"store"`)
}

// upload mints a staging slot for declared, PUTs sent through its URL
// (with declared's checksum header, as the URL asks) and registers it as
// "a"; the store must keep the PUT.
func upload(t *testing.T, base, ws string, declared, sent []byte) (int, string) {
	t.Helper()
	status, body := call(t, "POST", base+"/v1/workspaces/"+ws+"/new-staging",
		`{"size":`+strconv.Itoa(len(declared))+`,"sha256_b64":"`+digest(declared)+`"}`)
	require.Equal(t, http.StatusOK, status, body)
	var minted struct {
		Staging struct {
			Key    string `json:"staging_object_key"`
			PutURL string `json:"put_url"`
		} `json:"staging"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &minted))
	put, err := http.NewRequestWithContext(t.Context(), http.MethodPut, minted.Staging.PutURL, bytes.NewReader(sent))
	require.NoError(t, err)
	put.Header.Set("x-amz-checksum-sha256", digest(declared))
	resp, err := http.DefaultClient.Do(put)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the store keeps the upload (a lax one, whatever it is sent)")
	return call(t, "POST", base+"/v1/workspaces/"+ws+"/artifacts",
		`{"name":"a","staging_object_key":"`+minted.Staging.Key+`"}`)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}
