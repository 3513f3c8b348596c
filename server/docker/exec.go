package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/wsexec"
)

var _ service.ExecRuntime = (*Shells)(nil)

// Labels of exec containers: cairn.kind is KindExec and cairn.exec the
// exec's ID, beside cairn.app, cairn.workspace, cairn.instance,
// cairn.token and cairn.expires as on a shell. The kind keeps them out of
// the shell registry's reaper; the exec service reaps its own.
const (
	LabelExec = "cairn.exec"
	KindExec  = "exec"
)

// CreateExec creates the container of one command (ARCHITECTURE §11.6),
// not started, with the shell's posture (PTYSHELL.md §7.2: image, user,
// read-only root, tmpfs scratch and home, DAC_OVERRIDE only, no new
// privileges, network, memory, CPU, pids, files, an init, no log driver)
// but no TTY: stdin open once, stdout and stderr multiplexed apart, the
// argv run as given, no shell and no umask in between. Like CreateShell it
// runs detached from ctx.
func (s *Shells) CreateExec(ctx context.Context, spec service.ExecSpec) (wsexec.Process, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	hc := s.hostConfig(service.ShellSpec{VolumeName: spec.VolumeName})
	hc.ConsoleSize = [2]uint{}
	resp, err := s.cli.ContainerCreate(cctx, s.execConfig(spec), hc, nil, nil, spec.Name)
	if err != nil {
		return nil, s.createError(cctx, err)
	}
	p := &execProc{s: s, id: resp.ID, name: spec.Name, closed: make(chan struct{}), waited: make(chan waitResult, 1)}
	if err := ctx.Err(); err != nil {
		_ = p.Close() // the request is gone
		return nil, unavailable("create the exec container", err)
	}
	return p, nil
}

func (s *Shells) execConfig(spec service.ExecSpec) *container.Config {
	stop := s.cfg.StopSecs
	env := []string{"LANG=C.UTF-8", "HOME=" + ShellHome, "CAIRN_WORKSPACE_ID=" + spec.WorkspaceID,
		"CAIRN_WORKSPACE_NAME=" + spec.WorkspaceName, "CAIRN_EXEC_ID=" + spec.ExecID}
	return &container.Config{
		Image:        s.cfg.Image,
		Entrypoint:   spec.Argv[:1],
		Cmd:          spec.Argv[1:],
		Env:          append(env, s.cfg.Env...),
		WorkingDir:   cairn.MountPath,
		User:         s.cfg.User,
		OpenStdin:    true,
		StdinOnce:    true, // the end of the attach's stdin closes the command's
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		StopTimeout:  &stop,
		Labels: map[string]string{
			LabelApp: s.cfg.AppName, LabelKind: KindExec, LabelRole: KindExec,
			LabelExec: spec.ExecID, LabelWorkspace: spec.WorkspaceID,
			LabelInstance: s.cfg.Instance, LabelToken: spec.TokenName,
			LabelExpires: strconv.FormatInt(spec.Expires.Unix(), 10),
		},
	}
}

// ListExecs lists every exec container of the app, running or not;
// ShellID is the exec's ID.
func (s *Shells) ListExecs(ctx context.Context) ([]service.ShellContainer, error) {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	out, err := s.listKind(ctx, KindExec, LabelExec)
	if err != nil {
		return nil, unavailable("list exec containers", err)
	}
	return out, nil
}

// execProc is one exec container's streams and life: wsexec.Process over
// the engine.
type execProc struct {
	s        *Shells
	id, name string

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
	waited    chan waitResult

	mu         sync.Mutex
	attach     *types.HijackedResponse
	waitCancel context.CancelFunc
}

var _ wsexec.Process = (*execProc)(nil)

// Start attaches, registers the wait for the next exit, then starts: no
// byte of output is lost and an exit at once is not missed.
func (p *execProc) Start(ctx context.Context) error {
	att, err := p.s.cli.ContainerAttach(ctx, p.id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return fmt.Errorf("attach to the exec container: %w", err)
	}
	wctx, wcancel := context.WithCancel(context.WithoutCancel(ctx))
	p.mu.Lock()
	p.attach, p.waitCancel = &att, wcancel
	closed := p.isClosed()
	p.mu.Unlock()
	if closed {
		att.Close()
		wcancel()
		return errShellClosed
	}
	results, errs := p.s.cli.ContainerWait(wctx, p.id, container.WaitConditionNextExit)
	go func() {
		select {
		case res := <-results:
			p.waited <- waitResult{res: res}
		case err := <-errs:
			p.waited <- waitResult{err: err}
		}
	}()
	if err := p.s.cli.ContainerStart(ctx, p.id, container.StartOptions{}); err != nil {
		return fmt.Errorf("start the exec container: %w", err)
	}
	return nil
}

func (p *execProc) isClosed() bool {
	select {
	case <-p.closed:
		return true
	default:
		return false
	}
}

func (p *execProc) attached() *types.HijackedResponse {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.attach
}

// Output demultiplexes the attach stream (no TTY: stdcopy frames) to the
// two writers until it ends. After Close the end is no error.
func (p *execProc) Output(stdout, stderr io.Writer) error {
	att := p.attached()
	if att == nil {
		return errShellClosed
	}
	_, err := stdcopy.StdCopy(stdout, stderr, att.Reader)
	if err != nil && p.isClosed() {
		return nil
	}
	return err
}

// Write writes p to the command's stdin.
func (p *execProc) Write(b []byte) (int, error) {
	att := p.attached()
	if att == nil {
		return 0, errShellClosed
	}
	return att.Conn.Write(b)
}

// CloseStdin half-closes the attach connection: with StdinOnce the engine
// then closes the command's stdin.
func (p *execProc) CloseStdin() error {
	att := p.attached()
	if att == nil {
		return errShellClosed
	}
	return att.CloseWrite()
}

// Wait reports how the command ended: the wait's status, with inspect for
// OOMKilled and for a container removed underneath.
func (p *execProc) Wait(ctx context.Context) (wsexec.ExitStatus, error) {
	var w waitResult
	select {
	case w = <-p.waited:
	case <-ctx.Done():
		return wsexec.ExitStatus{}, ctx.Err()
	}
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	info, ierr := p.s.cli.ContainerInspect(ictx, p.id)
	waitOK := w.err == nil && w.res.Error == nil
	switch {
	case cerrdefs.IsNotFound(ierr):
		return wsexec.ExitStatus{Code: 137, Removed: true}, nil
	case waitOK:
		oom := ierr == nil && info.State != nil && info.State.OOMKilled
		return wsexec.ExitStatus{Code: int(w.res.StatusCode), OOMKilled: oom}, nil
	case ierr == nil && info.State != nil && !info.State.Running:
		return wsexec.ExitStatus{Code: info.State.ExitCode, OOMKilled: info.State.OOMKilled}, nil
	}
	if w.err == nil {
		w.err = errors.New(w.res.Error.Message)
	}
	return wsexec.ExitStatus{}, fmt.Errorf("wait for the exec container: %w", errors.Join(w.err, ierr))
}

// Stop sends SIGTERM, then SIGKILL after stopSecs; an ended or absent
// container is no error.
func (p *execProc) Stop(ctx context.Context) error {
	secs := p.s.cfg.StopSecs
	err := p.s.cli.ContainerStop(ctx, p.id, container.StopOptions{Timeout: &secs})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("stop the exec container: %w", err)
	}
	return nil
}

// Close is the one teardown, once, on its own context: it closes the
// attach connection (unblocking Output and Write), force-removes the
// container (killing a command still running) and ends the wait.
func (p *execProc) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		close(p.closed)
		att, wcancel := p.attach, p.waitCancel
		p.mu.Unlock()
		if att != nil {
			att.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		err := p.s.cli.ContainerRemove(ctx, p.id, container.RemoveOptions{Force: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			p.closeErr = fmt.Errorf("remove the exec container %s: %w", p.name, err)
		}
		if wcancel != nil {
			wcancel()
		}
	})
	return p.closeErr
}
