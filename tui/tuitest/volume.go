package tuitest

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairn-dev/cairn"
)

// VolumeCall is one call the TUI made on a workspace volume, with the paths
// exactly as it sent them.
type VolumeCall struct {
	// Method is ListFiles, ReadFile, ArtifactFromVolume, LoadIntoVolume,
	// UpdateFromVolume, UnpackArtifact, WriteFile, RemovePath, MakeDir or
	// MovePath.
	Method      string
	WorkspaceID string
	ArtifactID  string
	Path        string
	After       string // ListFiles
	Limit       int    // ListFiles
	Length      int64  // ReadFile
	Name        string // ArtifactFromVolume
	Format      string // ArtifactFromVolume
	Data        string // WriteFile
	IfMatch     string // WriteFile
	CreateOnly  bool   // WriteFile
	Recursive   bool   // RemovePath
	To          string // MovePath
}

// String renders a call for failure messages.
func (c VolumeCall) String() string {
	return fmt.Sprintf("%s(%s%s %q)", c.Method, c.WorkspaceID, c.ArtifactID, c.Path)
}

func (b *Backend) record(c VolumeCall) {
	b.callsMu.Lock()
	b.calls = append(b.calls, c)
	b.callsMu.Unlock()
}

// VolumeCalls is every volume call so far, oldest first.
func (b *Backend) VolumeCalls() []VolumeCall {
	b.callsMu.Lock()
	defer b.callsMu.Unlock()
	return slices.Clone(b.calls)
}

// VolumeCallsOf is the volume calls of one method.
func (b *Backend) VolumeCallsOf(method string) []VolumeCall {
	var out []VolumeCall
	for _, c := range b.VolumeCalls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func (b *Backend) ListFiles(ctx context.Context, wsID string, p cairn.FileListParams) (*cairn.FileListing, error) {
	b.record(VolumeCall{Method: "ListFiles", WorkspaceID: wsID, Path: p.Path, After: p.After, Limit: p.Limit})
	return or(b.ListFilesFunc, b.Client.ListFiles, b.ListFilesFunc != nil)(ctx, wsID, p)
}

func (b *Backend) ReadFile(ctx context.Context, wsID string, p cairn.FileReadParams) (*cairn.FileContent, error) {
	b.record(VolumeCall{Method: "ReadFile", WorkspaceID: wsID, Path: p.Path, Length: p.Length})
	return or(b.ReadFileFunc, b.Client.ReadFile, b.ReadFileFunc != nil)(ctx, wsID, p)
}

func (b *Backend) WriteFile(ctx context.Context, wsID string, p cairn.FileWriteParams) (*cairn.FileChange, error) {
	b.record(VolumeCall{Method: "WriteFile", WorkspaceID: wsID, Path: p.Path, Data: string(p.Data), IfMatch: p.IfMatch, CreateOnly: p.CreateOnly})
	return or(b.WriteFileFunc, b.Client.WriteFile, b.WriteFileFunc != nil)(ctx, wsID, p)
}

func (b *Backend) RemovePath(ctx context.Context, wsID string, p cairn.FileRemoveParams) (*cairn.FileChange, error) {
	b.record(VolumeCall{Method: "RemovePath", WorkspaceID: wsID, Path: p.Path, Recursive: p.Recursive})
	return or(b.RemovePathFunc, b.Client.RemovePath, b.RemovePathFunc != nil)(ctx, wsID, p)
}

func (b *Backend) MakeDir(ctx context.Context, wsID string, p cairn.MakeDirParams) (*cairn.FileChange, error) {
	b.record(VolumeCall{Method: "MakeDir", WorkspaceID: wsID, Path: p.Path})
	return or(b.MakeDirFunc, b.Client.MakeDir, b.MakeDirFunc != nil)(ctx, wsID, p)
}

func (b *Backend) MovePath(ctx context.Context, wsID string, p cairn.MoveParams) (*cairn.FileChange, error) {
	b.record(VolumeCall{Method: "MovePath", WorkspaceID: wsID, Path: p.From, To: p.To})
	return or(b.MovePathFunc, b.Client.MovePath, b.MovePathFunc != nil)(ctx, wsID, p)
}

func (b *Backend) UnpackArtifact(ctx context.Context, id, dir string) (*cairn.UnpackResult, error) {
	b.record(VolumeCall{Method: "UnpackArtifact", ArtifactID: id, Path: dir})
	return or(b.UnpackArtifactFunc, b.Client.UnpackArtifact, b.UnpackArtifactFunc != nil)(ctx, id, dir)
}

func (b *Backend) ArtifactFromVolume(ctx context.Context, wsID string, c cairn.VolumeArtifactCreate) (*cairn.Artifact, error) {
	b.record(VolumeCall{Method: "ArtifactFromVolume", WorkspaceID: wsID, Path: c.SourcePath, Name: c.Name, Format: c.Format})
	return or(b.ArtifactFromVolumeFunc, b.Client.ArtifactFromVolume, b.ArtifactFromVolumeFunc != nil)(ctx, wsID, c)
}

func (b *Backend) UpdateFromVolume(ctx context.Context, id, p string) (*cairn.Artifact, error) {
	b.record(VolumeCall{Method: "UpdateFromVolume", ArtifactID: id, Path: p})
	return b.Client.UpdateFromVolume(ctx, id, p)
}

func (b *Backend) LoadIntoVolume(ctx context.Context, id, p string) error {
	b.record(VolumeCall{Method: "LoadIntoVolume", ArtifactID: id, Path: p})
	return or(b.LoadIntoVolumeFunc, b.Client.LoadIntoVolume, b.LoadIntoVolumeFunc != nil)(ctx, id, p)
}
