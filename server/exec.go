package server

import (
	"context"
	"time"

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
	sc := s.cfg.Shell
	t := sc.Timeouts
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	s.execs = service.NewExecs(svc, s.shellRuntime, service.ExecConfig{
		Enabled:                 sc.Enable,
		Instance:                s.shellInstance,
		MaxSessions:             sc.Limits.MaxSessions,
		MaxSessionsPerWorkspace: sc.Limits.MaxSessionsPerWorkspace,
		OpenTimeout:             sec(t.OpenSecs),
		MaxLifetime:             sec(t.MaxLifetimeSecs),
		PingInterval:            sec(t.PingIntervalSecs),
		PongWait:                sec(t.PongWaitSecs),
		WriteWait:               sec(t.WriteWaitSecs),
		StopTimeout:             sec(t.StopSecs),
		DrainTimeout:            sec(t.DrainSecs),
		ReapInterval:            sec(sc.ReapIntervalSecs),
		Logger:                  s.log,
	})
	return rest.ExecConfig{Service: execDoor{s.execs}, AllowedOrigins: s.cfg.API.CORS.AllowedOrigins}
}

// execDoor gives the service's sessions the front door's session type.
type execDoor struct{ *service.Execs }

func (d execDoor) OpenExec(ctx context.Context, o cairn.ExecOpen) (rest.ExecSession, error) {
	sess, err := d.Execs.OpenExec(ctx, o)
	if err != nil {
		return nil, err
	}
	return sess, nil
}

// runExecs runs the exec reaper until ctx is done, then ends every exec
// (server_shutdown) before it returns: net/http's Shutdown neither closes
// nor waits for hijacked connections. Nil without the exec rules.
func (s *Server) runExecs(ctx context.Context) error {
	if s.execs == nil {
		return nil
	}
	err := s.execs.RunReaper(ctx)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	s.execs.Shutdown(sctx)
	return err
}
