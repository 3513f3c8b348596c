package rest

import (
	"net/http"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/route"
)

func (a *API) alive(*http.Request) (any, error) { return nil, nil }

// readyAnswer is the data of a ready answer: who checks that stored bytes
// are the ones their upload URL bound (artifact.s3.verify).
type readyAnswer struct {
	Integrity string `json:"integrity"`
}

func (a *API) ready(r *http.Request) (any, error) {
	if err := a.svc.Ready(r.Context()); err != nil {
		return nil, failed(&cairn.Error{Reason: cairn.ReasonNotReady, Detail: cairn.ErrorDetail(err), Err: err}, "not ready")
	}
	return readyAnswer{Integrity: a.svc.Integrity()}, nil
}

// info answers what the server offers, with the caller's scopes.
func (a *API) info(r *http.Request) (any, error) {
	info := *a.cfg.Info
	info.Scopes = cairn.ScopesOf(r.Context(), route.Names(route.TokenScopes))
	return struct {
		Info cairn.Info `json:"info"`
	}{info}, nil
}
