package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/wsexec"
)

var _ service.ExecRuntime = (*Shells)(nil)

// KindExec is the cairn.kind of an exec pod; AnnotationExec holds the
// exec's ID.
const (
	KindExec       = "exec"
	AnnotationExec = "cairn.exec"
)

// CreateExec creates the pod of one command with the shell's posture and
// waits until it runs; Start runs the argv as given in it, without a TTY,
// stdout and stderr apart (session). Reasons: those of runPod.
func (s *Shells) CreateExec(ctx context.Context, spec service.ExecSpec) (wsexec.Process, error) {
	pod, err := s.execPod(spec)
	if err != nil {
		return nil, err
	}
	name, err := s.runPod(ctx, pod, "the exec pod")
	if err != nil {
		return nil, err
	}
	return newExecProc(s, name, spec.Argv), nil
}

func (s *Shells) execPod(spec service.ExecSpec) (*corev1.Pod, error) {
	pod, err := s.shellPod(service.ShellSpec{
		Name: spec.Name, ShellID: spec.ExecID, WorkspaceID: spec.WorkspaceID,
		WorkspaceName: spec.WorkspaceName, VolumeName: spec.VolumeName, TokenName: spec.TokenName,
		Expires: spec.Expires,
	})
	if err != nil {
		return nil, err
	}
	pod.Labels[LabelKind], pod.Labels[LabelRole] = KindExec, KindExec
	delete(pod.Annotations, AnnotationShell)
	pod.Annotations[AnnotationExec] = spec.ExecID
	pod.Annotations[AnnotationExpires] = strconv.FormatInt(spec.Expires.Unix(), 10)
	c := &pod.Spec.Containers[0]
	c.Name, c.Lifecycle = KindExec, nil
	c.Env = s.sessionEnv(nil, spec.WorkspaceID, spec.WorkspaceName, "CAIRN_EXEC_ID", spec.ExecID, spec.Env...)
	// The command runs as an exec beside the holder, where and with what
	// the container gives it.
	c.WorkingDir = cmp.Or(spec.Dir, cairn.MountPath)
	return pod, nil
}

// ListExecs lists every exec pod of the app, in any phase; ShellID is the
// exec's ID.
func (s *Shells) ListExecs(ctx context.Context) ([]service.ShellContainer, error) {
	return s.listSessions(ctx, KindExec, AnnotationExec)
}

// execProc is one exec pod's streams and life: wsexec.Process over an
// attach without a terminal.
type execProc struct {
	*session
	argv       []string
	stdinR     *io.PipeReader
	stdinW     *io.PipeWriter
	outR, errR *io.PipeReader
	outW, errW *io.PipeWriter
}

var _ wsexec.Process = (*execProc)(nil)

func newExecProc(s *Shells, name string, argv []string) *execProc {
	p := &execProc{session: newSession(s, name, KindExec), argv: argv}
	p.stdinR, p.stdinW = io.Pipe()
	p.outR, p.outW = io.Pipe()
	p.errR, p.errW = io.Pipe()
	return p
}

// Start runs the command; the exec opens its streams first, so its output
// from the first instant is on them.
func (p *execProc) Start(ctx context.Context) error {
	return p.run(ctx, corev1.PodExecOptions{Command: append(pidNoted, p.argv...), Stdin: true, Stdout: true, Stderr: true},
		remotecommand.StreamOptions{Stdin: p.stdinR, Stdout: p.outW, Stderr: p.errW},
		func(err error) {
			end := err
			if end == nil {
				end = io.EOF
			}
			p.outW.CloseWithError(end)
			p.errW.CloseWithError(end)
			p.stdinR.CloseWithError(errShellClosed)
		})
}

// Output copies stdout and stderr to the two writers until both ended.
// A pipe holds no bytes of its own: at most one chunk is in flight.
func (p *execProc) Output(stdout, stderr io.Writer) error {
	errc := make(chan error, 2)
	pump := func(w io.Writer, r *io.PipeReader) {
		_, err := io.Copy(w, r)
		if err != nil {
			r.CloseWithError(err) // the attach sees the writer gone
		}
		errc <- err
	}
	go pump(stdout, p.outR)
	go pump(stderr, p.errR)
	err := errors.Join(<-errc, <-errc)
	if err != nil && isClosed(p.closed) {
		return nil
	}
	return err
}

// Write writes b to the command's stdin.
func (p *execProc) Write(b []byte) (int, error) { return p.stdinW.Write(b) }

// CloseStdin ends the exec's stdin: the command reads end of file.
func (p *execProc) CloseStdin() error { return p.stdinW.Close() }

// Wait reports how the command ended.
func (p *execProc) Wait(ctx context.Context) (wsexec.ExitStatus, error) {
	e, err := p.wait(ctx)
	return wsexec.ExitStatus{Code: e.code, OOMKilled: e.oom, Removed: e.removed}, err
}

// Stop deletes the pod with the stop grace: SIGTERM, then SIGKILL.
func (p *execProc) Stop(ctx context.Context) error { return p.stop(ctx) }

// execPIDFile is where an exec's command leaves its PID, on the pod's own
// /tmp, for Signal: it runs as an exec beside the pod's holder, so no
// runtime API can aim at it.
const execPIDFile = "/tmp/.cairn-exec-pid"

// pidNoted runs the argv after it in its own process, having noted that
// process's PID: the shell execs the argv at once, so the command is the
// one the PID names, as given, with nothing left in between.
var pidNoted = []string{"/bin/sh", "-c", `echo $$ > ` + execPIDFile + ` && exec "$@"`, "cairn-exec"}

// Signal sends the signal to the command, as Docker's init passes one on.
// The name is one of wsexec.Signals, never the caller's text.
func (p *execProc) Signal(ctx context.Context, name string) error {
	if !slices.Contains(wsexec.Signals, name) {
		return fmt.Errorf("%q is no signal cairn delivers", name)
	}
	return p.oneShot(ctx, []string{"/bin/sh", "-c", `kill -s ` + name + ` "$(cat ` + execPIDFile + `)"`})
}

// Close is the teardown: the streams end, the pod is deleted and gone.
func (p *execProc) Close() error {
	return p.close(func() {
		p.stdinW.CloseWithError(errShellClosed)
		p.outR.CloseWithError(io.EOF)
		p.errR.CloseWithError(io.EOF)
	})
}
