package server

import (
	"cmp"
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/rest"
	"github.com/cairn-dev/cairn/server/service"
)

// openShells applies the shell's start-up rules and builds
// the shell runtime, which the maintainer's sweep uses too, and — in a
// process serving the API — the shell rules. A missing image is refused
// only with the shell enabled.
func (s *Server) openShells(ctx context.Context, svc *service.Service, maintainerOnly bool) error {
	sc := s.cfg.Shell
	s.shellInstance = shellInstanceName(sc.InstanceName, s.cfg.API.Service.AppPort)
	var err error
	if s.shellRuntime, err = s.openShellRuntime(); err != nil {
		return err
	}
	if maintainerOnly {
		return nil
	}
	if s.cfg.ShellExposed() {
		return errShellExposed
	}
	if sc.Enable {
		if err := s.shellRuntime.CheckImage(ctx); err != nil {
			return err
		}
	}
	m := newShellMetrics(s.registry)
	t := sc.Timeouts
	s.shells = service.NewShells(svc, s.shellRuntime, service.ShellConfig{
		SessionConfig: s.sessionConfig(),
		IdleTimeout:   seconds(t.IdleSecs),
		IdleWarning:   warning(t.IdleWarningSecs),
		Detached:      seconds(t.DetachedSecs),
		Scrollback:    sc.Replay.ScrollbackLines,
		Record:        service.ShellRecording{Enabled: sc.Record.Enable, MaxBytes: sc.Record.MaxBytes, Dir: sc.Record.Dir},
		OnOpen:        m.open,
		OnEnd:         m.end,
		OnReap:        m.reap,
	})
	m.live(s.shells.Live)
	return nil
}

// sessionConfig is what every container session, a shell or an exec,
// runs under: shell.enable, the instance, the caps and the timeouts.
func (s *Server) sessionConfig() service.SessionConfig {
	sc := s.cfg.Shell
	t := sc.Timeouts
	return service.SessionConfig{
		Enabled:                 sc.Enable,
		Instance:                s.shellInstance,
		MaxSessions:             sc.Limits.MaxSessions,
		MaxSessionsPerWorkspace: sc.Limits.MaxSessionsPerWorkspace,
		OpenTimeout:             seconds(t.OpenSecs),
		MaxLifetime:             seconds(t.MaxLifetimeSecs),
		PingInterval:            seconds(t.PingIntervalSecs),
		PongWait:                seconds(t.PongWaitSecs),
		WriteWait:               seconds(t.WriteWaitSecs),
		StopTimeout:             seconds(t.StopSecs),
		DrainTimeout:            seconds(t.DrainSecs),
		ReapInterval:            seconds(sc.ReapIntervalSecs),
		Logger:                  s.log,
	}
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// warning maps idleWarningSecs onto ptyshell's convention: 0 there means
// the default, a negative value none.
func warning(secs int) time.Duration {
	if secs == 0 {
		return -1
	}
	return time.Duration(secs) * time.Second
}

func (s *Server) dockerShellConfig() docker.ShellConfig {
	sc := s.cfg.Shell
	env := make([]string, 0, len(sc.Envs))
	for _, e := range sc.Envs {
		env = append(env, e.Name+"="+e.Value)
	}
	return docker.ShellConfig{
		AppName: s.cfg.AppName, Instance: s.shellInstance, Image: sc.Image, Entrypoint: sc.Entrypoint,
		Umask: sc.Umask, User: sc.User, Env: env, NetworkMode: sc.NetworkMode, DetachKeys: sc.DetachKeys,
		MemoryMiB: int64(sc.Limits.MemoryMiB), CPUs: sc.Limits.CPUs, Pids: int64(sc.Limits.Pids),
		Nofile: int64(sc.Limits.Nofile), TmpfsMiB: int64(sc.Limits.TmpfsMiB), StopSecs: sc.Timeouts.StopSecs,
		SidecarImage: s.cfg.Artifact.Sidecar.Image, Logger: s.log,
	}
}

// shellInstanceName is shell.instanceName, else <hostname>:<api port>:
// unique among live servers sharing a daemon, and stable across restarts.
// A kernel-chosen port (0) is not stable, so it gets a random suffix
// instead: two such servers must never take each other's shells.
func shellInstanceName(configured string, port int) string {
	if configured != "" {
		return configured
	}
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	if port == 0 {
		return net.JoinHostPort(host, "0-"+strings.ToLower(ulid.Make().String()[16:]))
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// shellREST is what the REST front door needs to serve the shell routes;
// empty in a maintainer-only process.
func (s *Server) shellREST() rest.ShellConfig {
	if s.shells == nil {
		return rest.ShellConfig{}
	}
	return rest.ShellConfig{Service: shellDoor{s.shells}, AllowedOrigins: s.cfg.API.CORS.AllowedOrigins,
		V2: shellDoor{s.shells}}
}

// shellDoor gives the service's sessions the front door's session type.
type shellDoor struct{ *service.Shells }

func (d shellDoor) OpenShell(ctx context.Context, o cairn.ShellOpen) (rest.ShellSession, error) {
	return door[rest.ShellSession](d.Shells.OpenShell(ctx, o))
}

func (d shellDoor) AttachShell(ctx context.Context, id, secret string, size ptyshell.Size, addr string) (rest.ShellBridge, error) {
	return door[rest.ShellBridge](d.Shells.AttachShell(ctx, id, secret, size, addr))
}

func (d shellDoor) WatchShell(ctx context.Context, id, addr string) (rest.ShellBridge, error) {
	return door[rest.ShellBridge](d.Shells.WatchShell(ctx, id, addr))
}

// door hands what the service opened (a session, an attachment) to the
// front door as its interface I: an error leaves I nil, never an
// interface holding a nil pointer.
func door[I any, S any](opened *S, err error) (I, error) {
	var none I
	if err != nil {
		return none, err
	}
	return any(opened).(I), nil
}

// The service's sessions are the front door's.
var (
	_ rest.ShellSession = (*service.ShellSession)(nil)
	_ rest.ShellBridge  = (*service.ShellAttachment)(nil)
	_ rest.ExecSession  = (*service.ExecSession)(nil)
)

// runShellReaper is the server-side reaper; nil without the shell rules.
func (s *Server) runShellReaper(ctx context.Context) error {
	if s.shells == nil {
		return nil
	}
	return s.shells.RunReaper(ctx)
}

// shutdownShells ends every shell before the HTTP shutdown, which neither
// closes nor waits for hijacked connections.
func (s *Server) shutdownShells(ctx context.Context) {
	if s.shells != nil {
		s.shells.Shutdown(ctx)
	}
}

// shellMetrics are the shell's metrics.
type shellMetrics struct {
	reg      prometheus.Registerer
	opens    *prometheus.CounterVec
	openTime prometheus.Histogram
	ends     *prometheus.CounterVec
	bytes    *prometheus.CounterVec
	reaped   *prometheus.CounterVec
}

func newShellMetrics(reg prometheus.Registerer) *shellMetrics {
	m := &shellMetrics{
		reg: reg,
		opens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_shell_opens_total",
			Help: "Shell opens by result: ok, or the reason of the refusal."}, []string{"result"}),
		openTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "cairn_shell_open_seconds",
			Help: "Seconds from a shell request to its shell running.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 10)}),
		ends: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_shell_ends_total",
			Help: "Shell sessions ended, by reason."}, []string{"reason"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_shell_bytes_total",
			Help: "Bytes through shell sessions, by direction (in: typed, out: shown)."}, []string{"direction"}),
		reaped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_shell_reaped_total",
			Help: "Leftover shell containers removed, by reaper."}, []string{"by"}),
	}
	reg.MustRegister(m.opens, m.openTime, m.ends, m.bytes, m.reaped)
	return m
}

// live registers the gauges of live sessions: cairn_shell_sessions and
// cairn_shells_live, one count under the two names docs/operations.md lists.
func (m *shellMetrics) live(count func() int) {
	for _, name := range []string{"cairn_shell_sessions", "cairn_shells_live"} {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name,
			Help: "Shell sessions of this process, opening ones included."}, func() float64 { return float64(count()) }))
	}
}

func (m *shellMetrics) open(result string, took time.Duration) {
	m.opens.WithLabelValues(cmp.Or(result, "internal")).Inc()
	if result == "ok" {
		m.openTime.Observe(took.Seconds())
	}
}

func (m *shellMetrics) end(reason string, in, out int64) {
	m.ends.WithLabelValues(reason).Inc()
	m.bytes.WithLabelValues("in").Add(float64(in))
	m.bytes.WithLabelValues("out").Add(float64(out))
}

func (m *shellMetrics) reap(by string, n int) { m.reaped.WithLabelValues(by).Add(float64(n)) }
