package server

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/server/events"
	"github.com/cairn-dev/cairn/server/route"
	"github.com/cairn-dev/cairn/server/service"
)

// eventsRoute builds the live events stream (Serve runs its listener,
// which also serves channels) and declares its route.
func (s *Server) eventsRoute(svc *service.Service, channels map[string]func(string)) (route.Route, error) {
	ev, err := events.New(events.Config{
		Store: s.db,
		// The LISTEN session is named after this server's API address, so
		// pg_stat_activity tells the replicas' listeners apart.
		Connect: func(ctx context.Context) (*pgx.Conn, error) {
			return s.db.ListenConn(ctx, "cairn-events "+s.APIAddr())
		},
		Registerer:      s.registry,
		Logger:          s.log,
		RequestIDHeader: s.cfg.API.APIs.RequestLogging.RequestIDHeader,
		Files:           fileWatcher{svc},
		Channels:        channels,
	})
	if err != nil {
		return route.Route{}, err
	}
	s.events = ev
	return route.Route{Method: "GET", Path: "/v1/events", Scope: route.Read, Handler: ev}, nil
}

// fileWatcher gives the events stream the service's file watches.
type fileWatcher struct{ svc *service.Service }

func (f fileWatcher) WatchFiles(ctx context.Context, workspaceID, path, cursor string) (events.FileFeed, error) {
	w, err := f.svc.WatchFiles(ctx, workspaceID, path, cursor)
	if err != nil {
		return nil, err
	}
	return w, nil
}
