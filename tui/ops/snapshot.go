package ops

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// forkSnapshot is the name of the snapshot a fork named name takes of its
// source (docs/api.md#snapshots): it stays after the fork.
func forkSnapshot(name string) string { return "fork-" + name }

// snapshotWord is a snapshot op's pending word; "" for any other op.
func snapshotWord(k Kind) string {
	switch k {
	case TakeSnapshot:
		return "snapshotting"
	case RestoreSnapshot:
		return "restoring"
	case DeleteSnapshot:
		return "deleting"
	case Fork:
		return "forking"
	}
	return ""
}

// snapshotLabel is a snapshot op's task line.
func snapshotLabel(o Op) string {
	switch o.Kind {
	case TakeSnapshot:
		return "taking " + snapshotOf(o.Name, o.Live) + " of " + o.WSName + "…"
	case RestoreSnapshot:
		return "restoring snapshot " + o.SnapName + " into " + o.WSName + "…"
	case Fork:
		return "forking " + o.WSName + " as " + o.Name + "…"
	}
	return "deleting snapshot " + o.SnapName + "…"
}

// snapshotOf names a snapshot to take: "snapshot before", "a live
// snapshot" when the server names it.
func snapshotOf(name string, live bool) string {
	kind := "snapshot"
	if live {
		kind = "live snapshot"
	}
	if name == "" {
		return "a " + kind
	}
	return kind + " " + name
}

// performSnapshot runs a snapshot op.
func performSnapshot(ctx context.Context, b Backend, o Op) DoneMsg {
	done := DoneMsg{Op: o}
	switch o.Kind {
	case TakeSnapshot:
		done.Snapshot, done.Err = b.CreateSnapshot(ctx, o.WSID, cairn.SnapshotCreate{Name: o.Name, Live: o.Live})
	case RestoreSnapshot:
		done.Restore, done.Err = b.RestoreSnapshot(ctx, o.WSID, o.SnapID)
	case DeleteSnapshot:
		done.Err = b.DeleteSnapshot(ctx, o.SnapID)
	case Fork:
		done.WS, done.Err = b.ForkWorkspace(ctx, o.WSID, cairn.WorkspaceFork{Name: o.Name, Description: o.Desc, Live: o.Live})
	}
	return done
}

// IsSnapshot reports an op on a workspace's snapshots.
func (o Op) IsSnapshot() bool { return snapshotWord(o.Kind) != "" }

// snapshotText is a settled snapshot op's success toast: what it recorded,
// wrote or made. The names in it are sanitised.
func snapshotText(d DoneMsg) string {
	o := d.Op
	switch o.Kind {
	case TakeSnapshot:
		if s := d.Snapshot; s != nil {
			return fmt.Sprintf("took %s of %s (%s, %s uploaded)", snapshotOf(termkit.Sanitize(s.Name), s.Live), o.WSName,
				Entries(int64(s.Entries), s.Bytes), termkit.Size(s.UploadedBytes))
		}
		return "took " + snapshotOf(o.Name, o.Live) + " of " + o.WSName
	case RestoreSnapshot:
		text := "restored snapshot " + o.SnapName + " into " + o.WSName
		if r := d.Restore; r != nil {
			text += " (" + Entries(int64(r.Entries), r.Bytes) + ")"
		}
		return text
	case Fork:
		return "forked " + o.WSName + " as " + o.Name + " (snapshot " + forkSnapshot(o.Name) + " kept)"
	}
	return "deleted snapshot " + o.SnapName
}

// Entries is "1 204 entries, 3.2 MiB": what a snapshot, a restore or an
// unpack holds or wrote.
func Entries(n, bytes int64) string {
	return termkit.Count(n) + " " + termkit.Plural(n, "entry", "entries") + ", " + termkit.Size(bytes)
}
