package server

import (
	"context"
	"net/http"

	"github.com/cairn-dev/cairn/server/reconcile"
	"github.com/cairn-dev/cairn/server/service"
)

// maintainerProbes adds /liveness/alive and /liveness/ready to a
// maintainer's metrics listener: ready needs the database and a last pass
// free of SQL errors.
func maintainerProbes(mux *http.ServeMux, svc *service.Service, r *reconcile.Reconciler) {
	mux.HandleFunc("GET /liveness/alive", func(w http.ResponseWriter, _ *http.Request) {
		writeProbe(w, nil)
	})
	mux.HandleFunc("GET /liveness/ready", func(w http.ResponseWriter, req *http.Request) {
		writeProbe(w, maintainerReady(req.Context(), svc, r))
	})
}

func maintainerReady(ctx context.Context, svc *service.Service, r *reconcile.Reconciler) error {
	if err := svc.PingDatabase(ctx); err != nil {
		return err
	}
	return r.Ready()
}

func writeProbe(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"success":false,"error":{"code":500,"message":"not ready","reason":"not_ready"}}` + "\n")) //nolint:errcheck // client gone
		return
	}
	w.Write([]byte(`{"success":true}` + "\n")) //nolint:errcheck // client gone
}
