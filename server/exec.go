package server

import (
	"context"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/rest"
	"github.com/cairn-dev/cairn/server/service"
)

// execREST builds the exec rules over the shell runtime, with the shell's
// settings (an exec exists only with the shell enabled, and counts against
// its caps with a counter of its own), and returns what the exec route
// needs; empty without the shell rules (a maintainer-only process).
func (s *Server) execREST(svc *service.Service) rest.ExecConfig {
	if s.shells == nil {
		return rest.ExecConfig{}
	}
	s.execs = service.NewExecs(svc, s.shellRuntime, s.sessionConfig())
	return rest.ExecConfig{Service: execDoor{s.execs}, AllowedOrigins: s.cfg.API.CORS.AllowedOrigins}
}

// execDoor gives the service's sessions the front door's session type.
type execDoor struct{ *service.Execs }

func (d execDoor) OpenExec(ctx context.Context, o cairn.ExecOpen) (rest.ExecSession, error) {
	return door[rest.ExecSession](d.Execs.OpenExec(ctx, o))
}

// runExecs runs the exec reaper until ctx is done, then ends every exec
// (server_shutdown) before it returns: net/http's Shutdown neither closes
// nor waits for hijacked connections. Nil without the exec rules.
func (s *Server) runExecs(ctx context.Context) error {
	if s.execs == nil {
		return nil
	}
	err := s.execs.RunReaper(ctx)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.shutdownGrace())
	defer cancel()
	s.execs.Shutdown(sctx)
	return err
}
