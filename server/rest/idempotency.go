package rest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// keyRule is whether a route takes an Idempotency-Key, and if not, why.
type keyRule string

const (
	keysTakenRule = keyRule("")
	// GET, PUT and DELETE are idempotent by themselves: a key changes
	// nothing there, and is not read.
	keysIgnored = keyRule("ignored")
	// A mint's answer holds presigned URLs, credentials that are never
	// stored; a repeated mint makes no object, so it needs no key.
	keysRefusedMint = keyRule("a mint's answer holds presigned URLs, which are never kept; repeat the mint instead (it makes no object)")
)

// keysTaken is the Idempotency-Key rule of a route.
func keysTaken(method, path string) keyRule {
	switch {
	case method != http.MethodPost:
		return keysIgnored
	case strings.Contains(path, "/new-staging"):
		return keysRefusedMint
	}
	return keysTakenRule
}

// maxKeptAnswer bounds the answer kept for a key; a larger one is given
// once and not kept, so a repeat runs afresh.
const maxKeptAnswer = 1 << 20

// answerOnce answers a request carrying an Idempotency-Key: the first
// request of the key runs and its answer is kept; a repeat gets that
// answer, marked Idempotent-Replayed, instead of running again.
func (a *API) answerOnce(w http.ResponseWriter, r *http.Request, id, key string, rule keyRule, h endpoint) int {
	const sentence = "Failed to answer a request with an Idempotency-Key"
	if rule != keysTakenRule {
		return a.writeError(w, r, id, failed(cairn.Errorf(cairn.ReasonInvalidParameters, "%s", rule), sentence))
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return a.writeError(w, r, id, failed(bodyError(err, maxBodyBytes), sentence))
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	lease := a.cfg.RequestTimeout + time.Minute // the first request cannot run longer
	ans, replayed, err := a.svc.Once(r.Context(), key, fingerprint(r, body), lease, func() service.KeyedAnswer {
		tee := &teeWriter{ResponseWriter: w}
		status := a.answer(tee, r, id, h)
		if tee.overflow {
			status = http.StatusInternalServerError // never kept
		}
		return service.KeyedAnswer{Status: status, Body: tee.kept.Bytes()}
	})
	switch {
	case err != nil:
		return a.writeError(w, r, id, failed(err, sentence))
	case !replayed:
		return ans.Status
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(cairn.HeaderIdempotentReplayed, "true")
	w.WriteHeader(ans.Status)
	w.Write(ans.Body) //nolint:errcheck // the client went away
	return ans.Status
}

// fingerprint is what a key's request was: its method, path, query and
// body, digested.
func fingerprint(r *http.Request, body []byte) string {
	h := sha256.New()
	io.WriteString(h, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+"\n") //nolint:errcheck // a hash never fails
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// teeWriter passes an answer through and keeps a copy of its body, up to
// maxKeptAnswer.
type teeWriter struct {
	http.ResponseWriter
	kept     bytes.Buffer
	overflow bool
}

func (t *teeWriter) Write(p []byte) (int, error) {
	if t.kept.Len()+len(p) > maxKeptAnswer {
		t.overflow = true
	} else {
		t.kept.Write(p)
	}
	return t.ResponseWriter.Write(p)
}
