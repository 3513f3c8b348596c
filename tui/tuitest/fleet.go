package tuitest

import (
	"context"
	"net/http"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

// CreateShell answers as a server without v2 (404) unless CreateShellFunc
// says otherwise: the TUI then dials v1's Shell.
func (b *Backend) CreateShell(ctx context.Context, wsID string, size ptyshell.Size, term string) (*cairn.ShellSessionInfo, error) {
	if b.CreateShellFunc != nil {
		return b.CreateShellFunc(ctx, wsID, size, term)
	}
	return nil, &cairn.Error{Status: http.StatusNotFound, Message: "no such route"}
}

// AttachShell calls AttachShellFunc.
func (b *Backend) AttachShell(ctx context.Context, id, secret string, size ptyshell.Size) (*ptyshell.Session, error) {
	if b.AttachShellFunc != nil {
		return b.AttachShellFunc(ctx, id, secret, size)
	}
	return nil, unsupported()
}

// ReattachShell tries AttachShell once.
func (b *Backend) ReattachShell(ctx context.Context, id, secret string, _ time.Time, _ time.Duration,
	size func() (ptyshell.Size, error)) (*ptyshell.Session, error) {
	sz, err := size()
	if err != nil {
		sz = ptyshell.Size{Cols: 80, Rows: 24}
	}
	return b.AttachShell(ctx, id, secret, sz)
}

// WatchShell calls WatchShellFunc.
func (b *Backend) WatchShell(ctx context.Context, id string, size ptyshell.Size) (*ptyshell.Session, error) {
	if b.WatchShellFunc != nil {
		return b.WatchShellFunc(ctx, id, size)
	}
	return nil, unsupported()
}

// KillShell ends nothing unless KillShellFunc says otherwise.
func (b *Backend) KillShell(ctx context.Context, id string) error {
	if b.KillShellFunc != nil {
		return b.KillShellFunc(ctx, id)
	}
	return cairn.ErrShellNotFound(id)
}

// FindAuditEvents lists nothing unless AuditFunc says otherwise.
func (b *Backend) FindAuditEvents(ctx context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error) {
	if b.AuditFunc != nil {
		return b.AuditFunc(ctx, f)
	}
	return []*cairn.AuditEvent{}, nil
}
