package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/cairn-dev/cairn/server/route"
)

// OAuth 2.0 access tokens: JWTs (JWS compact serialization) issued by the
// configured authorization servers, verified with the keys each publishes
// (its JWKS, found through its RFC 8414 metadata), accepted besides cairn's
// own tokens, which are checked first.

// OAuth configures the acceptance of OAuth 2.0 access tokens.
type OAuth struct {
	// Issuers are the accepted issuers, exactly as a token's iss says them
	// (auth.oauth.authorizationServers).
	Issuers []string
	// Audience is the value a token's aud must contain.
	Audience string
}

// Bounds and timings of access-token acceptance.
const (
	// MaxAccessTokenBytes bounds a bearer value taken for a JWT: a longer
	// one is refused before it is parsed.
	MaxAccessTokenBytes = 8 << 10
	// clockLeeway is how far in the future nbf and iat may be.
	clockLeeway = 30 * time.Second
	// keysTTL is how long an issuer's fetched keys are used.
	keysTTL = 10 * time.Minute
	// minRefetch is the least time between two fetches of an issuer's keys
	// (a token with an unknown key ID asks for one; a failed fetch counts).
	minRefetch = time.Minute
	// fetchTimeout bounds one HTTP exchange with an authorization server.
	fetchTimeout = 5 * time.Second
	// maxFetchBytes bounds a metadata document or a JWKS.
	maxFetchBytes = 1 << 20
	// maxKeys bounds the keys taken from one JWKS.
	maxKeys = 100
	// maxSubject bounds a token's sub, which names the actor.
	maxSubject = 255
	// actorPrefix starts the actor name of an access token: its sub follows.
	actorPrefix = "oauth:"
)

// accessAlgorithms are the accepted signature algorithms: none, HMAC and
// everything else are refused when the token is parsed.
var accessAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

// Why an access token is refused. They say nothing of the token itself:
// they are logged.
var (
	errTokenTooLong   = errors.New("longer than 8 KiB")
	errTokenIssuer    = errors.New("issuer not accepted")
	errTokenKey       = errors.New("no key of the issuer verifies it")
	errTokenAudience  = errors.New("audience not accepted")
	errTokenExpired   = errors.New("expired or without exp")
	errTokenNotYet    = errors.New("nbf or iat in the future")
	errTokenSubject   = errors.New("sub missing, too long or not printable")
	errTokenScopeType = errors.New("scope is not a string")
)

// verifier checks access tokens.
type verifier struct {
	audience string
	issuers  map[string]*issuerKeys
	log      *slog.Logger
	now      func() time.Time
	// ttl and minRefetch are keysTTL and minRefetch but in tests.
	ttl, minRefetch time.Duration
}

func newVerifier(o *OAuth, log *slog.Logger) (*verifier, error) {
	if o == nil || len(o.Issuers) == 0 || o.Audience == "" {
		return nil, nil
	}
	if err := CheckAudience(o.Audience); err != nil {
		return nil, fmt.Errorf("oauth: audience: %w", err)
	}
	v := &verifier{audience: o.Audience, issuers: map[string]*issuerKeys{}, log: log, now: time.Now,
		ttl: keysTTL, minRefetch: minRefetch}
	client := &http.Client{
		Timeout: fetchTimeout,
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}
	for _, iss := range o.Issuers {
		if err := CheckIssuer(iss); err != nil {
			return nil, fmt.Errorf("oauth: issuer: %w", err)
		}
		v.issuers[iss] = &issuerKeys{issuer: iss, client: client}
	}
	return v, nil
}

// CheckAudience checks a configured audience: non-empty, printable ASCII
// without spaces, at most 2048 bytes.
func CheckAudience(s string) error {
	if s == "" || len(s) > 2048 || !visibleASCII(s) {
		return fmt.Errorf("must be 1 to 2048 printable ASCII characters without spaces, got %q", s)
	}
	return nil
}

// visibleASCII reports whether s is printable ASCII without spaces.
func visibleASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// looksLikeJWS reports whether a bearer value has the shape of a JWS
// compact serialization: three parts separated by dots.
func looksLikeJWS(s string) bool { return strings.Count(s, ".") == 2 }

// verify checks an access token and returns what it stands for: the actor
// oauth:<sub> with the cairn scopes its scope claim names.
func (v *verifier) verify(ctx context.Context, raw string) (*token, error) {
	if len(raw) > MaxAccessTokenBytes {
		return nil, errTokenTooLong
	}
	tok, err := jwt.ParseSigned(raw, accessAlgorithms)
	if err != nil {
		return nil, fmt.Errorf("not a JWS signed with RS256 or ES256: %w", err)
	}
	if len(tok.Headers) != 1 {
		return nil, errors.New("not one signature")
	}
	header := tok.Headers[0]
	var claimed struct {
		Issuer string `json:"iss"`
	}
	if err := tok.UnsafeClaimsWithoutVerification(&claimed); err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	is, ok := v.issuers[claimed.Issuer]
	if !ok {
		return nil, errTokenIssuer
	}
	var (
		claims jwt.Claims
		extra  struct {
			Scope any `json:"scope"`
		}
		verified bool
	)
	for _, key := range is.keysFor(ctx, v, header.KeyID, jose.SignatureAlgorithm(header.Algorithm)) {
		if err := tok.Claims(key, &claims, &extra); err == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, errTokenKey
	}
	return v.check(is.issuer, claims, extra.Scope)
}

// check holds verified claims to the rules and maps them onto a token.
func (v *verifier) check(issuer string, c jwt.Claims, scope any) (*token, error) {
	now := v.now()
	switch {
	case c.Issuer != issuer:
		return nil, errTokenIssuer
	case !c.Audience.Contains(v.audience):
		return nil, errTokenAudience
	case c.Expiry == nil || !now.Before(c.Expiry.Time()):
		return nil, errTokenExpired
	case c.NotBefore != nil && c.NotBefore.Time().After(now.Add(clockLeeway)),
		c.IssuedAt != nil && c.IssuedAt.Time().After(now.Add(clockLeeway)):
		return nil, errTokenNotYet
	case c.Subject == "" || len(c.Subject) > maxSubject || !visibleASCII(c.Subject):
		return nil, errTokenSubject
	}
	var scopes []route.Scope
	switch s := scope.(type) {
	case nil:
	case string:
		for name := range strings.FieldsSeq(s) {
			sc := route.Scope(name)
			if slices.Contains(route.TokenScopes, sc) && !slices.Contains(scopes, sc) {
				scopes = append(scopes, sc)
			}
		}
	default:
		return nil, errTokenScopeType
	}
	return &token{name: actorPrefix + c.Subject, scopes: scopes}, nil
}

// issuerKeys are one authorization server's signing keys, fetched when
// first needed, again once keysTTL has passed, and again on a key ID they
// do not have — at most once every minRefetch.
type issuerKeys struct {
	issuer string
	client *http.Client

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	fetched   time.Time // of the keys; zero: none
	attempted time.Time // the last fetch, failed or not
}

// keysFor returns the keys that may have signed a token with key ID kid
// (any key, when the token names none) and algorithm alg.
func (is *issuerKeys) keysFor(ctx context.Context, v *verifier, kid string, alg jose.SignatureAlgorithm) []any {
	is.mu.Lock()
	defer is.mu.Unlock()
	now := v.now()
	stale := is.fetched.IsZero() || now.Sub(is.fetched) >= v.ttl
	found := is.match(kid, alg)
	if (stale || len(found) == 0) && (is.attempted.IsZero() || now.Sub(is.attempted) >= v.minRefetch) {
		is.attempted = now
		// The fetch is the server's, not the request's: a client that goes
		// away does not fail it for the requests that follow.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
		keys, err := is.fetch(fctx)
		cancel()
		if err != nil {
			v.log.LogAttrs(ctx, slog.LevelWarn, "fetching an authorization server's keys failed",
				slog.String("issuer", is.issuer), slog.String("error", err.Error()))
		} else {
			is.keys, is.fetched = keys, now
			stale = false
		}
		found = is.match(kid, alg)
	}
	if stale {
		// Keys past their time are not used.
		is.keys, is.fetched = nil, time.Time{}
		return nil
	}
	return found
}

// match is the held keys that fit kid and alg.
func (is *issuerKeys) match(kid string, alg jose.SignatureAlgorithm) []any {
	var out []any
	for _, k := range is.keys {
		if (kid != "" && k.KeyID != kid) || (k.Algorithm != "" && k.Algorithm != string(alg)) {
			continue
		}
		switch key := k.Key.(type) {
		case *rsa.PublicKey:
			if alg == jose.RS256 {
				out = append(out, key)
			}
		case *ecdsa.PublicKey:
			if alg == jose.ES256 && key.Curve == elliptic.P256() {
				out = append(out, key)
			}
		}
	}
	return out
}

// fetch finds the issuer's jwks_uri in its metadata and fetches the keys.
func (is *issuerKeys) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	var errs []error
	for _, u := range metadataURLs(is.issuer) {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := is.getJSON(ctx, u, &meta); err != nil {
			errs = append(errs, err)
			continue
		}
		if meta.Issuer != is.issuer {
			errs = append(errs, fmt.Errorf("%s: issuer is %q, not the configured one", u, meta.Issuer))
			continue
		}
		if _, err := checkHTTPURL(meta.JWKSURI); err != nil {
			errs = append(errs, fmt.Errorf("%s: jwks_uri %w", u, err))
			continue
		}
		return is.fetchKeys(ctx, meta.JWKSURI)
	}
	return nil, errors.Join(errs...)
}

// fetchKeys fetches a JWKS and keeps its public signing keys; a key it
// cannot read (another type, another use) is passed over.
func (is *issuerKeys) fetchKeys(ctx context.Context, u string) ([]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := is.getJSON(ctx, u, &set); err != nil {
		return nil, err
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil || !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		keys = append(keys, k)
		if len(keys) == maxKeys {
			break
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no usable signing key", u)
	}
	return keys, nil
}

// getJSON GETs u and decodes its 200 answer, at most maxFetchBytes, into v.
func (is *issuerKeys) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := is.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBytes+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxFetchBytes {
		return fmt.Errorf("GET %s: larger than %d bytes", u, maxFetchBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// metadataURLs are where an issuer's metadata may be, in the order tried:
// the RFC 8414 document, the well-known path inserted between the host and
// the issuer's path, then OpenID Connect Discovery's, appended to the
// issuer.
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	origin := u.Scheme + "://" + u.Host
	return []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + path + "/.well-known/openid-configuration",
	}
}
