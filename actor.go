package cairn

import (
	"context"
	"slices"
)

type actorKey struct{}

// WithActor returns a context naming who acts: a token name, or
// "maintainer" for the reconciler. It is request-scoped identity, recorded
// in the audit trail, not a dependency.
func WithActor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, actorKey{}, name)
}

// ActorFrom returns the actor of ctx, or nil when nobody was authenticated.
func ActorFrom(ctx context.Context) *string {
	if name, ok := ctx.Value(actorKey{}).(string); ok {
		return &name
	}
	return nil
}

type requestIDKey struct{}

// WithRequestID returns a context carrying the ID of the request being
// served, recorded in the metadata of the audit rows it writes.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request ID of ctx, or "" outside a request.
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

type scopesKey struct{}

type noAuthKey struct{}

// WithScopes records the scopes of the caller's token.
func WithScopes(ctx context.Context, scopes []string) context.Context {
	return context.WithValue(ctx, scopesKey{}, scopes)
}

// WithoutAuthentication marks ctx as served with authentication off (no
// tokens configured), where every scope is allowed. It must be said: a
// context with neither scopes nor this mark is allowed nothing.
func WithoutAuthentication(ctx context.Context) context.Context {
	return context.WithValue(ctx, noAuthKey{}, true)
}

// ScopesOf is the caller's scopes: those of its token, or all of allScopes
// with authentication off; none when ctx says neither.
func ScopesOf(ctx context.Context, allScopes []string) []string {
	if off, _ := ctx.Value(noAuthKey{}).(bool); off {
		return slices.Clone(allScopes)
	}
	scopes, _ := ctx.Value(scopesKey{}).([]string)
	return slices.Clone(scopes)
}

// ScopeAllowed reports whether the caller may act with scope. It fails
// closed: without recorded scopes or the no-authentication mark, no.
func ScopeAllowed(ctx context.Context, scope string) bool {
	if off, _ := ctx.Value(noAuthKey{}).(bool); off {
		return true
	}
	scopes, _ := ctx.Value(scopesKey{}).([]string)
	return slices.Contains(scopes, scope)
}
