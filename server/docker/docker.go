// Package docker is the Docker Engine adapter of service.Runtime: workspace
// volumes, and sidecar containers run with a hardened posture. Engine
// errors are translated here; nothing Docker-specific leaves the package.
package docker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

var _ service.Runtime = (*Runtime)(nil)

// Config holds the runtime's settings; zero values take defaults.
type Config struct {
	AppName string // default "cairn"
	// Instance, when set, labels every container this runtime creates, so
	// that one stack's leftovers are told from another's that shares the
	// engine and the app name (cairn dev sets one per state dir).
	Instance      string
	Image         string            // sidecar image; default "cairn-sidecar:latest"
	Timeout       time.Duration     // per sidecar run; default 300 s
	NetworkMode   string            // transfer sidecars; default "bridge"
	ExtraHosts    []string          // "host:address", transfer sidecars only
	ExtraEnv      map[string]string // transfer sidecars only; never CAIRN_*
	MaxConcurrent int               // sidecars at once; default 8
	// MaxBrowsers bounds the warm browse containers;
	// when all are taken, the least recently used idle one is stopped.
	// Default 16.
	MaxBrowsers int
	// BrowseIdle is how long a browse container is kept without a request;
	// default 60 s. Its lifetime is Timeout, so the maintainer's sweep of
	// sidecars older than Timeout + 60 s never meets a live one.
	BrowseIdle time.Duration
	// BrowseTimeout bounds one browse request (with the caller's own
	// deadline, whichever is sooner); default 30 s.
	BrowseTimeout time.Duration
	Logger        *slog.Logger
	// OnSidecar, when set, sees every sidecar run end: its command, result
	// (ok, failed: a non-zero exit, timeout, or error: the engine failed)
	// and how long it ran. The seam for metrics.
	OnSidecar func(command, result string, took time.Duration)
}

// Runtime runs cairn's volumes, sidecars and browse containers on one
// Docker Engine. Its owner calls CloseBrowsers on shutdown.
type Runtime struct {
	cli    *client.Client
	cfg    Config
	slots  chan struct{}
	log    *slog.Logger
	browse *browsers
	// watches are the running watch containers, ended by StopBrowse.
	watches service.Watchers
	now     func() time.Time
	// leftovers are the containers whose removal failed, retried.
	leftovers leftovers
}

// Connect returns an engine client from the standard Docker environment,
// negotiating the API version (the engine may be older than the SDK).
func Connect() (*client.Client, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return cli, nil
}

// New returns a Runtime over cli.
func New(cli *client.Client, cfg Config) *Runtime {
	cfg.AppName = cmp.Or(cfg.AppName, "cairn")
	cfg.Image = cmp.Or(cfg.Image, "cairn-sidecar:latest")
	cfg.Timeout = cmp.Or(cfg.Timeout, 300*time.Second)
	cfg.NetworkMode = cmp.Or(cfg.NetworkMode, "bridge")
	cfg.MaxConcurrent = cmp.Or(cfg.MaxConcurrent, 8)
	cfg.MaxBrowsers = cmp.Or(cfg.MaxBrowsers, 16)
	cfg.BrowseIdle = cmp.Or(cfg.BrowseIdle, 60*time.Second)
	cfg.BrowseTimeout = cmp.Or(cfg.BrowseTimeout, 30*time.Second)
	return &Runtime{
		cli:    cli,
		cfg:    cfg,
		slots:  make(chan struct{}, cfg.MaxConcurrent),
		log:    cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		browse: newBrowsers(cfg.MaxConcurrent),
		now:    time.Now,
	}
}

// Ping checks that the engine answers.
func (r *Runtime) Ping(ctx context.Context) error {
	if _, err := r.cli.Ping(ctx); err != nil {
		return unavailable("ping the docker engine", err)
	}
	return nil
}

// CheckImage verifies that the sidecar image exists on the engine; cairn
// never pulls it. The error says how to build it.
func (r *Runtime) CheckImage(ctx context.Context) error {
	_, err := r.cli.ImageInspect(ctx, r.cfg.Image)
	switch {
	case err == nil:
		return nil
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("sidecar image %q is not on the docker host; build it with 'make images' "+
			"(or 'cairn dev', which builds it), or set artifact.sidecar.image", r.cfg.Image)
	default:
		return fmt.Errorf("inspect sidecar image %q: %w", r.cfg.Image, err)
	}
}

// unavailable reports an engine failure without its text, which may name
// host paths; the cause is kept for the log.
func unavailable(what string, err error) error {
	if cerrdefs.IsInvalidArgument(err) {
		// The service checks every value it hands the engine; one refused
		// anyway is a bug of ours, not an outage.
		return cairn.Internal("the docker engine refused the container spec ("+what+")", err)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &cairn.Error{Reason: cairn.ReasonDockerUnavailable,
			Detail: "the docker engine did not answer in time (" + what + ")", Err: err}
	}
	return &cairn.Error{Reason: cairn.ReasonDockerUnavailable,
		Detail: "the docker engine failed to " + what, Err: fmt.Errorf("%s: %w", what, err)}
}
