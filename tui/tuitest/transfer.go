package tuitest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell"
)

func digest(b []byte) *string {
	sum := sha256.Sum256(b)
	s := base64.StdEncoding.EncodeToString(sum[:])
	return &s
}

// SetContent stores an artifact's bytes (its size and digest follow).
func (w *World) SetContent(id string, b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.content[id] = append([]byte(nil), b...)
	if a, ok := w.arts[id]; ok {
		a.Size, a.SHA256B64 = int64(len(b)), digest(b)
	}
}

// Content is an artifact's stored bytes.
func (w *World) Content(id string) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.content[id]...)
}

func (b *Backend) Upload(ctx context.Context, wsID, p string, o client.UploadOptions) (*cairn.Artifact, error) {
	if b.UploadFunc != nil {
		return b.UploadFunc(ctx, wsID, p, o)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	name := o.Name
	if name == "" {
		name = client.ArtifactName(p)
	}
	report(o.Progress, o.PhaseProgress, len(data), client.PhaseHashing, client.PhaseUploading)
	desc := ""
	if o.Description != nil {
		desc = *o.Description
	}
	a := b.World.AddArtifact(wsID, name, cairn.ArtifactRecorded, int64(len(data)), desc)
	b.World.SetContent(a.ID, data)
	return b.World.artifact(a.ID), nil
}

// report tells the transfer's callbacks that every byte moved: an
// upload's hash pass and PUT, or a download's GET.
func report(p client.Progress, pp client.PhaseProgress, n int, phases ...client.Phase) {
	if p != nil {
		p(int64(n), int64(n))
	}
	for _, ph := range phases {
		if pp != nil {
			pp(ph, int64(n), int64(n))
		}
	}
}

func (w *World) artifact(id string) *cairn.Artifact {
	w.mu.Lock()
	defer w.mu.Unlock()
	if a, ok := w.arts[id]; ok {
		return copyArt(a)
	}
	return nil
}

func (b *Backend) Replace(ctx context.Context, id, p string, o client.UploadOptions) (*cairn.Artifact, error) {
	if b.ReplaceFunc != nil {
		return b.ReplaceFunc(ctx, id, p, o)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	report(o.Progress, o.PhaseProgress, len(data), client.PhaseHashing, client.PhaseUploading)
	a := b.World.UpdateArtifact(id, func(a *cairn.Artifact) { a.State = cairn.ArtifactRecorded })
	if a == nil {
		return nil, notFound("artifact")
	}
	b.World.SetContent(id, data)
	return b.World.artifact(id), nil
}

func (b *Backend) Download(ctx context.Context, id, dest string, o client.DownloadOptions) (*cairn.Artifact, error) {
	if b.DownloadFunc != nil {
		return b.DownloadFunc(ctx, id, dest, o)
	}
	a := b.World.artifact(id)
	if a == nil {
		return nil, notFound("artifact")
	}
	if a.State != cairn.ArtifactRecorded {
		return nil, &cairn.Error{Reason: cairn.ReasonObjectMissing, Status: 409}
	}
	if _, err := os.Stat(dest); err == nil && !o.Overwrite {
		return nil, fmt.Errorf("%s: %w", dest, fs.ErrExist)
	}
	data := b.World.Content(id)
	report(o.Progress, o.PhaseProgress, len(data), client.PhaseDownloading)
	return a, os.WriteFile(dest, data, 0o600)
}

func (b *Backend) ReadHead(ctx context.Context, id string, n int64) ([]byte, int64, error) {
	if b.ReadHeadFunc != nil {
		return b.ReadHeadFunc(ctx, id, n)
	}
	a := b.World.artifact(id)
	if a == nil {
		return nil, 0, notFound("artifact")
	}
	data := b.World.Content(id)
	return data[:min(int64(len(data)), n)], int64(len(data)), nil
}

func (b *Backend) Shell(ctx context.Context, wsID string, size ptyshell.Size, term string) (*ptyshell.Session, error) {
	if b.ShellFunc != nil {
		return b.ShellFunc(ctx, wsID, size, term)
	}
	return nil, unsupported()
}

func (b *Backend) FindShells(ctx context.Context, wsID string) (*cairn.ShellList, error) {
	if b.FindShellsFunc != nil {
		return b.FindShellsFunc(ctx, wsID)
	}
	return &cairn.ShellList{Enabled: true, Shells: []*cairn.Shell{}}, nil
}

// Sweep answers a pass that flagged nothing, unless SweepFunc says
// otherwise.
func (b *Backend) Sweep(ctx context.Context, wsID string) (*cairn.SweepResult, error) {
	if b.SweepFunc != nil {
		return b.SweepFunc(ctx, wsID)
	}
	return &cairn.SweepResult{WorkspaceID: wsID}, nil
}

// PendingUploads lists no interrupted uploads unless PendingUploadsFunc
// says otherwise.
func (b *Backend) PendingUploads(stateDir string) ([]client.PendingUpload, error) {
	if b.PendingUploadsFunc != nil {
		return b.PendingUploadsFunc(stateDir)
	}
	return nil, nil
}

// PendingProgress answers that the store holds none of the parts unless
// PendingProgressFunc says otherwise.
func (b *Backend) PendingProgress(ctx context.Context, p client.PendingUpload) (int, int64, error) {
	if b.PendingProgressFunc != nil {
		return b.PendingProgressFunc(ctx, p)
	}
	return 0, 0, nil
}

// DiscardUpload succeeds unless DiscardUploadFunc says otherwise.
func (b *Backend) DiscardUpload(ctx context.Context, p client.PendingUpload) error {
	if b.DiscardUploadFunc != nil {
		return b.DiscardUploadFunc(ctx, p)
	}
	return nil
}
