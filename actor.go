package cairn

import "context"

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

type scopesKey struct{}

// WithScopes records the scopes of the caller's token. Without it — when
// authentication is off — every scope is allowed.
func WithScopes(ctx context.Context, scopes []string) context.Context {
	return context.WithValue(ctx, scopesKey{}, scopes)
}

// ScopeAllowed reports whether the caller may act with scope.
func ScopeAllowed(ctx context.Context, scope string) bool {
	scopes, checked := ctx.Value(scopesKey{}).([]string)
	if !checked {
		return true
	}
	for _, s := range scopes {
		if s == scope {
			return true
		}
	}
	return false
}
