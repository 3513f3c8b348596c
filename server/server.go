// Package server wires one cairn server process: the adapters, the service,
// the front doors and their listeners.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/client"
	"github.com/prometheus/client_golang/prometheus"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/sync/errgroup"

	"github.com/cairn-dev/cairn/server/auth"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/events"
	"github.com/cairn-dev/cairn/server/mcp"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/reconcile"
	"github.com/cairn-dev/cairn/server/rest"
	"github.com/cairn-dev/cairn/server/route"
	"github.com/cairn-dev/cairn/server/s3"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/server/service/webhook"
	"github.com/cairn-dev/cairn/server/sshui"
)

// Secrets are the credentials that never live in the config file.
type Secrets struct {
	SQLPassword string
	S3AccessKey string
	S3SecretKey string
}

// Options are the process-level switches of a server.
type Options struct {
	Migrate bool   // apply the embedded schema before serving
	Version string // the binary's version, reported by the MCP endpoint
	// Maintainer runs the reconciler loop in this process
	// (--with-maintainer); MaintainerOnly serves no API (cairn maintainer).
	Maintainer     bool
	MaintainerOnly bool
	// Instance labels every container this process creates (cairn.instance),
	// and the maintainer's leak sweep takes such containers as its own
	// besides those of its own database's workspaces; cairn dev sets one
	// per state dir. Optional.
	Instance string
	Logger   *slog.Logger
}

// Server is one running cairn server.
type Server struct {
	cfg       Config
	instance  string
	version   string
	log       *slog.Logger
	db        *postgres.DB
	docker    *client.Client
	api       *http.Server
	apiLn     net.Listener
	metrics   *http.Server
	metricsLn net.Listener
	registry  *prometheus.Registry
	routes    []route.Route // every route the API listener serves
	// streamUploads: a "stream" mint is served — the store hashes what a
	// PUT carries (its integrity probe found so), or the server does.
	streamUploads bool

	reconciler *reconcile.Reconciler
	events     *events.Events // the live events stream; nil without an API listener
	webhooks   *webhook.Dispatcher
	maintain   bool // run the reconciler's leader loop

	runtime       engineRuntime
	shells        *service.Shells // the shell rules; nil without an API listener
	shellRuntime  engineShells
	shellInstance string // shell.instanceName, resolved

	execs *service.Execs // the exec rules; nil without an API listener

	guard *auth.Guard   // the API's access control; nil without an API listener
	ssh   *sshui.Server // the workbench over SSH; nil unless ssh.listen is set
	sshLn net.Listener
}

// Open connects every dependency, checks the sidecar image, and binds the
// API listener. Serve starts answering; Close releases everything.
func Open(ctx context.Context, cfg Config, secrets Secrets, opts Options) (s *Server, err error) {
	s = &Server{cfg: cfg, instance: opts.Instance, version: opts.Version, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)),
		registry: newRegistry(cfg.Metrics)}
	if err := auth.CheckExposure(cfg.Auth.credentials(), cfg.Loopback(), cfg.Auth.InsecureNoAuth, s.log); err != nil {
		return nil, err
	}
	opened := s // "return nil, err" clears s before this runs
	defer func() {
		if err != nil {
			opened.Close()
		}
	}()
	dsn := DatabaseURL(cfg.Persistence.SQL.App, secrets.SQLPassword)
	if opts.Migrate {
		if _, err := postgres.Migrate(ctx, dsn); err != nil {
			return nil, err
		}
	}
	if s.db, err = postgres.Open(ctx, dsn); err != nil {
		return nil, err
	}
	var runtime engineRuntime
	metrics := newTransferMetrics(s.registry, func() int { return runtime.Running() })
	if runtime, err = s.openRuntime(metrics.sidecar); err != nil {
		return nil, err
	}
	s.runtime = runtime
	if err := runtime.CheckImage(ctx); err != nil {
		return nil, err
	}
	objects, err := s.openStore(secrets)
	if err != nil {
		return nil, err
	}
	svcCfg := s.serviceConfig()
	svcCfg.OnTransfer = metrics.transfer
	svcCfg.Deliveries = s.db
	svcCfg.Snapshots = s.db
	svcCfg.LifecycleStore = s.db
	svcCfg.Lifecycle = lifecycleConfig(s.cfg.Lifecycle)
	if s.webhooks, err = s.openWebhooks(); err != nil {
		return nil, err
	}
	svc := service.New(s.db, runtime, objects, svcCfg)
	if err := s.checkIntegrity(ctx, objects, svc.ProbePrefix()); err != nil {
		return nil, err
	}
	if err := s.openShells(ctx, svc, opts.MaintainerOnly); err != nil {
		return nil, err
	}
	pinCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := svc.PinKeyPrefixes(pinCtx); err != nil {
		s.log.Warn("could not pin the key prefixes; puts may race deletes on file-backed stores", "err", err)
	}
	rc := s.reconcileConfig()
	rc.Leftovers = svc.Leftovers()
	rc.Lifecycle = svc
	s.reconciler = reconcile.New(s.db, objects, runtime, reconcile.JoinVolumes(runtime, svc), rc)
	s.maintain = opts.Maintainer || opts.MaintainerOnly
	s.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "cairn_reconcile_leader", Help: "Whether this process holds the maintainer's leader lock (1) or not (0).",
	}, func() float64 {
		if s.reconciler.Leader() {
			return 1
		}
		return 0
	}))
	s.metrics = s.metricsServer(svc, opts.MaintainerOnly)
	if !opts.MaintainerOnly {
		if s.api, err = s.apiServer(svc); err != nil {
			return nil, err
		}
		if s.apiLn, err = new(net.ListenConfig).Listen(ctx, "tcp", cfg.APIAddr()); err != nil {
			return nil, fmt.Errorf("listen on %s: %w", cfg.APIAddr(), err)
		}
		if err := s.openSSH(ctx, svc); err != nil {
			return nil, err
		}
	}
	if s.metricsLn, err = new(net.ListenConfig).Listen(ctx, "tcp", cfg.MetricsAddr()); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.MetricsAddr(), err)
	}
	return s, nil
}

// openStore builds the object store adapter; it makes no call.
func (s *Server) openStore(secrets Secrets) (*s3.Store, error) {
	return s3.New(s3.Config{
		Endpoint:        s.cfg.EndpointURL(),
		PresignEndpoint: s.cfg.PresignEndpointURL(),
		Region:          s.cfg.Artifact.S3.Region,
		Bucket:          s.cfg.Artifact.Store.Bucket,
		AccessKey:       secrets.S3AccessKey,
		SecretKey:       secrets.S3SecretKey,
	})
}

func (s *Server) runtimeConfig() docker.Config {
	sc := s.cfg.Artifact.Sidecar
	env := make(map[string]string, len(sc.Envs))
	for _, e := range sc.Envs {
		env[e.Name] = e.Value
	}
	hosts := make([]string, 0, len(sc.Hosts))
	for _, h := range sc.Hosts {
		hosts = append(hosts, h.Host+":"+h.Address)
	}
	return docker.Config{
		AppName:       s.cfg.AppName,
		Instance:      s.instance,
		Image:         sc.Image,
		Timeout:       time.Duration(sc.TimeoutSecs) * time.Second,
		NetworkMode:   sc.NetworkMode,
		ExtraHosts:    hosts,
		ExtraEnv:      env,
		MaxConcurrent: sc.MaxConcurrent,
		MaxBrowsers:   s.cfg.Files.Browse.MaxContainers,
		BrowseIdle:    time.Duration(s.cfg.Files.Browse.IdleSecs) * time.Second,
		Logger:        s.log,
	}
}

func (s *Server) reconcileConfig() reconcile.Config {
	store := s.cfg.Artifact.Store
	return reconcile.Config{
		AppName:        s.cfg.AppName,
		Instance:       s.instance,
		Keys:           service.KeyPrefixes{Base: store.Prefix.Base, Staging: store.Prefix.Staging, Store: store.Prefix.Store},
		Interval:       time.Duration(s.cfg.Maintenance.SweepIntSec) * time.Second,
		ObjAgeOut:      time.Duration(s.cfg.Maintenance.ObjAgeOutSec) * time.Second,
		SidecarTimeout: time.Duration(s.cfg.Artifact.Sidecar.TimeoutSecs) * time.Second,
		Logger:         s.log,
		OnPass:         newReconcileMetrics(s.registry).observe,
		Shells:         s.shellRuntime,
		// The sweep's "created too long" rule counts from the open timeout.
		ShellOpenTimeout: time.Duration(s.cfg.Shell.Timeouts.OpenSecs) * time.Second,
	}
}

func (s *Server) serviceConfig() service.Config {
	store := s.cfg.Artifact.Store
	return service.Config{
		AppName:            s.cfg.AppName,
		Keys:               service.KeyPrefixes{Base: store.Prefix.Base, Staging: store.Prefix.Staging, Store: store.Prefix.Store},
		MaxObjectSize:      store.MaxObjectSize,
		MultipartThreshold: store.MultipartThreshold,
		PartSize:           store.PartSize,
		RegisterWindow:     registerWindow(s.cfg.Maintenance),
		PutURLTTL:          time.Duration(store.PutURLTTLSecs) * time.Second,
		GetURLMaxTTL:       time.Duration(store.GetURLMaxTTLSecs) * time.Second,
		SidecarTimeout:     time.Duration(s.cfg.Artifact.Sidecar.TimeoutSecs) * time.Second,
		Unpack: service.UnpackLimits{MaxEntries: s.cfg.Files.Unpack.MaxEntries, MaxBytes: s.cfg.Files.Unpack.MaxBytes,
			MaxRatio: s.cfg.Files.Unpack.MaxRatio},
		VerifyObjects: s.cfg.Artifact.S3.Verify == VerifyByServer,
		MaxFileWrite:  s.cfg.Files.Write.MaxBytes,
		WatchPoll:     time.Duration(s.cfg.Files.Watch.PollMillis) * time.Millisecond,
		Logger:        s.log,
	}
}

func (s *Server) apiServer(svc *service.Service) (*http.Server, error) {
	logging := s.cfg.API.APIs.RequestLogging
	t := s.cfg.API.Service.TimeoutSecs
	api := rest.New(svc, rest.Config{
		RequestIDHeader: logging.RequestIDHeader,
		RequestTimeout:  requestTimeout(t),
		LogLevel:        logLevel(logging.LogLevel),
		HealthLogLevel:  logLevel(logging.HealthLogLevel),
		Logger:          s.log,
		Maintenance:     s.reconciler,
		Shell:           s.shellREST(),
		Exec:            s.execREST(svc),
		Info:            s.info(svc),
		MaxFileWrite:    s.cfg.Files.Write.MaxBytes,
	})
	// The MCP requests in flight here; a cancel that reaches another
	// replica is handed over through the database.
	calls := mcp.NewCalls(func(ctx context.Context, payload string) error {
		return s.db.Notify(ctx, mcp.CancelChannel, payload)
	}, s.log)
	s.routes = append(api.Routes(), mcp.Routes(svc, mcp.Config{
		Enable:      s.cfg.API.APIs.MCP.Enable,
		Version:     s.version,
		Logger:      s.log,
		LogLevel:    logLevel(logging.LogLevel),
		CallTimeout: requestTimeout(t),
		Origins:     s.cfg.API.APIs.MCP.AllowedOrigins,
		Calls:       calls,
	})...)
	eventsRoute, err := s.eventsRoute(svc, map[string]func(string){mcp.CancelChannel: calls.Receive})
	if err != nil {
		return nil, err
	}
	s.routes = append(s.routes, eventsRoute)
	guard, err := auth.New(s.authConfig())
	if err != nil {
		return nil, err
	}
	s.guard = guard
	s.routes = append(s.routes, guard.DiscoveryRoutes()...)
	handler, err := guard.Mount(s.cfg.API.APIs.EndPoint.PathPrefix, s.routes)
	if err != nil {
		return nil, err
	}
	if s.cfg.Metrics.Features.EnableHTTPMetrics {
		handler = newHTTPMetrics(s.registry).wrap(handler)
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:      handler,
		ReadTimeout:  time.Duration(t.Read) * time.Second,
		WriteTimeout: time.Duration(t.Write) * time.Second,
		IdleTimeout:  time.Duration(t.Idle) * time.Second,
		Protocols:    protocols,
		ErrorLog:     slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}, nil
}

// authConfig maps the config onto the access-control decorator's settings.
func (s *Server) authConfig() auth.Config {
	tokens := make([]auth.Token, 0, len(s.cfg.Auth.Tokens))
	for _, t := range s.cfg.Auth.Tokens {
		scopes := make([]route.Scope, 0, len(t.Scopes))
		for _, sc := range t.Scopes {
			scopes = append(scopes, route.Scope(sc))
		}
		tokens = append(tokens, auth.Token{Name: t.Name, SHA256: t.SHA256, Scopes: scopes})
	}
	apis := s.cfg.API.APIs
	// The protected resource discovery describes is the MCP endpoint: none
	// while it is off.
	var discovery *auth.Discovery
	if apis.MCP.Enable {
		discovery = &auth.Discovery{
			Path:                 strings.TrimRight(apis.EndPoint.PathPrefix, "/") + mcp.Path,
			Resource:             s.cfg.Auth.OAuth.Resource,
			AuthorizationServers: s.cfg.Auth.OAuth.AuthorizationServers,
		}
	}
	// Access tokens are accepted whether or not the MCP endpoint is on.
	var oauth *auth.OAuth
	if o := s.cfg.Auth.OAuth; o.acceptsTokens() {
		oauth = &auth.OAuth{Issuers: o.AuthorizationServers, Audience: o.audience()}
	}
	return auth.Config{
		OAuth:           oauth,
		Tokens:          tokens,
		AllowedOrigins:  s.cfg.API.CORS.AllowedOrigins,
		HostGuard:       apis.MCP.EnableDNSRebindGuard,
		RequestIDHeader: apis.RequestLogging.RequestIDHeader,
		Logger:          s.log,
		Discovery:       discovery,
	}
}

// metricsServer serves the metrics path; a maintainer-only process also
// answers its liveness probes there, having no API listener.
func (s *Server) metricsServer(svc *service.Service, maintainerOnly bool) *http.Server {
	t := s.cfg.Metrics.Service.TimeoutSecs
	var probes func(*http.ServeMux)
	if maintainerOnly {
		probes = func(mux *http.ServeMux) { maintainerProbes(mux, svc, s.reconciler) }
	}
	return &http.Server{
		Handler:      metricsHandler(s.registry, s.cfg.Metrics, probes),
		ReadTimeout:  time.Duration(t.Read) * time.Second,
		WriteTimeout: time.Duration(t.Write) * time.Second,
		IdleTimeout:  time.Duration(t.Idle) * time.Second,
	}
}

// APIAddr is the address the API listener is bound to (useful with port 0);
// "" in a maintainer-only process.
func (s *Server) APIAddr() string {
	if s.apiLn == nil {
		return ""
	}
	return s.apiLn.Addr().String()
}

// Routes lists the routes the API listener serves, as mounted (empty in a
// maintainer-only process).
func (s *Server) Routes() []route.Route { return s.routes }

// MetricsAddr is the address the metrics listener is bound to.
func (s *Server) MetricsAddr() string { return s.metricsLn.Addr().String() }

// Serve answers requests until ctx is done or a listener fails, then shuts
// down gracefully.
func (s *Server) Serve(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	if s.api != nil {
		g.Go(func() error {
			if err := s.api.Serve(s.apiLn); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("api listener: %w", err)
			}
			return nil
		})
	}
	if s.ssh != nil {
		g.Go(func() error {
			if err := s.ssh.Serve(s.sshLn); err != nil {
				return fmt.Errorf("ssh listener: %w", err)
			}
			return nil
		})
	}
	if s.maintain {
		g.Go(func() error { return s.reconciler.Run(gctx) })
	}
	if s.events != nil {
		g.Go(func() error { return s.events.Run(gctx) })
	}
	g.Go(func() error { return s.webhooks.Run(gctx) })
	g.Go(func() error { return s.runShellReaper(gctx) })
	g.Go(func() error { return s.runExecs(gctx) })
	g.Go(func() error {
		if err := s.metrics.Serve(s.metricsLn); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("metrics listener: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		return s.shutdown(context.WithoutCancel(ctx))
	})
	return g.Wait()
}

// openWebhooks reads the webhooks' secrets and makes their dispatcher.
func (s *Server) openWebhooks() (*webhook.Dispatcher, error) {
	hooks, err := s.cfg.webhookHooks()
	if err != nil {
		return nil, err
	}
	return webhook.New(webhook.Config{Hooks: hooks, Store: s.db, Log: s.log, Version: s.version, Registerer: s.registry})
}

// browseCloseTimeout bounds the removal of the browse containers at
// shutdown, after the grace.
const browseCloseTimeout = 30 * time.Second

// shutdownGrace is server.shutdownGraceSecs: what a stop gives the work in
// flight.
func (s *Server) shutdownGrace() time.Duration {
	return time.Duration(s.cfg.Server.ShutdownGraceSecs) * time.Second
}

// shutdown stops the front doors within the grace. The API stops
// accepting connections at once, while the shells end: a request that
// arrives during the stop is refused rather than served by a process on
// its way out. Only the SSH sessions come first, since their programs
// talk to the API until they end. A request still running when the
// grace is over has its connection closed: the stop is still orderly,
// so it is logged, not returned.
func (s *Server) shutdown(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, s.shutdownGrace())
	defer cancel()
	var sshErr error
	if s.ssh != nil {
		sshErr = s.ssh.Shutdown(sctx)
	}
	apiDone := make(chan struct{})
	go func() {
		defer close(apiDone)
		s.stopAPI(sctx)
	}()
	s.shutdownShells(sctx)
	<-apiDone
	// After the API: no request is left to start a browse container. Its
	// own bound: a grace spent on requests must not leave them behind.
	bctx, bcancel := context.WithTimeout(ctx, browseCloseTimeout)
	defer bcancel()
	if err := s.runtime.CloseBrowsers(bctx); err != nil {
		s.log.Warn("remove the browse containers", "err", err)
	}
	return errors.Join(sshErr, s.metrics.Shutdown(sctx))
}

// stopAPI shuts the API listener and waits for the requests in flight
// until ctx is done, then closes the connections of those left.
func (s *Server) stopAPI(ctx context.Context) {
	if s.api == nil {
		return
	}
	if err := s.api.Shutdown(ctx); err != nil {
		s.log.Warn("requests still running when the shutdown grace ended; their connections are closed",
			"grace", s.shutdownGrace(), "err", err)
		_ = s.api.Close() // the warning above is the account
	}
}

// Close releases the dependencies. Call it after Serve returned.
func (s *Server) Close() {
	if s.apiLn != nil {
		s.apiLn.Close()
	}
	if s.metricsLn != nil {
		s.metricsLn.Close()
	}
	if s.sshLn != nil {
		s.sshLn.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
	if s.docker != nil {
		s.docker.Close()
	}
}

// SSHAddr is the address the SSH listener is bound to; "" when ssh.listen
// is not set.
func (s *Server) SSHAddr() string {
	if s.sshLn == nil {
		return ""
	}
	return s.sshLn.Addr().String()
}

// SSHSessions counts the workbench sessions being served now.
func (s *Server) SSHSessions() int {
	if s.ssh == nil {
		return 0
	}
	return s.ssh.Open()
}

// openSSH builds the workbench over SSH and binds its listener, when
// ssh.listen is set. Its sessions reach the API over loopback with tokens
// the guard mints for them.
func (s *Server) openSSH(ctx context.Context, svc *service.Service) error {
	c := s.cfg.SSH
	if !s.cfg.SSHEnabled() {
		return nil
	}
	keys := make([]sshui.Key, 0, len(c.AuthorizedKeys))
	for _, k := range c.AuthorizedKeys {
		pub, _, _, _, err := gossh.ParseAuthorizedKey([]byte(k.Key))
		if err != nil {
			return fmt.Errorf("ssh.authorizedKeys %s: %w", k.Name, err)
		}
		scopes := make([]route.Scope, 0, len(k.Scopes))
		for _, sc := range k.Scopes {
			scopes = append(scopes, route.Scope(sc))
		}
		keys = append(keys, sshui.Key{Name: k.Name, PublicKey: pub, Scopes: scopes})
	}
	srv, err := sshui.New(sshui.Config{
		Keys: keys, HostKeyPath: c.HostKeyPath, APIURL: s.loopbackAPIURL(),
		MaxSessions: c.MaxSessions, MaxSessionsPerKey: c.MaxSessionsPerKey,
		IdleTimeout: time.Duration(c.IdleTimeoutSecs) * time.Second,
		MaxLifetime: time.Duration(c.MaxLifetimeSecs) * time.Second,
		Tokens:      s.guard, Audit: svc, Version: s.version, Logger: s.log,
	})
	if err != nil {
		return err
	}
	if s.sshLn, err = new(net.ListenConfig).Listen(ctx, "tcp", c.Listen); err != nil {
		return fmt.Errorf("listen on %s: %w", c.Listen, err)
	}
	s.ssh = srv
	return nil
}

// loopbackAPIURL is the API as this process reaches it: the bound port on
// 127.0.0.1 when the listener takes every address, with the path prefix.
func (s *Server) loopbackAPIURL() string {
	ap, err := netip.ParseAddrPort(s.apiLn.Addr().String())
	host := s.apiLn.Addr().String()
	if err == nil && ap.Addr().IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ap.Port())))
	}
	return "http://" + host + strings.TrimSuffix(s.cfg.API.APIs.EndPoint.PathPrefix, "/")
}

// hostConnectTimeoutSecs bounds one connection attempt to one of
// persistence.sql.app.hosts.
const hostConnectTimeoutSecs = 5

// DatabaseURL builds the connection URL; the password is escaped, never
// logged.
func DatabaseURL(c SQLAppConfig, password string) string {
	u := url.URL{
		Scheme: "postgres",
		User:   url.UserPassword(c.User, password),
		Host:   net.JoinHostPort(c.Host, fmt.Sprint(c.Port)),
		Path:   "/" + c.DB,
	}
	q := url.Values{}
	if len(c.Hosts) > 0 {
		// pgx tries the hosts in order and keeps the first that takes
		// writes; every new connection asks again, so after a failover the
		// pools find the promoted standby. A host that does not answer at
		// all (its machine gone, rather than its port closed) holds each
		// new connection up for the timeout before the next is tried.
		u.Host = strings.Join(c.Hosts, ",")
		q.Set("target_session_attrs", "read-write")
		q.Set("connect_timeout", strconv.Itoa(hostConnectTimeoutSecs))
	}
	if c.SSL.Enabled {
		q.Set("sslmode", "verify-full")
		q.Set("sslrootcert", c.SSL.CAFile)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// requestTimeout is the deadline of one request's work: a few seconds under
// the write timeout, so a late answer still reaches the client.
func requestTimeout(t Timeouts) time.Duration {
	return max(time.Duration(t.Write)*time.Second-5*time.Second, time.Second)
}

func logLevel(s string) slog.Level {
	switch s {
	case "debug":
		return slog.LevelDebug
	case "info":
		return slog.LevelInfo
	default:
		return slog.LevelWarn
	}
}

// Migrate applies the embedded schema to the configured database.
func Migrate(ctx context.Context, cfg Config, sqlPassword string) (int32, error) {
	return postgres.Migrate(ctx, DatabaseURL(cfg.Persistence.SQL.App, sqlPassword))
}

// registerWindow is how long after its upload an object may be registered:
// the reaper's grace for never-referenced objects less a margin, so that a
// register never inserts a row for an object the reaper is deleting.
func registerWindow(m MaintenanceConfig) time.Duration {
	return time.Duration(m.ObjAgeOutSec-putURLGraceSecs) * time.Second
}

// lifecycleConfig is the lifecycle config as the service takes it.
func lifecycleConfig(l LifecycleConfig) service.LifecycleConfig {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	return service.LifecycleConfig{DefaultTTL: sec(l.DefaultTTLSecs), WarnBefore: sec(l.WarnBeforeSecs),
		ArchiveIdleAfter: sec(l.ArchiveIdleAfterSecs)}
}
