package clienttest

import (
	"fmt"
	"net/http"
	"time"

	"github.com/cairn-dev/cairn"
)

// Expiry and archiving (docs/api.md#expiry-and-archiving): a workspace
// keeps its ttl, expiry and idle bound as it was given them, on create or
// by PUT …/lifecycle; a touch restarts its idle clock and moves a ttl's
// expiry to now plus it. The maintainer's side is the test's: Warn sends
// a warning frame, ArchiveVolume archives a volume; the next volume setup
// restores an archive. Nothing expires or is archived by itself, and no
// default ttl or idle bound applies (lifecycle.defaultTTLSecs and
// lifecycle.archiveIdleAfterSecs are unset by default).

// applyLifecycle sets x's lifecycle from l as of now, as create and PUT
// …/lifecycle do: every field replaced, a ttl giving the expiry now plus
// it; the warnings sent are withdrawn.
func applyLifecycle(x *cairn.Workspace, l cairn.Lifecycle, now time.Time) {
	x.TTLSecs, x.ExpiresAt, x.ArchiveIdleAfterSecs = l.TTLSecs, l.ExpiresAt, l.ArchiveIdleAfterSecs
	if l.TTLSecs != nil {
		at := now.Add(time.Duration(*l.TTLSecs) * time.Second)
		x.ExpiresAt = &at
	}
	x.ExpiryWarnedAt, x.ArchiveWarnedAt = nil, nil
}

// validCreate checks a create as cairn.WorkspaceCreate.Validate does, in
// its order, with the lifecycle held to the server's clock.
func (s *Server) validCreate(c cairn.WorkspaceCreate) error {
	if err := cairn.ValidateName("workspace", c.Name); err != nil {
		return err
	}
	if err := cairn.ValidateDescription(c.Description); err != nil {
		return err
	}
	if err := c.Lifecycle.Validate(cairn.Timestamp(s.clock())); err != nil {
		return err
	}
	return c.VolumeMetadata.Validate()
}

func (s *Server) setLifecycle(w http.ResponseWriter, r *http.Request) {
	var l cairn.Lifecycle
	if !decode(w, r, &l) || refused(w, l.Validate(cairn.Timestamp(s.clock()))) {
		return
	}
	s.editWorkspace(w, r, func(x *cairn.Workspace) bool {
		applyLifecycle(x, l, s.stamp())
		return true
	})
}

func (s *Server) touchWorkspace(w http.ResponseWriter, r *http.Request) {
	s.editWorkspace(w, r, func(x *cairn.Workspace) bool {
		now := s.stamp()
		x.LastActiveAt = now
		if x.TTLSecs != nil {
			at := now.Add(time.Duration(*x.TTLSecs) * time.Second)
			x.ExpiresAt = &at
		}
		x.ExpiryWarnedAt, x.ArchiveWarnedAt = nil, nil
		return true
	})
}

// Warn sends the maintainer's warning typ (cairn.EventWorkspaceExpiring or
// cairn.EventWorkspaceArchiving) of a stored workspace to the events
// stream, with the workspace, and marks it warned; false when there is no
// such workspace.
func (s *Server) Warn(wsID string, typ cairn.EventType) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.ws[wsID]
	if !ok {
		return false
	}
	at := s.clock().UTC()
	if typ == cairn.EventWorkspaceArchiving {
		x.ArchiveWarnedAt = &at
	} else {
		x.ExpiryWarnedAt = &at
	}
	s.emit(cairn.Event{Type: typ, ID: x.ID, Workspace: copyWS(x)})
	return true
}

// ArchiveVolume archives a workspace's READY volume as the maintainer does
// an idle one: a snapshot archive-… of it, then the volume removed; the
// workspace keeps volume_state NONE and archived_snapshot_id, and both
// changes are announced. It is refused as a snapshot is (volume_not_ready,
// volume_in_use).
func (s *Server) ArchiveVolume(wsID string) (*cairn.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.ws[wsID]
	if !ok {
		return nil, cairn.Errorf(cairn.ReasonWorkspaceNotFound, "workspace '%s' does not exist", wsID)
	}
	snap, err := s.take(x, cairn.SnapshotCreate{Name: fmt.Sprintf("archive-01K%023d", s.rows+1)})
	if err != nil {
		return nil, err
	}
	id := snap.ID
	x.VolumeState, x.VolumeIssue, x.ArchivedSnapshotID, x.ArchiveWarnedAt = cairn.VolumeNone, nil, &id, nil
	s.volumes[x.ID] = s.newVolume()
	s.changed(x)
	return snap, nil
}

// unarchive restores an archived workspace's snapshot into its new
// volume and forgets the archive, as a setup does; the caller holds mu.
func (s *Server) unarchive(x *cairn.Workspace) error {
	if x.ArchivedSnapshotID == nil {
		return nil
	}
	sn, ok := s.snaps[*x.ArchivedSnapshotID]
	if !ok {
		return cairn.Errorf(cairn.ReasonSnapshotNotFound, "snapshot '%s' does not exist", *x.ArchivedSnapshotID)
	}
	s.volumes[x.ID].nodes = copyTree(sn.tree)
	x.ArchivedSnapshotID, x.LastActiveAt = nil, s.stamp()
	return nil
}

// archiveOf is the workspace whose archive snapshot id holds; the caller
// holds mu.
func (s *Server) archiveOf(id string) (*cairn.Workspace, bool) {
	for _, x := range s.ws {
		if x.ArchivedSnapshotID != nil && *x.ArchivedSnapshotID == id {
			return x, true
		}
	}
	return nil, false
}
