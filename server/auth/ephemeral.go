package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"

	"github.com/cairn-dev/cairn/server/route"
)

// Register mints a bearer token that the guard accepts, as name and with
// scopes, until revoke is called: an SSH workbench session's, which lives
// exactly as long as the session. The token is held only as its hash here;
// the caller keeps the token and must never show or log it. revoke is
// idempotent. An ephemeral token keeps its scopes even when no configured
// token turns authentication on.
func (g *Guard) Register(name string, scopes []route.Scope) (secret string, revoke func()) {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // never fails (crypto/rand)
	secret = hex.EncodeToString(raw)
	sum := sha256.Sum256([]byte(secret))
	t := &token{name: name, hash: sum, scopes: slices.Clone(scopes)}
	g.mu.Lock()
	if g.ephemeral == nil {
		g.ephemeral = make(map[[sha256.Size]byte]*token)
	}
	g.ephemeral[sum] = t
	g.mu.Unlock()
	var once sync.Once
	return secret, func() {
		once.Do(func() {
			g.mu.Lock()
			delete(g.ephemeral, sum)
			g.mu.Unlock()
		})
	}
}

// ephemeralToken finds a registered token by the presented token's hash.
// A map lookup by hash says nothing about the token through its timing:
// finding the preimage of a SHA-256 prefix is not a shortcut.
func (g *Guard) ephemeralToken(sum [sha256.Size]byte) (*token, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	t, ok := g.ephemeral[sum]
	return t, ok
}
