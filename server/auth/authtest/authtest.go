// Package authtest mounts declared routes the way a server does, for tests
// of the front doors: through server/auth, with authentication off.
package authtest

import (
	"net/http"
	"testing"

	"github.com/cairn-dev/cairn/server/auth"
	"github.com/cairn-dev/cairn/server/route"
)

// Mount returns the handler a server without tokens would serve for routes
// under prefix, with the Host guard on as by default.
func Mount(tb testing.TB, prefix string, routes ...[]route.Route) http.Handler {
	tb.Helper()
	g, err := auth.New(auth.Config{HostGuard: true})
	if err != nil {
		tb.Fatalf("auth.New: %v", err)
	}
	var all []route.Route
	for _, rs := range routes {
		all = append(all, rs...)
	}
	h, err := g.Mount(prefix, all)
	if err != nil {
		tb.Fatalf("mount: %v", err)
	}
	return h
}
