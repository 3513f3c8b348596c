package holder

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProofHeader carries a server's proof that it knows the shell's key (the
// SHA-256 of its secret): an HMAC-SHA256 over the request's method, path
// and query, a time and a nonce. The secret itself never enters the
// container, and a process inside it that reaches the socket cannot attach
// without the key.
const ProofHeader = "Cairn-Holder-Proof"

// proofWindow is how far a proof's time may be from the holder's clock;
// nonces are remembered this long, so a proof is good once.
const proofWindow = 2 * time.Minute

// maxNonces bounds the nonces a holder remembers; past it, new proofs are
// refused until old ones age out (a flood of attaches cannot grow memory).
const maxNonces = 4096

// Sign sets r's proof under key.
func Sign(r *http.Request, key []byte, now time.Time) error {
	n := make([]byte, 16)
	if _, err := rand.Read(n); err != nil {
		return err
	}
	t := strconv.FormatInt(now.Unix(), 10)
	nonce := hex.EncodeToString(n)
	r.Header.Set(ProofHeader, t+"."+nonce+"."+hex.EncodeToString(mac(key, r, t, nonce)))
	return nil
}

func mac(key []byte, r *http.Request, t, nonce string) []byte {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s %s?%s\n%s\n%s", r.Method, r.URL.Path, r.URL.RawQuery, t, nonce)
	return m.Sum(nil)
}

// verifier checks proofs and remembers the nonces it accepted.
type verifier struct {
	key []byte
	mu  sync.Mutex
	// seen maps an accepted nonce to when it may be forgotten.
	seen map[string]time.Time
}

func newVerifier(key []byte) *verifier { return &verifier{key: key, seen: map[string]time.Time{}} }

// errNoProof is every refusal of a proof: which part failed is not told.
var errNoProof = errors.New("the request carries no valid proof of the shell's key")

// check accepts r's proof once.
func (v *verifier) check(r *http.Request, now time.Time) error {
	parts := strings.Split(r.Header.Get(ProofHeader), ".")
	if len(parts) != 3 {
		return errNoProof
	}
	sec, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || now.Sub(time.Unix(sec, 0)).Abs() > proofWindow {
		return errNoProof
	}
	got, err := hex.DecodeString(parts[2])
	if err != nil || !hmac.Equal(got, mac(v.key, r, parts[0], parts[1])) {
		return errNoProof
	}
	return v.remember(parts[1], now)
}

func (v *verifier) remember(nonce string, now time.Time) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for n, until := range v.seen {
		if now.After(until) {
			delete(v.seen, n)
		}
	}
	if _, used := v.seen[nonce]; used || len(v.seen) >= maxNonces {
		return errNoProof
	}
	v.seen[nonce] = now.Add(2 * proofWindow)
	return nil
}
