package kube

import (
	"context"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// A dialog run (service.SidecarSpec.Dialog) converses while it runs
// (sidecar.DialogRun holds the conversation). A pod starts at once and the
// sidecar image has no shell to hold it at a gate, so its output is read
// from the followed log, which holds every byte from the container's first
// instant; only stdin is attached. The log merges stdout and stderr, in
// the order the kubelet saw them.

// runDialog converses with the created sidecar pod until it exits and
// returns its exit code and output. The timeouts are RunSidecar's. An
// error of the Dialog ends the run with that error; the caller deletes
// the pod.
func (r *Runtime) runDialog(ctx context.Context, name string, spec service.SidecarSpec) (int, []byte, error) {
	wctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	if err := r.waitStarted(ctx, wctx, name, spec.Command); err != nil {
		return 0, nil, err
	}
	dctx, stop := context.WithCancelCause(wctx)
	defer stop(nil)
	stdinR, stdinW := io.Pipe()
	// Closing stdin at the end lets the sidecar read end of file (stdin is
	// open once).
	defer stdinW.CloseWithError(io.EOF)
	if err := r.attachStdin(dctx, name, stdinR); err != nil {
		return 0, nil, unavailable("attach to the sidecar", err)
	}
	d := sidecar.NewDialogRun(dctx, spec.Dialog, stdinW, r.log.Debug)
	if err := r.follow(dctx, name, d, stop); err != nil {
		return 0, nil, unavailable("read the sidecar output", err)
	}
	code, err := r.waitEnded(ctx, dctx, name, spec.Command)
	if cause := context.Cause(dctx); dctx.Err() != nil && wctx.Err() == nil && ctx.Err() == nil {
		err = cause // the Dialog failed, which ended the wait
	} else if err == nil && !d.AwaitOutput() {
		r.log.Warn("sidecar log did not end after its exit", "pod", name)
	}
	stop(nil)
	<-d.Done()
	if err != nil {
		return 0, nil, err
	}
	return code, d.Output(), nil
}

// attachStdin attaches stdin alone; the attach ends with ctx or the pod.
// Its end fails the next grant write instead of blocking it.
func (r *Runtime) attachStdin(ctx context.Context, name string, stdin *io.PipeReader) error {
	exec, err := r.attachExecutor(name, &corev1.PodAttachOptions{Container: "sidecar", Stdin: true})
	if err != nil {
		return err
	}
	go func() {
		err := exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin})
		if err == nil {
			err = io.ErrClosedPipe
		}
		stdin.CloseWithError(err)
	}()
	return nil
}

// follow pumps the followed log into d until it ends. A Dialog error is
// handed to failed, which ends the run.
func (r *Runtime) follow(ctx context.Context, name string, d *sidecar.DialogRun, failed func(error)) error {
	logs, err := r.api.podLogs(r.cfg.Namespace, name, &corev1.PodLogOptions{Container: "sidecar", Follow: true}).Stream(ctx)
	if err != nil {
		return err
	}
	d.Pump(func(stdout, _ io.Writer) {
		defer logs.Close()
		_, _ = io.Copy(stdout, logs) // ends with the log or a Dialog error
	}, failed)
	return nil
}
