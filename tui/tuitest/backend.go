// Package tuitest holds cairn-tui's test scaffolding: a Backend that is a
// real client of clienttest's in-memory server (the one fake server, held to
// the real one by the client's contract suite), a World to seed that server
// with, a clipboard, a settable clock and the golden sizes. It keeps no
// server rule of its own. It does not import package tui, so tui's own
// tests can use it.
package tuitest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/client/clienttest"
	"github.com/cairn-dev/cairn/ptyshell"
)

// Backend is what the TUI's tests hand it as its backend: a client of a
// clienttest server (World), stamping with the test's clock. A test
// replaces one call by setting its Func field, to script an answer the fake
// server does not give (a shell list, an audit trail, a sweep, the
// server's info, the file writes and the versions they check) or to watch
// the call; the volume calls are recorded either way (VolumeCalls).
type Backend struct {
	*client.Client
	World *World

	CreateWorkspaceFunc func(ctx context.Context, c cairn.WorkspaceCreate) (*cairn.Workspace, error)
	FindWorkspacesFunc  func(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error)
	SetupVolumeFunc     func(ctx context.Context, id string) error
	TeardownVolumeFunc  func(ctx context.Context, id string) error
	DeleteArtifactFunc  func(ctx context.Context, id string) error

	UploadFunc   func(ctx context.Context, wsID, path string, o client.UploadOptions) (*cairn.Artifact, error)
	ReplaceFunc  func(ctx context.Context, id, path string, o client.UploadOptions) (*cairn.Artifact, error)
	DownloadFunc func(ctx context.Context, id, dest string, o client.DownloadOptions) (*cairn.Artifact, error)
	ReadHeadFunc func(ctx context.Context, id string, n int64) ([]byte, int64, error)

	PendingUploadsFunc  func(stateDir string) ([]client.PendingUpload, error)
	PendingProgressFunc func(ctx context.Context, p client.PendingUpload) (int, int64, error)
	DiscardUploadFunc   func(ctx context.Context, p client.PendingUpload) error

	ArtifactFromVolumeFunc func(ctx context.Context, wsID string, c cairn.VolumeArtifactCreate) (*cairn.Artifact, error)
	LoadIntoVolumeFunc     func(ctx context.Context, id, path string) error
	ListFilesFunc          func(ctx context.Context, wsID string, p cairn.FileListParams) (*cairn.FileListing, error)
	ReadFileFunc           func(ctx context.Context, wsID string, p cairn.FileReadParams) (*cairn.FileContent, error)
	UnpackArtifactFunc     func(ctx context.Context, id, dir string) (*cairn.UnpackResult, error)

	WriteFileFunc  func(ctx context.Context, wsID string, p cairn.FileWriteParams) (*cairn.FileChange, error)
	RemovePathFunc func(ctx context.Context, wsID string, p cairn.FileRemoveParams) (*cairn.FileChange, error)
	MakeDirFunc    func(ctx context.Context, wsID string, p cairn.MakeDirParams) (*cairn.FileChange, error)
	MovePathFunc   func(ctx context.Context, wsID string, p cairn.MoveParams) (*cairn.FileChange, error)
	InfoFunc       func(ctx context.Context) (*cairn.Info, error)

	// FilesEventsFunc answers the subscriptions to a workspace's file
	// changes (see Events).
	FilesEventsFunc func(ctx context.Context, f cairn.EventFilter) (cairn.EventStream, error)

	SweepFunc func(ctx context.Context, wsID string) (*cairn.SweepResult, error)
	AuditFunc func(ctx context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error)

	ShellFunc      func(ctx context.Context, wsID string, size ptyshell.Size, term string) (*ptyshell.Session, error)
	FindShellsFunc func(ctx context.Context, wsID string) (*cairn.ShellList, error)
	KillShellFunc  func(ctx context.Context, id string) error
	// CreateShellFunc, AttachShellFunc and WatchShellFunc are v2's; the
	// fake server has no v2, so the TUI dials v1's Shell without them.
	CreateShellFunc func(ctx context.Context, wsID string, size ptyshell.Size, term string) (*cairn.ShellSessionInfo, error)
	AttachShellFunc func(ctx context.Context, id, secret string, size ptyshell.Size) (*ptyshell.Session, error)
	WatchShellFunc  func(ctx context.Context, id string, size ptyshell.Size) (*ptyshell.Session, error)

	callsMu sync.Mutex
	calls   []VolumeCall
}

// NewBackend starts a fake server stamping with clock and returns its
// client; the server closes with the test.
func NewBackend(t testing.TB, clock *Clock) *Backend {
	t.Helper()
	s := clienttest.New(t, clienttest.WithClock(clock.Now))
	return &Backend{Client: s.Client(t), World: &World{s}}
}

// or is the Func f when set, else the client's own call.
func or[F any](f, client F, set bool) F {
	if set {
		return f
	}
	return client
}

func (b *Backend) CreateWorkspace(ctx context.Context, c cairn.WorkspaceCreate) (*cairn.Workspace, error) {
	return or(b.CreateWorkspaceFunc, b.Client.CreateWorkspace, b.CreateWorkspaceFunc != nil)(ctx, c)
}

func (b *Backend) FindWorkspaces(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
	return or(b.FindWorkspacesFunc, b.Client.FindWorkspaces, b.FindWorkspacesFunc != nil)(ctx, f)
}

// WorkspacePage lists conditionally, as the client does, unless
// FindWorkspacesFunc answers the lists.
func (b *Backend) WorkspacePage(ctx context.Context, f cairn.WorkspaceFilter, ifNoneMatch string) (*client.Listing[*cairn.Workspace], error) {
	if b.FindWorkspacesFunc == nil {
		return b.Client.WorkspacePage(ctx, f, ifNoneMatch)
	}
	rows, err := b.FindWorkspacesFunc(ctx, f)
	if err != nil {
		return nil, err
	}
	return &client.Listing[*cairn.Workspace]{Rows: rows}, nil
}

func (b *Backend) SetupVolume(ctx context.Context, id string) error {
	return or(b.SetupVolumeFunc, b.Client.SetupVolume, b.SetupVolumeFunc != nil)(ctx, id)
}

func (b *Backend) TeardownVolume(ctx context.Context, id string) error {
	return or(b.TeardownVolumeFunc, b.Client.TeardownVolume, b.TeardownVolumeFunc != nil)(ctx, id)
}

func (b *Backend) DeleteArtifact(ctx context.Context, id string) error {
	return or(b.DeleteArtifactFunc, b.Client.DeleteArtifact, b.DeleteArtifactFunc != nil)(ctx, id)
}

func (b *Backend) Upload(ctx context.Context, wsID, path string, o client.UploadOptions) (*cairn.Artifact, error) {
	return or(b.UploadFunc, b.Client.Upload, b.UploadFunc != nil)(ctx, wsID, path, o)
}

func (b *Backend) Replace(ctx context.Context, id, path string, o client.UploadOptions) (*cairn.Artifact, error) {
	return or(b.ReplaceFunc, b.Client.Replace, b.ReplaceFunc != nil)(ctx, id, path, o)
}

func (b *Backend) Download(ctx context.Context, id, dest string, o client.DownloadOptions) (*cairn.Artifact, error) {
	return or(b.DownloadFunc, b.Client.Download, b.DownloadFunc != nil)(ctx, id, dest, o)
}

func (b *Backend) ReadHead(ctx context.Context, id string, n int64) ([]byte, int64, error) {
	return or(b.ReadHeadFunc, b.Client.ReadHead, b.ReadHeadFunc != nil)(ctx, id, n)
}

func (b *Backend) PendingUploads(stateDir string) ([]client.PendingUpload, error) {
	return or(b.PendingUploadsFunc, b.Client.PendingUploads, b.PendingUploadsFunc != nil)(stateDir)
}

func (b *Backend) PendingProgress(ctx context.Context, p client.PendingUpload) (int, int64, error) {
	return or(b.PendingProgressFunc, b.Client.PendingProgress, b.PendingProgressFunc != nil)(ctx, p)
}

func (b *Backend) DiscardUpload(ctx context.Context, p client.PendingUpload) error {
	return or(b.DiscardUploadFunc, b.Client.DiscardUpload, b.DiscardUploadFunc != nil)(ctx, p)
}

func (b *Backend) Info(ctx context.Context) (*cairn.Info, error) {
	return or(b.InfoFunc, b.Client.Info, b.InfoFunc != nil)(ctx)
}

func (b *Backend) Sweep(ctx context.Context, wsID string) (*cairn.SweepResult, error) {
	return or(b.SweepFunc, b.Client.Sweep, b.SweepFunc != nil)(ctx, wsID)
}

func (b *Backend) FindAuditEvents(ctx context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error) {
	return or(b.AuditFunc, b.Client.FindAuditEvents, b.AuditFunc != nil)(ctx, f)
}

func (b *Backend) Shell(ctx context.Context, wsID string, size ptyshell.Size, term string) (*ptyshell.Session, error) {
	return or(b.ShellFunc, b.Client.Shell, b.ShellFunc != nil)(ctx, wsID, size, term)
}

func (b *Backend) FindShells(ctx context.Context, wsID string) (*cairn.ShellList, error) {
	return or(b.FindShellsFunc, b.Client.FindShells, b.FindShellsFunc != nil)(ctx, wsID)
}

func (b *Backend) KillShell(ctx context.Context, id string) error {
	return or(b.KillShellFunc, b.Client.KillShell, b.KillShellFunc != nil)(ctx, id)
}

func (b *Backend) CreateShell(ctx context.Context, wsID string, size ptyshell.Size, term string) (*cairn.ShellSessionInfo, error) {
	return or(b.CreateShellFunc, b.Client.CreateShell, b.CreateShellFunc != nil)(ctx, wsID, size, term)
}

func (b *Backend) AttachShell(ctx context.Context, id, secret string, size ptyshell.Size) (*ptyshell.Session, error) {
	return or(b.AttachShellFunc, b.Client.AttachShell, b.AttachShellFunc != nil)(ctx, id, secret, size)
}

// ReattachShell is AttachShellFunc, once, when it is set.
func (b *Backend) ReattachShell(ctx context.Context, id, secret string, lostAt time.Time, detached time.Duration,
	size func() (ptyshell.Size, error)) (*ptyshell.Session, error) {
	if b.AttachShellFunc == nil {
		return b.Client.ReattachShell(ctx, id, secret, lostAt, detached, size)
	}
	sz, err := size()
	if err != nil {
		sz = ptyshell.Size{Cols: 80, Rows: 24}
	}
	return b.AttachShellFunc(ctx, id, secret, sz)
}

func (b *Backend) WatchShell(ctx context.Context, id string, size ptyshell.Size) (*ptyshell.Session, error) {
	return or(b.WatchShellFunc, b.Client.WatchShell, b.WatchShellFunc != nil)(ctx, id, size)
}
