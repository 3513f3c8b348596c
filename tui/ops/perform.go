package ops

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/optional"
)

// Backend is what operations ask of the server.
type Backend interface {
	cairn.WorkspaceService
	cairn.ArtifactService
	cairn.VolumeTransferService
	cairn.FileService
	cairn.FileWriter
	cairn.MaintenanceService
	cairn.SnapshotService
	cairn.LifecycleService
}

// DoneMsg settles an operation: the object it returned, the mount count
// a volume change left, or its error.
type DoneMsg struct {
	Op     Op
	WS     *cairn.Workspace
	Art    *cairn.Artifact
	Mounts int
	Sweep  *cairn.SweepResult
	Unpack *cairn.UnpackResult
	Change *cairn.FileChange
	// Snapshot is the snapshot a take recorded; Restore what a restore
	// wrote.
	Snapshot *cairn.Snapshot
	Restore  *cairn.RestoreResult
	Err      error
	// Now is the model's time (the server's clock) when the op settled,
	// for the times its toast counts down to.
	Now time.Time
}

// Perform runs one op; it runs in a Cmd.
func Perform(ctx context.Context, b Backend, o Op) DoneMsg {
	done := DoneMsg{Op: o}
	if o.ChangesFiles() {
		done.Change, done.Err = changeFile(ctx, b, o)
		return done
	}
	if o.IsSnapshot() {
		return performSnapshot(ctx, b, o)
	}
	switch o.Kind {
	case Create:
		done.WS, done.Err = b.CreateWorkspace(ctx, createOf(o))
	case EditWorkspace:
		done.WS, done.Err = editWorkspace(ctx, b, o)
	case EditArtifact:
		done.Art, done.Err = editArtifact(ctx, b, o)
	case Provision, Teardown:
		done.Err = volume(ctx, b, o)
		if done.Err == nil {
			done.WS, done.Mounts, done.Err = inspected(ctx, b, o.WSID)
		}
	case DeleteWorkspace:
		done.Err = b.DeleteWorkspace(ctx, o.WSID)
	case DeleteArtifact:
		done.Err = b.DeleteArtifact(ctx, o.ArtID)
	case VolSave:
		done.Art, done.Err = b.ArtifactFromVolume(ctx, o.WSID, cairn.VolumeArtifactCreate{SourcePath: o.Path, Name: o.Name,
			Description: o.Desc, Format: o.Format})
	case VolLoad:
		done.Err = b.LoadIntoVolume(ctx, o.ArtID, o.Path)
	case VolUpdate:
		done.Art, done.Err = b.UpdateFromVolume(ctx, o.ArtID, o.Path)
	case Sweep:
		done.Sweep, done.Err = b.Sweep(ctx, o.WSID)
	case Touch:
		done.WS, done.Err = b.TouchWorkspace(ctx, o.WSID)
	case Unpack:
		done.Unpack, done.Err = b.UnpackArtifact(ctx, o.ArtID, o.Path)
	}
	return done
}

// changeFile asks the server's writer for one change of the volume. The
// client never repeats one (a repeat would be refused although the first
// was made), so a failure is reported as it came.
func changeFile(ctx context.Context, b Backend, o Op) (*cairn.FileChange, error) {
	switch o.Kind {
	case MakeDir:
		return b.MakeDir(ctx, o.WSID, cairn.MakeDirParams{Path: o.Path})
	case RemovePath:
		return b.RemovePath(ctx, o.WSID, cairn.FileRemoveParams{Path: o.Path, Recursive: o.Recursive})
	case MovePath:
		return b.MovePath(ctx, o.WSID, cairn.MoveParams{From: o.Path, To: o.To})
	}
	return b.WriteFile(ctx, o.WSID, cairn.FileWriteParams{Path: o.Path, Data: o.Data, IfMatch: o.IfMatch, CreateOnly: o.CreateOnly})
}

func volume(ctx context.Context, b Backend, o Op) error {
	if o.Kind == Provision {
		return b.SetupVolume(ctx, o.WSID)
	}
	return b.TeardownVolume(ctx, o.WSID)
}

func inspected(ctx context.Context, b Backend, id string) (*cairn.Workspace, int, error) {
	d, err := b.InspectWorkspace(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	return d.Workspace, d.MountCount, nil
}

// editWorkspace sends the name, then the description, each only if it
// changed.
func editWorkspace(ctx context.Context, b Backend, o Op) (*cairn.Workspace, error) {
	var w *cairn.Workspace
	var err error
	if o.Name != "" {
		if w, err = b.RenameWorkspace(ctx, o.WSID, o.Name); err != nil {
			return nil, err
		}
	}
	if o.SetDesc {
		return b.SetWorkspaceDescription(ctx, o.WSID, o.Desc)
	}
	return w, nil
}

func editArtifact(ctx context.Context, b Backend, o Op) (*cairn.Artifact, error) {
	var a *cairn.Artifact
	var err error
	if o.Name != "" {
		if a, err = b.RenameArtifact(ctx, o.ArtID, o.Name); err != nil {
			return nil, err
		}
	}
	if o.SetDesc {
		return b.SetArtifactDescription(ctx, o.ArtID, o.Desc)
	}
	return a, nil
}

// createOf is what a create op asks the server for.
func createOf(o Op) cairn.WorkspaceCreate {
	c := cairn.WorkspaceCreate{Name: o.Name, Description: o.Desc}
	if o.SizeBytes > 0 {
		c.VolumeMetadata = &cairn.VolumeMetadata{SizeBytes: &o.SizeBytes}
	}
	return c
}

// DoneText is a settled op's success toast.
func DoneText(d DoneMsg) string {
	o := d.Op
	switch o.Kind {
	case Create:
		return "created " + o.Name
	case EditWorkspace, EditArtifact:
		if o.Name != "" {
			return "renamed " + o.Subject() + " to " + o.Name
		}
		return "saved the description of " + o.Subject()
	case Provision:
		return "provisioned a volume for " + o.WSName
	case Teardown:
		return "tore down the volume of " + o.WSName
	case VolSave:
		size := ""
		if d.Art != nil {
			size = " (" + termkit.Size(d.Art.Size) + ")"
		}
		if o.Format != "" {
			return "packed " + o.Path + " as " + o.Name + size
		}
		return "saved " + o.Path + " as " + o.Name + size
	case Unpack:
		return unpackedText(o, d.Unpack)
	case VolLoad:
		return "loaded " + o.ArtName + " into " + o.Path
	case VolUpdate:
		if o.Repair {
			return "repaired " + o.ArtName + " from " + o.Path
		}
		return "updated " + o.ArtName + " from " + o.Path
	case Sweep:
		return sweptText(o.WSName, d.Sweep)
	case Touch:
		return touchedText(o.WSName, d.WS, d.Now)
	case MakeDir, MovePath, PutFile, SaveEdit:
		return changedText(o)
	case RemovePath:
		return "deleted " + o.Path
	case TakeSnapshot, RestoreSnapshot, DeleteSnapshot, Fork:
		return snapshotText(d)
	}
	return "deleted " + o.Subject()
}

// changedText is the toast of a change that left something at a path.
func changedText(o Op) string {
	size := " (" + termkit.Size(int64(len(o.Data))) + ")"
	switch o.Kind {
	case MakeDir:
		return "made the directory " + o.Path
	case MovePath:
		if path.Dir(o.Path) == path.Dir(o.To) {
			return "renamed " + o.Path + " to " + path.Base(o.To)
		}
		return "moved " + o.Path + " to " + o.To
	case PutFile:
		return "uploaded " + o.Local + " to " + o.Path + size
	}
	return "saved your edit of " + o.Path + size
}

// sweptText is a sweep's toast: what it flagged.
func sweptText(ws string, r *cairn.SweepResult) string {
	if r == nil || r.ArtifactsFlagged == 0 {
		return "swept " + ws + ": every object is in the store"
	}
	n := int64(r.ArtifactsFlagged)
	return fmt.Sprintf("swept %s: %d %s MISSING_OBJECT", ws, n, termkit.Plural(n, "artifact flagged", "artifacts flagged"))
}

// unpackedText is an unpack's toast: where, and what it wrote.
func unpackedText(o Op, r *cairn.UnpackResult) string {
	text := "unpacked " + o.ArtName + " into " + o.Path
	if r == nil {
		return text
	}
	return text + " (" + Entries(int64(r.Entries), r.Bytes) + ")"
}

// touchedText is a touch's toast: the expiry it moved to, or that the
// workspace has none (only its idle clock restarted), at now, the
// server's time.
func touchedText(ws string, w *cairn.Workspace, now time.Time) string {
	switch {
	case w == nil || w.ExpiresAt == nil:
		return "touched " + ws + ": it does not expire; its idle clock restarted"
	case w.TTLSecs == nil:
		return "touched " + ws + ": it still expires " + optional.Expiry(now, *w.ExpiresAt) + ", a fixed time; its idle clock restarted"
	}
	return "touched " + ws + ": it now expires " + optional.Expiry(now, *w.ExpiresAt)
}
