package rest

import (
	"net/http"

	"github.com/cairn-dev/cairn"
)

func (a *API) alive(*http.Request) (any, error) { return nil, nil }

func (a *API) ready(r *http.Request) (any, error) {
	if err := a.svc.Ready(r.Context()); err != nil {
		return nil, failed(&cairn.Error{Reason: cairn.ReasonNotReady, Detail: cairn.ErrorDetail(err), Err: err}, "not ready")
	}
	return nil, nil
}
