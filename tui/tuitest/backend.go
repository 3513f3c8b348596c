package tuitest

import (
	"context"
	"sync"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell"
)

// Backend is a fake of tui.Backend. Each method calls its Func field when
// set, else the World (MintStaging and the register/replace calls, which
// the TUI makes only through Upload and Replace, and Shell fail unless
// set). The volume calls are recorded (VolumeCalls) either way.
type Backend struct {
	World  *World
	Source *Source

	CreateWorkspaceFunc            func(ctx context.Context, c cairn.WorkspaceCreate) (*cairn.Workspace, error)
	FindWorkspacesFunc             func(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error)
	InspectWorkspaceFunc           func(ctx context.Context, id string) (*cairn.WorkspaceDetail, error)
	RenameWorkspaceFunc            func(ctx context.Context, id, name string) (*cairn.Workspace, error)
	SetWorkspaceDescriptionFunc    func(ctx context.Context, id string, d *string) (*cairn.Workspace, error)
	SetWorkspaceVolumeMetadataFunc func(ctx context.Context, id string, m *cairn.VolumeMetadata) (*cairn.Workspace, error)
	DeleteWorkspaceFunc            func(ctx context.Context, id string) error
	SetupVolumeFunc                func(ctx context.Context, id string) error
	TeardownVolumeFunc             func(ctx context.Context, id string) error

	MintStagingFunc            func(ctx context.Context, wsID string, r cairn.StagingRequest) (*cairn.Staging, error)
	RegisterArtifactFunc       func(ctx context.Context, wsID string, c cairn.ArtifactCreate) (*cairn.Artifact, error)
	FindArtifactsFunc          func(ctx context.Context, f cairn.ArtifactFilter) ([]*cairn.Artifact, error)
	GetArtifactFunc            func(ctx context.Context, id string, g cairn.ArtifactGet) (*cairn.ArtifactDetail, error)
	RenameArtifactFunc         func(ctx context.Context, id, name string) (*cairn.Artifact, error)
	SetArtifactDescriptionFunc func(ctx context.Context, id string, d *string) (*cairn.Artifact, error)
	ReplaceContentFunc         func(ctx context.Context, id string, src cairn.Staged) (*cairn.Artifact, error)
	DeleteArtifactFunc         func(ctx context.Context, id string) error

	EventsFunc func(ctx context.Context, f cairn.EventFilter) (cairn.EventStream, error)

	UploadFunc   func(ctx context.Context, wsID, path string, o client.UploadOptions) (*cairn.Artifact, error)
	ReplaceFunc  func(ctx context.Context, id, path string, o client.UploadOptions) (*cairn.Artifact, error)
	DownloadFunc func(ctx context.Context, id, dest string, o client.DownloadOptions) (*cairn.Artifact, error)
	ReadHeadFunc func(ctx context.Context, id string, n int64) ([]byte, int64, error)

	PendingUploadsFunc  func(stateDir string) ([]client.PendingUpload, error)
	PendingProgressFunc func(ctx context.Context, p client.PendingUpload) (int, int64, error)
	DiscardUploadFunc   func(ctx context.Context, p client.PendingUpload) error

	ArtifactFromVolumeFunc func(ctx context.Context, wsID string, c cairn.VolumeArtifactCreate) (*cairn.Artifact, error)
	UpdateFromVolumeFunc   func(ctx context.Context, id, path string) (*cairn.Artifact, error)
	LoadIntoVolumeFunc     func(ctx context.Context, id, path string) error

	ListFilesFunc      func(ctx context.Context, wsID string, p cairn.FileListParams) (*cairn.FileListing, error)
	ReadFileFunc       func(ctx context.Context, wsID string, p cairn.FileReadParams) (*cairn.FileContent, error)
	UnpackArtifactFunc func(ctx context.Context, id, dir string) (*cairn.UnpackResult, error)

	callsMu sync.Mutex
	calls   []VolumeCall

	ShellFunc      func(ctx context.Context, wsID string, size ptyshell.Size, term string) (*ptyshell.Session, error)
	SweepFunc      func(ctx context.Context, wsID string) (*cairn.SweepResult, error)
	FindShellsFunc func(ctx context.Context, wsID string) (*cairn.ShellList, error)
	KillShellFunc  func(ctx context.Context, id string) error
	// CreateShellFunc and AttachShellFunc are v2's; without them the
	// fake is a server without v2.
	CreateShellFunc func(ctx context.Context, wsID string, size ptyshell.Size, term string) (*cairn.ShellSessionInfo, error)
	AttachShellFunc func(ctx context.Context, id, secret string, size ptyshell.Size) (*ptyshell.Session, error)
	WatchShellFunc  func(ctx context.Context, id string, size ptyshell.Size) (*ptyshell.Session, error)
	AuditFunc       func(ctx context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error)
}

var (
	_ cairn.WorkspaceService      = (*Backend)(nil)
	_ cairn.ArtifactService       = (*Backend)(nil)
	_ cairn.EventService          = (*Backend)(nil)
	_ cairn.VolumeTransferService = (*Backend)(nil)
	_ cairn.FileService           = (*Backend)(nil)
)

// NewBackend returns a fake over a new world and event source.
func NewBackend(clock *Clock) *Backend {
	return &Backend{World: NewWorld(clock), Source: NewSource()}
}

func unsupported() error { return cairn.Errorf(cairn.ReasonInternal, "not faked") }

func (b *Backend) CreateWorkspace(ctx context.Context, c cairn.WorkspaceCreate) (*cairn.Workspace, error) {
	if b.CreateWorkspaceFunc != nil {
		return b.CreateWorkspaceFunc(ctx, c)
	}
	return b.World.createWorkspace(ctx, c)
}

func (b *Backend) FindWorkspaces(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
	if b.FindWorkspacesFunc != nil {
		return b.FindWorkspacesFunc(ctx, f)
	}
	return b.World.findWorkspaces(ctx, f)
}

func (b *Backend) InspectWorkspace(ctx context.Context, id string) (*cairn.WorkspaceDetail, error) {
	if b.InspectWorkspaceFunc != nil {
		return b.InspectWorkspaceFunc(ctx, id)
	}
	return b.World.inspectWorkspace(ctx, id)
}

func (b *Backend) RenameWorkspace(ctx context.Context, id, name string) (*cairn.Workspace, error) {
	if b.RenameWorkspaceFunc != nil {
		return b.RenameWorkspaceFunc(ctx, id, name)
	}
	return b.World.renameWorkspace(ctx, id, name)
}

func (b *Backend) SetWorkspaceDescription(ctx context.Context, id string, d *string) (*cairn.Workspace, error) {
	if b.SetWorkspaceDescriptionFunc != nil {
		return b.SetWorkspaceDescriptionFunc(ctx, id, d)
	}
	return b.World.describeWorkspace(ctx, id, d)
}

func (b *Backend) SetWorkspaceVolumeMetadata(ctx context.Context, id string, m *cairn.VolumeMetadata) (*cairn.Workspace, error) {
	if b.SetWorkspaceVolumeMetadataFunc != nil {
		return b.SetWorkspaceVolumeMetadataFunc(ctx, id, m)
	}
	return nil, unsupported()
}

func (b *Backend) DeleteWorkspace(ctx context.Context, id string) error {
	if b.DeleteWorkspaceFunc != nil {
		return b.DeleteWorkspaceFunc(ctx, id)
	}
	return b.World.deleteWorkspace(ctx, id)
}

func (b *Backend) SetupVolume(ctx context.Context, id string) error {
	if b.SetupVolumeFunc != nil {
		return b.SetupVolumeFunc(ctx, id)
	}
	return b.World.setVolume(id, cairn.VolumeReady)
}

func (b *Backend) TeardownVolume(ctx context.Context, id string) error {
	if b.TeardownVolumeFunc != nil {
		return b.TeardownVolumeFunc(ctx, id)
	}
	return b.World.teardown(ctx, id)
}

func (b *Backend) MintStaging(ctx context.Context, wsID string, r cairn.StagingRequest) (*cairn.Staging, error) {
	if b.MintStagingFunc != nil {
		return b.MintStagingFunc(ctx, wsID, r)
	}
	return nil, unsupported()
}

func (b *Backend) RegisterArtifact(ctx context.Context, wsID string, c cairn.ArtifactCreate) (*cairn.Artifact, error) {
	if b.RegisterArtifactFunc != nil {
		return b.RegisterArtifactFunc(ctx, wsID, c)
	}
	return nil, unsupported()
}

func (b *Backend) FindArtifacts(ctx context.Context, f cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
	if b.FindArtifactsFunc != nil {
		return b.FindArtifactsFunc(ctx, f)
	}
	return b.World.findArtifacts(ctx, f)
}

func (b *Backend) GetArtifact(ctx context.Context, id string, g cairn.ArtifactGet) (*cairn.ArtifactDetail, error) {
	if b.GetArtifactFunc != nil {
		return b.GetArtifactFunc(ctx, id, g)
	}
	return b.World.getArtifact(ctx, id, g)
}

func (b *Backend) RenameArtifact(ctx context.Context, id, name string) (*cairn.Artifact, error) {
	if b.RenameArtifactFunc != nil {
		return b.RenameArtifactFunc(ctx, id, name)
	}
	return b.World.renameArtifact(ctx, id, name)
}

func (b *Backend) SetArtifactDescription(ctx context.Context, id string, d *string) (*cairn.Artifact, error) {
	if b.SetArtifactDescriptionFunc != nil {
		return b.SetArtifactDescriptionFunc(ctx, id, d)
	}
	return b.World.describeArtifact(ctx, id, d)
}

func (b *Backend) ReplaceContent(ctx context.Context, id string, src cairn.Staged) (*cairn.Artifact, error) {
	if b.ReplaceContentFunc != nil {
		return b.ReplaceContentFunc(ctx, id, src)
	}
	return nil, unsupported()
}

// The multipart calls are the client's business; the TUI's fake world has
// no store behind it.
func (b *Backend) MintParts(context.Context, string, cairn.PartRequest) (*cairn.PartURLs, error) {
	return nil, unsupported()
}

func (b *Backend) UploadedParts(context.Context, string, string, string) ([]cairn.UploadedPart, error) {
	return nil, unsupported()
}

func (b *Backend) AbortUpload(context.Context, string, string, string) error { return unsupported() }

func (b *Backend) DeleteArtifact(ctx context.Context, id string) error {
	if b.DeleteArtifactFunc != nil {
		return b.DeleteArtifactFunc(ctx, id)
	}
	b.World.DeleteArtifact(id)
	return nil
}

func (b *Backend) Events(ctx context.Context, f cairn.EventFilter) (cairn.EventStream, error) {
	if b.EventsFunc != nil {
		return b.EventsFunc(ctx, f)
	}
	return b.Source.Events(ctx, f)
}
