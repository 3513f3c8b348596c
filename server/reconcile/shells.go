package reconcile

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/server/service"
)

// ShellContainers is the engine as the shell sweep sees it;
// server/docker.Shells is one.
type ShellContainers interface {
	// ListShells lists every shell container of the app, running or not.
	ListShells(ctx context.Context) ([]service.ShellContainer, error)
	// RemoveContainer force-removes a container; an absent one is no
	// error.
	RemoveContainer(ctx context.Context, id string) error
}

// shellGrace is added to each of the shell sweep's limits before a shell
// container counts as leaked.
const shellGrace = 60 * time.Second

// sweepShells is the maintainer's half of the shell reapers, part of the
// containers sweep: it force-removes a shell container of the app whose
// cairn.expires has passed by a minute, that exited more than a minute
// ago, or that is still "created" a minute past the open timeout — only
// this stack's own, as for sidecars. Live shells on a server that is alive
// are the server's reaper's business, not this one's.
func (p *pass) sweepShells(ctx context.Context) {
	if p.r.cfg.Shells == nil {
		return
	}
	list, err := p.r.cfg.Shells.ListShells(ctx)
	if err != nil {
		p.fail(sweepContainers, "shell container listing failed", err)
		return
	}
	for _, c := range list {
		why := p.shellLeak(c)
		if why == "" || !p.owns(ctx, Container{Instance: c.Instance, WorkspaceID: c.WorkspaceID}) {
			continue
		}
		if err := p.r.cfg.Shells.RemoveContainer(ctx, c.ContainerID); err != nil {
			p.fail(sweepContainers, "remove shell container "+shortID(c.ContainerID), err)
			continue
		}
		p.res.ContainersRemoved++
		p.r.log.Warn("removed a leaked shell container", "sweep", sweepContainers, "shell_id", c.ShellID,
			"workspace_id", c.WorkspaceID, "instance", c.Instance, "why", why)
	}
}

// shellLeak says why c is a leftover, or "" when it is not (yet) one.
func (p *pass) shellLeak(c service.ShellContainer) string {
	open := p.r.cfg.ShellOpenTimeout
	if open == 0 {
		open = 30 * time.Second
	}
	switch {
	case !c.Expires.IsZero() && p.now.After(c.Expires.Add(shellGrace)):
		return "expired"
	case (c.State == "exited" || c.State == "dead") && !c.FinishedAt.IsZero() && p.now.Sub(c.FinishedAt) > shellGrace:
		return "exited"
	case c.State == "created" && p.now.Sub(c.Created) > open+shellGrace:
		return "never started"
	}
	return ""
}
