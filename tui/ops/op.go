// Package ops is cairn-tui's operations: what one action asks of the
// server, run in a Cmd, and the tasks and pending marks the frame shows
// while it runs. The Runner owns that state; the root model settles an
// operation's reply (the store, the form, the toast).
package ops

import (
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/optional"
)

// Kind is an operation the TUI runs against the server.
type Kind uint8

const (
	Create Kind = iota + 1
	EditWorkspace
	EditArtifact
	Provision
	Teardown
	DeleteWorkspace
	DeleteArtifact
	VolSave   // a volume file as a new artifact
	VolLoad   // an artifact into the volume
	VolUpdate // an artifact's content from a volume file
	Sweep     // a reconciliation pass of one workspace, now
	Unpack    // an archive artifact into a new volume directory
	// The files pane's changes of the volume, each through the server's
	// writer sidecar.
	MakeDir    // a new directory
	RemovePath // a file, a symlink, or a directory with everything in it
	MovePath   // a rename or move within the volume
	PutFile    // a local file's bytes written into the volume
	SaveEdit   // an edited volume file written back
	// A workspace's snapshots, each a sidecar run on the server but the
	// delete.
	TakeSnapshot    // the volume's tree recorded as a snapshot
	RestoreSnapshot // the volume's contents replaced by a snapshot's tree
	DeleteSnapshot
	Fork // a new workspace from a snapshot of this one taken now
	// Touch postpones a workspace's expiry by its ttl and its archiving
	// (docs/api.md#expiry-and-archiving).
	Touch
)

// Op is one operation, captured by value in its Cmd.
type Op struct {
	ID          int
	Kind        Kind
	WSID, ArtID string
	WSName      string // the workspace's name when the op started
	ArtName     string
	Name        string  // create/rename: the new name ("" keeps it)
	Desc        *string // describe: the new description
	SetDesc     bool
	Provision   bool   // create: provision the volume next
	SizeBytes   int64  // create: the volume's size_bytes; 0 leaves it unset
	ThenDelete  bool   // teardown: delete the workspace next
	Path        string // volume transfers: the path inside the mount
	Repair      bool   // update from volume: the artifact was MISSING_OBJECT
	Format      string // save from volume: the archive a directory is packed as
	To          string // move: the new path (Path is the old one)
	Recursive   bool   // remove: a directory with everything in it
	Data        []byte // put, save an edit: the file's whole new content
	Local       string // put: the local file Data was read from
	IfMatch     string // put, save an edit: the version (ETag) the file must still be; "" writes over any
	CreateOnly  bool   // put: refuse a file that exists meanwhile
	SnapID      string // restore, delete: the snapshot
	SnapName    string // restore, delete: its name, sanitised
	Live        bool   // take, fork: while other containers mount the volume
}

// PendingWord is what a row shows while the op runs ("" for none).
func (o Op) PendingWord() string {
	switch o.Kind {
	case Provision:
		return "provisioning"
	case Teardown:
		return "tearing down"
	case DeleteWorkspace, DeleteArtifact:
		return "deleting"
	case VolLoad:
		return "loading"
	case VolUpdate:
		return "updating"
	case Sweep:
		return "sweeping"
	case Touch:
		return "touching"
	case Unpack:
		return "unpacking"
	}
	return snapshotWord(o.Kind)
}

// ChangesFiles reports one of the files pane's changes of the volume.
func (o Op) ChangesFiles() bool {
	switch o.Kind {
	case MakeDir, RemovePath, MovePath, PutFile, SaveEdit:
		return true
	}
	return false
}

// Left is the volume path where a volume write left something: what it
// wrote, made or moved to; "" after a remove.
func (o Op) Left() string {
	switch o.Kind {
	case MovePath:
		return o.To
	case RemovePath:
		return ""
	}
	return o.Path
}

// Target is the ID of the row the op acts on: a snapshot's delete marks
// the snapshot; a restore, a take and a fork mark the workspace, whose
// volume they hold.
func (o Op) Target() string {
	switch {
	case o.ArtID != "":
		return o.ArtID
	case o.Kind == DeleteSnapshot:
		return o.SnapID
	}
	return o.WSID
}

// Label is the op's task line.
func (o Op) Label() string {
	switch o.Kind {
	case Create:
		return "creating " + o.Name + "…"
	case EditWorkspace, EditArtifact:
		return "saving " + o.Subject() + "…"
	case Provision:
		return "provisioning a volume for " + o.WSName + "…"
	case Teardown:
		return "tearing down the volume of " + o.WSName + "…"
	case VolSave:
		if o.Format != "" {
			return "packing " + o.Path + " as " + o.Name + " (" + o.Format + ")…"
		}
		return "saving " + o.Path + " as " + o.Name + "…"
	case Unpack:
		return "unpacking " + o.ArtName + " into " + o.Path + "…"
	case VolLoad:
		return "loading " + o.ArtName + " into " + o.Path + "…"
	case VolUpdate:
		return "updating " + o.ArtName + " from " + o.Path + "…"
	case Sweep:
		return "sweeping " + o.WSName + "…"
	case Touch:
		return "touching " + o.WSName + "…"
	case MakeDir:
		return "making the directory " + o.Path + "…"
	case RemovePath:
		return "deleting " + o.Path + "…"
	case MovePath:
		return "moving " + o.Path + " to " + o.To + "…"
	case PutFile:
		return "uploading " + o.Local + " to " + o.Path + "…"
	case SaveEdit:
		return "writing your edit of " + o.Path + "…"
	case TakeSnapshot, RestoreSnapshot, DeleteSnapshot, Fork:
		return snapshotLabel(o)
	}
	return "deleting " + o.Subject() + "…"
}

// Subject names what the op acts on.
func (o Op) Subject() string {
	if o.ArtName != "" {
		return o.ArtName
	}
	return o.WSName
}

// ErrSubject names what an op's error sentence talks about.
func (o Op) ErrSubject(mounts int) errtext.Subject {
	s := errtext.Subject{Workspace: o.WSName, Artifact: o.ArtName, Name: o.Name, Scope: "write", Mounts: mounts}
	switch o.Kind {
	case Create:
		s.Workspace = o.Name
	case VolSave:
		s.Artifact = o.Name
	case Sweep:
		s.Scope = "admin"
	case TakeSnapshot:
		s.Snapshot = o.Name
	case RestoreSnapshot, DeleteSnapshot:
		s.Snapshot = o.SnapName
	case Fork:
		s.Snapshot = forkSnapshot(o.Name)
	}
	return s
}

// EditFields keeps only what changed: the name, then the description
// (empty clears it); false when nothing did.
func EditFields(o Op, oldName string, oldDesc *string, name, desc string) (Op, bool) {
	if name != oldName {
		o.Name = name
	}
	if desc != optional.String(oldDesc) {
		o.SetDesc = true
		if desc != "" {
			o.Desc = &desc
		}
	}
	return o, o.Name != "" || o.SetDesc
}
