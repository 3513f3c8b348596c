package servicetest

import (
	"context"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/service"
)

var _ service.ShellRuntime = (*ShellRuntime)(nil)

// ShellRuntime is a fake service.ShellRuntime.
type ShellRuntime struct {
	CreateShellFunc     func(ctx context.Context, spec service.ShellSpec) (ptyshell.Stream, error)
	ListShellsFunc      func(ctx context.Context) ([]service.ShellContainer, error)
	RemoveContainerFunc func(ctx context.Context, id string) error
}

func (r *ShellRuntime) CreateShell(ctx context.Context, spec service.ShellSpec) (ptyshell.Stream, error) {
	if r.CreateShellFunc == nil {
		return nil, notSet("ShellRuntime.CreateShell")
	}
	return r.CreateShellFunc(ctx, spec)
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
