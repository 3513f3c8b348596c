package docker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/service"
)

var _ service.ShellRuntime = (*Shells)(nil)

// Labels of shell containers beside LabelApp, LabelWorkspace and
// LabelInstance.
const (
	LabelKind    = "cairn.kind"
	LabelShell   = "cairn.shell"
	LabelToken   = "cairn.token"
	LabelExpires = "cairn.expires"
	// KindShell is the cairn.kind (and cairn.role) of a shell container.
	KindShell = "shell"
)

// ShellHome is $HOME in a shell container, a tmpfs like /tmp.
const ShellHome = "/home/cairn"

// ShellConfig holds the shell containers' settings (the shell.* keys of
// docs/configuration.md); zero values take their defaults.
type ShellConfig struct {
	AppName  string // default "cairn"
	Instance string // the cairn.instance label: shell.instanceName
	Image    string // default "cairn-shell:latest"; never pulled
	// Entrypoint is the argv of the shell; empty means the default:
	// bash if the image has it, else sh, under Umask.
	Entrypoint  []string
	Umask       string   // default "0000"
	User        string   // default "0:0"
	Env         []string // NAME=value, after cairn's own; never CAIRN_*, TERM or HOME
	NetworkMode string   // default "none"
	DetachKeys  string   // default "ctrl-],ctrl-],ctrl-],ctrl-]"
	MemoryMiB   int64    // default 512, memory and memory+swap
	CPUs        float64  // default 1
	Pids        int64    // default 256
	Nofile      int64    // default 1024
	TmpfsMiB    int64    // default 64, each of /tmp and $HOME
	StopSecs    int      // default 3: SIGHUP, then SIGKILL
	// SidecarImage carries the holder of v2 shells (default
	// "cairn-sidecar:latest"; never pulled).
	SidecarImage string
	Logger       *slog.Logger
}

// Shells creates, lists and removes shell containers on one engine.
type Shells struct {
	cli     *client.Client
	cfg     ShellConfig
	log     *slog.Logger
	holders holderVolumes
}

// NewShells returns the shell runtime over cli.
func NewShells(cli *client.Client, cfg ShellConfig) *Shells {
	cfg.AppName = cmp.Or(cfg.AppName, "cairn")
	cfg.Image = cmp.Or(cfg.Image, "cairn-shell:latest")
	cfg.Umask = cmp.Or(cfg.Umask, "0000")
	cfg.User = cmp.Or(cfg.User, "0:0")
	cfg.NetworkMode = cmp.Or(cfg.NetworkMode, "none")
	cfg.DetachKeys = cmp.Or(cfg.DetachKeys, "ctrl-],ctrl-],ctrl-],ctrl-]")
	cfg.MemoryMiB = cmp.Or(cfg.MemoryMiB, 512)
	cfg.CPUs = cmp.Or(cfg.CPUs, 1)
	cfg.Pids = cmp.Or(cfg.Pids, 256)
	cfg.Nofile = cmp.Or(cfg.Nofile, 1024)
	cfg.TmpfsMiB = cmp.Or(cfg.TmpfsMiB, 64)
	cfg.StopSecs = cmp.Or(cfg.StopSecs, 3)
	cfg.SidecarImage = cmp.Or(cfg.SidecarImage, "cairn-sidecar:latest")
	return &Shells{cli: cli, cfg: cfg, log: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))}
}

// CheckImage verifies that the shell image exists on the engine; cairn
// never pulls it. The error says how to build it.
func (s *Shells) CheckImage(ctx context.Context) error {
	_, err := s.cli.ImageInspect(ctx, s.cfg.Image)
	switch {
	case err == nil:
		return nil
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("shell image %q is not on the docker host; build it with 'make images' "+
			"(or 'cairn dev', which builds it), set shell.image, or turn the shell off (shell.enable: false)", s.cfg.Image)
	default:
		return fmt.Errorf("inspect shell image %q: %w", s.cfg.Image, err)
	}
}

// CreateShell creates the container of spec, named spec.Name, not started,
// and returns its terminal.
func (s *Shells) CreateShell(ctx context.Context, spec service.ShellSpec) (ptyshell.Stream, error) {
	cfg := s.sessionConfig(sessionMeta{kind: KindShell, idLabel: LabelShell, idEnv: "CAIRN_SHELL_ID", id: spec.ShellID,
		workspaceID: spec.WorkspaceID, workspaceName: spec.WorkspaceName, tokenName: spec.TokenName, expires: spec.Expires},
		s.shellArgv(), []string{"TERM=" + spec.Term})
	cfg.Tty = true
	// Set on the container: the SDK drops ContainerStop's own signal
	// below API 1.42.
	cfg.StopSignal = "SIGHUP"
	hc := s.hostConfig(spec.VolumeName)
	hc.ConsoleSize = [2]uint{uint(spec.Rows), uint(spec.Cols)}
	a, err := s.createContainer(ctx, KindShell, spec.Name, cfg, hc)
	if err != nil {
		return nil, err
	}
	return &shellStream{attachment: a}, nil
}

// shellArgv is the shell the container runs: the configured one, or bash
// if the image has it, else sh, under Umask.
func (s *Shells) shellArgv() []string {
	if len(s.cfg.Entrypoint) > 0 {
		return s.cfg.Entrypoint
	}
	return []string{"/bin/sh", "-c", "umask " + s.cfg.Umask +
		"; if command -v bash >/dev/null 2>&1; then exec bash; fi; exec sh"}
}

// createContainer creates a session container (kind KindShell or
// KindExec), not started, and returns its attachment. Like the sidecars'
// create it runs detached from ctx: cut short, the engine could still
// make a container we would never learn the ID of. A request gone
// meanwhile removes it at once.
func (s *Shells) createContainer(ctx context.Context, kind, name string, cfg *container.Config, hc *container.HostConfig) (*attachment, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	resp, err := s.cli.ContainerCreate(cctx, cfg, hc, nil, nil, name)
	if err != nil {
		return nil, s.createError(cctx, err)
	}
	a := newAttachment(s, kind, resp.ID, name)
	if err := ctx.Err(); err != nil {
		_ = a.teardown(cleanupTimeout, nil) // the request is gone; the teardown logs nothing itself
		return nil, unavailable("create the "+kind+" container", err)
	}
	return a, nil
}

// createError names the failure: a missing image is the operator's to fix,
// not an outage.
func (s *Shells) createError(ctx context.Context, err error) error {
	if cerrdefs.IsNotFound(err) {
		if _, ierr := s.cli.ImageInspect(ctx, s.cfg.Image); cerrdefs.IsNotFound(ierr) {
			return &cairn.Error{Reason: cairn.ReasonShellImageMissing, Err: err,
				Detail: fmt.Sprintf("the shell image '%s' is not on the docker host; an operator builds it with 'make images'", s.cfg.Image)}
		}
		return cairn.Internal("the docker engine refused the shell container", err)
	}
	return unavailable("create the shell container", err)
}

// sessionMeta is what names a session container: its kind, the label and
// the variable that hold its ID, its workspace, who opened it and when it
// counts as leaked.
type sessionMeta struct {
	kind, idLabel, idEnv, id   string
	workspaceID, workspaceName string
	tokenName                  string
	expires                    time.Time
	// An exec's own: its working directory (the mount root when empty)
	// and variables, after cairn's and before the operator's, which win.
	dir     string
	execEnv []string
}

// sessionConfig is the container a shell and an exec share: the shell
// image, argv run as given (the image's own entrypoint replaced), env
// then cairn's variables then the operator's, the workspace as working
// directory, the user, stdin and both outputs attached, the stop timeout
// and the labels.
func (s *Shells) sessionConfig(m sessionMeta, argv, env []string) *container.Config {
	env = append(env, "LANG=C.UTF-8", "HOME="+ShellHome, "CAIRN_WORKSPACE_ID="+m.workspaceID,
		"CAIRN_WORKSPACE_NAME="+m.workspaceName, m.idEnv+"="+m.id)
	stop := s.cfg.StopSecs
	return &container.Config{
		Image:        s.cfg.Image,
		Entrypoint:   argv[:1],
		Cmd:          argv[1:],
		Env:          append(append(env, m.execEnv...), s.cfg.Env...),
		WorkingDir:   cmp.Or(m.dir, cairn.MountPath),
		User:         s.cfg.User,
		OpenStdin:    true,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		StopTimeout:  &stop,
		Labels: map[string]string{
			LabelApp: s.cfg.AppName, LabelKind: m.kind, LabelRole: m.kind,
			m.idLabel: m.id, LabelWorkspace: m.workspaceID,
			LabelInstance: s.cfg.Instance, LabelToken: m.tokenName,
			LabelExpires: strconv.FormatInt(m.expires.Unix(), 10),
		},
	}
}

// hostConfig is the hardened posture of a session container: the one
// volume, an init as PID 1, a read-only root with tmpfs scratch and home,
// DAC_OVERRIDE only, no new privileges, bounded memory, CPU, pids and files,
// and no log driver (with a TTY it would store every keystroke).
func (s *Shells) hostConfig(volumeName string) *container.HostConfig {
	init, pids := true, s.cfg.Pids
	mem := s.cfg.MemoryMiB << 20
	tmpfs := fmt.Sprintf("rw,nosuid,nodev,size=%dm,mode=1777", s.cfg.TmpfsMiB)
	return &container.HostConfig{
		Mounts:         []mount.Mount{workspaceMount(volumeName)},
		Init:           &init,
		ReadonlyRootfs: true,
		Tmpfs:          map[string]string{"/tmp": tmpfs, ShellHome: tmpfs},
		CapDrop:        []string{"ALL"},
		CapAdd:         []string{"DAC_OVERRIDE"},
		SecurityOpt:    []string{"no-new-privileges"},
		NetworkMode:    container.NetworkMode(s.cfg.NetworkMode),
		Resources: container.Resources{
			Memory: mem, MemorySwap: mem, NanoCPUs: int64(math.Round(s.cfg.CPUs * 1e9)), PidsLimit: &pids,
			Ulimits: []*container.Ulimit{{Name: "nofile", Soft: s.cfg.Nofile, Hard: s.cfg.Nofile}},
		},
		LogConfig:  container.LogConfig{Type: "none"},
		AutoRemove: false,
	}
}

// ListShells lists every shell container of the app, running or not. The
// exited ones are inspected for when they stopped.
func (s *Shells) ListShells(ctx context.Context) ([]service.ShellContainer, error) {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	out, err := s.listKind(ctx, KindShell, LabelShell)
	if err != nil {
		return nil, unavailable("list shell containers", err)
	}
	for i, sc := range out {
		if sc.State == "exited" || sc.State == "dead" {
			out[i].FinishedAt = s.finishedAt(ctx, sc.ContainerID)
		}
	}
	return out, nil
}

// listKind lists the app's containers of one kind (shell or exec) as their
// labels describe them; idLabel holds the session's ID.
func (s *Shells) listKind(ctx context.Context, kind, idLabel string) ([]service.ShellContainer, error) {
	list, err := s.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(
		filters.Arg("label", LabelApp+"="+s.cfg.AppName),
		filters.Arg("label", LabelKind+"="+kind),
	)})
	if err != nil {
		return nil, err
	}
	out := make([]service.ShellContainer, 0, len(list))
	for _, c := range list {
		sc := service.ShellContainer{
			ContainerID: c.ID, ShellID: c.Labels[idLabel], WorkspaceID: c.Labels[LabelWorkspace],
			Instance: c.Labels[LabelInstance], TokenName: c.Labels[LabelToken],
			State: string(c.State), Created: time.Unix(c.Created, 0),
		}
		if len(c.Names) > 0 {
			sc.Name = strings.TrimPrefix(c.Names[0], "/")
		}
		if secs, err := strconv.ParseInt(c.Labels[LabelExpires], 10, 64); err == nil {
			sc.Expires = time.Unix(secs, 0)
		}
		out = append(out, sc)
	}
	return out, nil
}

// finishedAt reads when a container stopped; zero if that cannot be read
// (it went meanwhile, or the engine failed: the next sweep tries again).
func (s *Shells) finishedAt(ctx context.Context, id string) time.Time {
	info, err := s.cli.ContainerInspect(ctx, id)
	if err != nil || info.State == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, info.State.FinishedAt)
	if err != nil || t.Year() < 2000 { // the engine's zero value is 0001-01-01
		return time.Time{}
	}
	return t
}

// RemoveContainer force-removes a container; an absent one is no error.
func (s *Shells) RemoveContainer(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	err := s.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return unavailable("remove a shell container", err)
	}
	return nil
}

// errShellClosed is what Start returns when Close came first.
var errShellClosed = errors.New("shell closed")
