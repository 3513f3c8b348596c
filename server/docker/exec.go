package docker

import (
	"context"
	"fmt"
	"io"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

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

// CreateExec creates the container of one command, not started, with the
// shell's posture (image, user, read-only root, tmpfs scratch and home,
// DAC_OVERRIDE only, no new privileges, network, memory, CPU, pids,
// files, an init, no log driver) but no TTY: stdin open once, stdout and
// stderr multiplexed apart, the argv run as given, no shell and no umask
// in between. Like CreateShell it runs detached from ctx.
func (s *Shells) CreateExec(ctx context.Context, spec service.ExecSpec) (wsexec.Process, error) {
	cfg := s.sessionConfig(sessionMeta{kind: KindExec, idLabel: LabelExec, idEnv: "CAIRN_EXEC_ID", id: spec.ExecID,
		workspaceID: spec.WorkspaceID, workspaceName: spec.WorkspaceName, tokenName: spec.TokenName, expires: spec.Expires,
		dir: spec.Dir, execEnv: spec.Env},
		spec.Argv, nil)
	cfg.StdinOnce = true // the end of the attach's stdin closes the command's
	a, err := s.createContainer(ctx, KindExec, spec.Name, cfg, s.hostConfig(spec.VolumeName))
	if err != nil {
		return nil, err
	}
	return &execProc{attachment: a}, nil
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
type execProc struct{ *attachment }

var _ wsexec.Process = (*execProc)(nil)

// Start attaches, registers the wait for the next exit, then starts.
func (p *execProc) Start(ctx context.Context) error {
	return p.start(ctx, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
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

// CloseStdin half-closes the attach connection: with StdinOnce the engine
// then closes the command's stdin.
func (p *execProc) CloseStdin() error {
	att := p.attached()
	if att == nil {
		return errShellClosed
	}
	return att.CloseWrite()
}

// Wait reports how the command ended.
func (p *execProc) Wait(ctx context.Context) (wsexec.ExitStatus, error) { return p.exitStatus(ctx) }

// Stop sends SIGTERM, then SIGKILL after stopSecs; an ended or absent
// container is no error.
func (p *execProc) Stop(ctx context.Context) error { return p.stop(ctx) }

// Signal sends the signal to the container's init, which passes it to
// the command; an ended or absent container is no error.
func (p *execProc) Signal(ctx context.Context, name string) error {
	err := p.s.cli.ContainerKill(ctx, p.id, "SIG"+name)
	if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
		return fmt.Errorf("signal the exec container: %w", err)
	}
	return nil
}

// Close is the one teardown: the attach connection closes (unblocking
// Output and Write), and the container is removed by force, killing a
// command still running.
func (p *execProc) Close() error { return p.teardown(cleanupTimeout, nil) }
