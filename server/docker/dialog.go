package docker

import (
	"context"
	"io"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// A dialog run (service.SidecarSpec.Dialog) is a sidecar that asks the
// server for what it can only be given while it runs (sidecar.DialogRun
// holds the conversation). On Docker it runs attached without a TTY: the
// attach stream carries its stdout and stderr apart, and its stdin.

// runDialog starts the created sidecar id attached, converses until it
// exits and returns its exit code and output. The wait and its timeout are
// RunSidecar's. An error of the Dialog ends the run with that error; the
// caller removes the container.
func (r *Runtime) runDialog(ctx context.Context, id string, spec service.SidecarSpec) (int, []byte, error) {
	att, err := r.cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return 0, nil, unavailable("attach to the sidecar", err)
	}
	defer att.Close()
	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d := sidecar.NewDialogRun(dctx, spec.Dialog, att.Conn, r.log.Debug)
	d.Pump(func(stdout, stderr io.Writer) {
		_, _ = stdcopy.StdCopy(stdout, stderr, att.Reader) // ends with the stream or a Dialog error
	}, cancel)
	if err := r.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		att.Close()
		<-d.Done()
		return 0, nil, unavailable("start the sidecar", err)
	}
	code, err := r.waitSidecar(dctx, id, spec.Command)
	if dctx.Err() != nil && ctx.Err() == nil {
		err = context.Cause(dctx) // the Dialog failed, which ended the wait
	} else if err == nil && !d.AwaitOutput() {
		r.log.Warn("sidecar output did not end after its exit", "container", id)
	}
	cancel(nil) // a Dialog still running (past the timeout) returns
	att.Close()
	<-d.Done()
	if err != nil {
		return 0, nil, err
	}
	return code, d.Output(), nil
}
