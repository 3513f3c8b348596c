package service

import (
	"context"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn"
)

// RowLoader loads the current rows that changes name.
type RowLoader interface {
	// WorkspacesByID returns the workspaces of ids that exist.
	WorkspacesByID(ctx context.Context, ids []string) ([]*cairn.Workspace, error)
	// ArtifactsByID returns the artifacts of ids that exist.
	ArtifactsByID(ctx context.Context, ids []string) ([]*cairn.Artifact, error)
	// SnapshotsByID returns the snapshots of ids that exist.
	SnapshotsByID(ctx context.Context, ids []string) ([]*cairn.Snapshot, error)
}

// Change is one row change, as a notification of the database or
// the webhook outbox names it.
type Change struct {
	Kind        string `json:"kind"` // workspace | artifact | snapshot
	Op          string `json:"op"`   // INSERT | UPDATE | DELETE, or a workspace's EXPIRING | ARCHIVING warning
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
}

// The ops of a workspace's lifecycle warnings, which the maintainer writes
// to the outbox and the notification channel beside the row's own change.
const (
	OpExpiring  = "EXPIRING"
	OpArchiving = "ARCHIVING"
)

// Rows are the current rows of a batch of changes, by ID.
type Rows struct {
	workspaces map[string]*cairn.Workspace
	artifacts  map[string]*cairn.Artifact
	snapshots  map[string]*cairn.Snapshot
}

// LoadEvents is the event of each change, in order, as the stream sends
// it: an upsert with the row as loaded now, a delete when it is gone.
func LoadEvents(ctx context.Context, store RowLoader, changes []Change, at time.Time) ([]cairn.Event, error) {
	rows, err := LoadRows(ctx, store, changes)
	if err != nil {
		return nil, err
	}
	out := make([]cairn.Event, len(changes))
	for i, c := range changes {
		if out[i], err = rows.Event(c, at); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// LoadRows loads the current rows the changes name, one query a kind.
func LoadRows(ctx context.Context, store RowLoader, changes []Change) (*Rows, error) {
	var wsIDs, artIDs, snapIDs []string
	for _, c := range changes {
		switch {
		case c.Op == "DELETE":
		case c.Kind == "workspace":
			wsIDs = append(wsIDs, c.ID)
		case c.Kind == "artifact":
			artIDs = append(artIDs, c.ID)
		case c.Kind == "snapshot":
			snapIDs = append(snapIDs, c.ID)
		}
	}
	r := &Rows{workspaces: map[string]*cairn.Workspace{}, artifacts: map[string]*cairn.Artifact{},
		snapshots: map[string]*cairn.Snapshot{}}
	if len(snapIDs) > 0 {
		list, err := store.SnapshotsByID(ctx, snapIDs)
		if err != nil {
			return nil, err
		}
		for _, s := range list {
			r.snapshots[s.ID] = s
		}
	}
	if len(wsIDs) > 0 {
		list, err := store.WorkspacesByID(ctx, wsIDs)
		if err != nil {
			return nil, err
		}
		for _, ws := range list {
			r.workspaces[ws.ID] = ws
		}
	}
	if len(artIDs) > 0 {
		list, err := store.ArtifactsByID(ctx, artIDs)
		if err != nil {
			return nil, err
		}
		for _, a := range list {
			r.artifacts[a.ID] = a
		}
	}
	return r, nil
}

// Event is c's event: an upsert with the row as loaded, or a delete when
// the row is gone by now.
func (r *Rows) Event(c Change, at time.Time) (cairn.Event, error) {
	ev := cairn.Event{ID: c.ID, At: at}
	switch c.Kind {
	case "workspace":
		ev.Type = cairn.EventWorkspaceDeleted
		if ws := r.workspaces[c.ID]; ws != nil && c.Op != "DELETE" {
			ev.Type, ev.Workspace = cairn.EventWorkspaceUpserted, ws
			switch c.Op {
			case OpExpiring:
				ev.Type = cairn.EventWorkspaceExpiring
			case OpArchiving:
				ev.Type = cairn.EventWorkspaceArchiving
			}
		}
	case "artifact":
		ev.Type = cairn.EventArtifactDeleted
		if a := r.artifacts[c.ID]; a != nil && c.Op != "DELETE" {
			ev.Type, ev.Artifact = cairn.EventArtifactUpserted, a
		}
	case "snapshot":
		ev.Type, ev.WorkspaceID = cairn.EventSnapshotDeleted, c.WorkspaceID
		if s := r.snapshots[c.ID]; s != nil && c.Op != "DELETE" {
			ev.Type, ev.Snapshot = cairn.EventSnapshotCreated, s
		}
	default:
		return ev, fmt.Errorf("unknown kind %q", c.Kind)
	}
	return ev, nil
}
