package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// Sidecar container limits, plus a pids limit so a sidecar
// can never fork-bomb the host.
const (
	sidecarMemory            = 128 << 20
	sidecarMemoryReservation = 32 << 20
	sidecarPids              = 64
	cleanupTimeout           = 30 * time.Second
)

// Labels put on every sidecar, so leftovers can be found and removed.
const (
	LabelApp       = "cairn.app"
	LabelRole      = "cairn.role"
	LabelCommand   = "cairn.command"
	LabelWorkspace = "cairn.workspace"
	LabelSidecar   = "cairn.sidecar"
	LabelInstance  = "cairn.instance"
)

// RunSidecar runs one sidecar to completion: take a slot, create, start,
// wait (bounded by the configured timeout), read the merged output, and
// always remove the container. With spec.Dialog the sidecar runs attached
// and converses while it runs (dialog.go); the rest is the same.
func (r *Runtime) RunSidecar(ctx context.Context, spec service.SidecarSpec) (run *service.SidecarRun, err error) {
	release, err := service.TakeSidecarSlot(ctx, r.slots)
	if err != nil {
		return nil, err
	}
	defer release()
	defer service.ObserveSidecar(r.cfg.OnSidecar, spec.Command, time.Now(), &run, &err)

	id, err := r.createSidecar(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer r.removeContainer(ctx, id)

	if spec.Dialog != nil {
		code, out, err := r.runDialog(ctx, id, spec)
		if err != nil {
			return nil, err
		}
		return &service.SidecarRun{ExitCode: code, Output: out}, nil
	}
	if err := r.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return nil, unavailable("start the sidecar", err)
	}
	code, err := r.waitSidecar(ctx, id, spec.Command)
	if err != nil {
		return nil, err
	}
	out, err := r.logs(ctx, id)
	if err != nil {
		return nil, err
	}
	return &service.SidecarRun{ExitCode: code, Output: out}, nil
}

// Running is how many sidecars this runtime runs (or is starting) now.
func (r *Runtime) Running() int { return len(r.slots) }

func (r *Runtime) createSidecar(ctx context.Context, spec service.SidecarSpec) (string, error) {
	cfg := &container.Config{
		Image:      r.cfg.Image,
		Entrypoint: []string{"/cairn-sidecar"},
		Cmd:        []string{spec.Command},
		Env:        r.env(spec),
		User:       "0:0",
		WorkingDir: "/",
		StopSignal: "SIGINT",
		Tty:        true,
		Labels: r.labels(map[string]string{
			LabelRole: "sidecar", LabelSidecar: "true",
			LabelCommand: spec.Command, LabelWorkspace: spec.WorkspaceID,
		}),
	}
	if spec.Dialog != nil {
		// A conversation needs stdin and stdout apart from stderr: no TTY.
		// StdinOnce: the sidecar reads end of file when the server lets go.
		cfg.Tty = false
		cfg.OpenStdin, cfg.StdinOnce = true, true
		cfg.AttachStdin, cfg.AttachStdout, cfg.AttachStderr = true, true, true
	}
	name := fmt.Sprintf("%s.%s.%s.%s", r.cfg.AppName, spec.Role, spec.Subject, ulid.Make())
	return r.createContainer(ctx, cfg, r.hostConfig(spec), name, "the sidecar")
}

// createContainer creates a container and returns its ID. The create runs
// detached from the request: cut short, the engine may still make the
// container and we would never learn its ID to remove it. A request gone
// meanwhile removes what was made.
func (r *Runtime) createContainer(ctx context.Context, cfg *container.Config, hc *container.HostConfig, name, what string) (string, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	resp, err := r.cli.ContainerCreate(cctx, cfg, hc, nil, nil, name)
	if err != nil {
		return "", unavailable("create "+what, err)
	}
	if err := ctx.Err(); err != nil {
		r.removeContainer(ctx, resp.ID)
		return "", unavailable("create "+what, err)
	}
	return resp.ID, nil
}

// labels adds the app and, when set, the instance to a container's own
// labels.
func (r *Runtime) labels(own map[string]string) map[string]string {
	own[LabelApp] = r.cfg.AppName
	if r.cfg.Instance != "" {
		own[LabelInstance] = r.cfg.Instance
	}
	return own
}

// hostConfig is the hardened posture: one volume mount, read-only root, no
// capabilities but those the command needs (sidecar.Capabilities), no new
// privileges, bounded memory and pids.
func (r *Runtime) hostConfig(spec service.SidecarSpec) *container.HostConfig {
	m := workspaceMount(spec.VolumeName)
	m.ReadOnly = sidecar.ReadOnlyMount(spec.Command)
	hc := &container.HostConfig{
		Mounts:         []mount.Mount{m},
		CapDrop:        []string{"ALL"},
		CapAdd:         sidecar.Capabilities(spec.Command),
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		NetworkMode:    "none",
		Resources:      sidecarResources(),
	}
	if spec.Transfer {
		hc.NetworkMode = container.NetworkMode(r.cfg.NetworkMode)
		hc.ExtraHosts = r.cfg.ExtraHosts
	}
	return hc
}

// sidecarResources bounds a sidecar's memory and pids.
func sidecarResources() container.Resources {
	pids := int64(sidecarPids)
	return container.Resources{Memory: sidecarMemory, MemoryReservation: sidecarMemoryReservation, PidsLimit: &pids}
}

// env renders the protocol variables, plus the deployment's extras for
// transfer sidecars; config validation keeps extras out of CAIRN_*.
func (r *Runtime) env(spec service.SidecarSpec) []string {
	var env []string
	if spec.Transfer {
		for k, v := range r.cfg.ExtraEnv {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range spec.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// waitSidecar waits for the container to stop. Past the timeout it is
// stopped with SIGINT (the engine kills it after a grace) and the run is a
// sidecar_timeout.
func (r *Runtime) waitSidecar(ctx context.Context, id, command string) (int, error) {
	wctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	results, errs := r.cli.ContainerWait(wctx, id, container.WaitConditionNotRunning)
	select {
	case res := <-results:
		if res.Error != nil {
			return 0, unavailable("wait for the sidecar", errors.New(res.Error.Message))
		}
		return int(res.StatusCode), nil
	case err := <-errs:
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			r.stop(ctx, id)
			return 0, service.SidecarTimedOut(command, r.cfg.Timeout)
		}
		return 0, unavailable("wait for the sidecar", err)
	}
}

func (r *Runtime) stop(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	grace := 5
	if err := r.cli.ContainerStop(ctx, id, container.StopOptions{Signal: "SIGINT", Timeout: &grace}); err != nil {
		r.log.Warn("stop timed-out sidecar", "container", id, "err", err)
	}
}

// logs reads the merged output; with a TTY the stream is raw, not
// multiplexed.
func (r *Runtime) logs(ctx context.Context, id string) ([]byte, error) {
	rc, err := r.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return nil, unavailable("read the sidecar output", err)
	}
	defer rc.Close()
	out, err := io.ReadAll(io.LimitReader(rc, sidecar.MaxOutput))
	if err != nil {
		return nil, unavailable("read the sidecar output", err)
	}
	return out, nil
}

// removeContainer force-removes a container even when the request was
// cancelled; on a failure the removal is retried (leftovers.go).
func (r *Runtime) removeContainer(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := r.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true}); err != nil && !isGoneOrGoing(err) {
		r.log.Warn("remove sidecar; retrying", "container", id, "err", err)
		r.removeLater(id)
	}
}
