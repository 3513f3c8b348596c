package servicetest

import (
	"context"
	"net"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/holder"
	"github.com/cairn-dev/cairn/server/service"
)

var _ service.ShellRuntime = (*ShellRuntime)(nil)

// ShellRuntime is a fake service.ShellRuntime.
type ShellRuntime struct {
	CreateShellFunc     func(ctx context.Context, spec service.ShellSpec) (ptyshell.Stream, error)
	StartHolderFunc     func(ctx context.Context, spec service.ShellSpec, cfg holder.Config, key []byte) (string, error)
	DialHolderFunc      func(ctx context.Context, container string) (net.Conn, error)
	ListShellsFunc      func(ctx context.Context) ([]service.ShellContainer, error)
	RemoveContainerFunc func(ctx context.Context, id string) error
}

func (r *ShellRuntime) CreateShell(ctx context.Context, spec service.ShellSpec) (ptyshell.Stream, error) {
	if r.CreateShellFunc == nil {
		return nil, notSet("ShellRuntime.CreateShell")
	}
	return r.CreateShellFunc(ctx, spec)
}

func (r *ShellRuntime) StartHolder(ctx context.Context, spec service.ShellSpec, cfg holder.Config, key []byte) (string, error) {
	if r.StartHolderFunc == nil {
		return "", notSet("ShellRuntime.StartHolder")
	}
	return r.StartHolderFunc(ctx, spec, cfg, key)
}

func (r *ShellRuntime) DialHolder(ctx context.Context, container string) (net.Conn, error) {
	if r.DialHolderFunc == nil {
		return nil, notSet("ShellRuntime.DialHolder")
	}
	return r.DialHolderFunc(ctx, container)
}

func (r *ShellRuntime) ListShells(ctx context.Context) ([]service.ShellContainer, error) {
	if r.ListShellsFunc == nil {
		return nil, notSet("ShellRuntime.ListShells")
	}
	return r.ListShellsFunc(ctx)
}

func (r *ShellRuntime) RemoveContainer(ctx context.Context, id string) error {
	if r.RemoveContainerFunc == nil {
		return notSet("ShellRuntime.RemoveContainer")
	}
	return r.RemoveContainerFunc(ctx, id)
}
