package clienttest

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn"
)

// Snapshots (docs/api.md#snapshots) over the in-memory volumes: a snapshot
// is a copy of its volume's entries, special files left out, and a
// restore, a fork or a create from one copies them back. Its refusals are
// the documented ones: workspace_not_found, snapshot_not_found, name_taken,
// volume_not_ready, volume_in_use (another container mounts the volume:
// SetMounts; a snapshot may be taken live, a restore cannot),
// too_many_snapshots, and snapshot_in_use for the delete of one that holds
// an archived volume (lifecycle.go). Taking one announces snapshot.created,
// deleting one snapshot.deleted.

// snapshot is a snapshot's row and the entries it recorded.
type snapshot struct {
	row  *cairn.Snapshot
	tree map[string]*node
}

func snapshotID(n int) string { return fmt.Sprintf("%08d-0000-4000-a000-%012d", n, n) }

func copySnap(s *cairn.Snapshot) *cairn.Snapshot {
	c := *s
	return &c
}

// copyNode copies an entry, its content too: a volume written after a
// snapshot, or restored from one, must not change it.
func copyNode(n *node) *node {
	c := *n
	c.data = append([]byte(nil), n.data...)
	return &c
}

func copyTree(tree map[string]*node) map[string]*node {
	out := make(map[string]*node, len(tree))
	for p, n := range tree {
		out[p] = copyNode(n)
	}
	return out
}

// snapshotsOf is a workspace's snapshots, oldest first; the caller holds
// mu.
func (s *Server) snapshotsOf(wsID string) []*snapshot {
	var out []*snapshot
	for _, sn := range s.snaps {
		if sn.row.WorkspaceID == wsID {
			out = append(out, sn)
		}
	}
	slices.SortFunc(out, func(a, b *snapshot) int {
		if c := a.row.CreatedAt.Compare(b.row.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.row.ID, b.row.ID)
	})
	return out
}

// quietVolume is x's volume when a snapshot or a restore may use it:
// READY, and mounted by no other container unless live. The caller holds
// mu.
func (s *Server) quietVolume(x *cairn.Workspace, live bool) (*volume, error) {
	if x.VolumeState != cairn.VolumeReady {
		return nil, cairn.Errorf(cairn.ReasonVolumeNotReady, "workspace %s has no runtime volume (volume state '%s')", x.ID, x.VolumeState)
	}
	if n := s.mounts[x.ID]; n > 0 && !live {
		return nil, cairn.Errorf(cairn.ReasonVolumeInUse,
			"%d running containers mount workspace %s's volume; stop them first (a snapshot may be taken live)", n, x.ID)
	}
	return s.volumes[x.ID], nil
}

// take records x's volume as a snapshot and announces it; the caller
// holds mu.
func (s *Server) take(x *cairn.Workspace, c cairn.SnapshotCreate) (*cairn.Snapshot, error) {
	v, err := s.quietVolume(x, c.Live)
	if err != nil {
		return nil, err
	}
	held := s.snapshotsOf(x.ID)
	if len(held) >= cairn.MaxSnapshotsPerWorkspace {
		return nil, cairn.Errorf(cairn.ReasonTooManySnapshots, "workspace %s holds %d snapshots", x.ID, len(held))
	}
	n := s.nextRow()
	if c.Name == "" {
		c.Name = fmt.Sprintf("snap-01K%023d", n)
	}
	for _, h := range held {
		if h.row.Name == c.Name {
			return nil, cairn.Errorf(cairn.ReasonNameTaken, "workspace %s already has a snapshot named '%s'", x.ID, c.Name)
		}
	}
	sn := &snapshot{row: &cairn.Snapshot{ID: snapshotID(n), WorkspaceID: x.ID, Name: c.Name, Live: c.Live, CreatedAt: s.stamp()},
		tree: map[string]*node{}}
	s.record(sn, v)
	s.snaps[sn.row.ID] = sn
	s.emit(cairn.Event{Type: cairn.EventSnapshotCreated, ID: sn.row.ID, WorkspaceID: x.ID, Snapshot: copySnap(sn.row)})
	return copySnap(sn.row), nil
}

// record copies v's entries into sn and counts them: content no snapshot
// held before is what it uploaded. The caller holds mu.
func (s *Server) record(sn *snapshot, v *volume) {
	held := map[[32]byte]bool{}
	for _, other := range s.snaps {
		for _, n := range other.tree {
			if n.typ == cairn.FileTypeFile {
				held[sha256.Sum256(n.data)] = true
			}
		}
	}
	manifest := sha256.New()
	for _, p := range slices.Sorted(maps.Keys(v.nodes)) {
		n := v.nodes[p]
		if n.typ == cairn.FileTypeOther {
			sn.row.Skipped++
			continue
		}
		sn.tree[p] = copyNode(n)
		sn.row.Entries++
		digest := sha256.Sum256(n.data)
		fmt.Fprintf(manifest, "%s\x00%s\x00%s\x00%x\n", p, n.typ, n.target, digest)
		if n.typ != cairn.FileTypeFile {
			continue
		}
		sn.row.Bytes += int64(len(n.data))
		if !held[digest] {
			held[digest] = true
			sn.row.UploadedBytes += int64(len(n.data))
		}
	}
	sn.row.ManifestSHA256 = base64.StdEncoding.EncodeToString(manifest.Sum(nil))
}

// snapshotAt looks up {id}, or the ID given; on failure it has answered.
func (s *Server) snapshotAt(w http.ResponseWriter, id string) (*snapshot, bool) {
	sn, ok := s.snaps[id]
	if !ok {
		fail(w, cairn.Errorf(cairn.ReasonSnapshotNotFound, "snapshot '%s' does not exist", id))
	}
	return sn, ok
}

func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request) {
	var c cairn.SnapshotCreate
	if !decode(w, r, &c) || refused(w, c.Validate()) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	snap, err := s.take(x, c)
	if !refused(w, err) {
		reply(w, map[string]any{"snapshot": snap})
	}
}

func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	rows := []*cairn.Snapshot{}
	for _, sn := range s.snapshotsOf(x.ID) {
		rows = append(rows, copySnap(sn.row))
	}
	reply(w, map[string]any{"snapshots": rows})
}

func (s *Server) getSnapshot(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sn, ok := s.snapshotAt(w, r.PathValue("id")); ok {
		reply(w, map[string]any{"snapshot": copySnap(sn.row)})
	}
}

func (s *Server) deleteSnapshot(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn, ok := s.snapshotAt(w, r.PathValue("id"))
	if !ok {
		return
	}
	if x, held := s.archiveOf(sn.row.ID); held {
		fail(w, cairn.Errorf(cairn.ReasonSnapshotInUse, "snapshot %s holds the archived volume of workspace %s", sn.row.ID, x.ID))
		return
	}
	delete(s.snaps, sn.row.ID)
	s.emit(cairn.Event{Type: cairn.EventSnapshotDeleted, ID: sn.row.ID, WorkspaceID: sn.row.WorkspaceID})
	reply(w, nil)
}

func (s *Server) restoreSnapshot(w http.ResponseWriter, r *http.Request) {
	var body struct {
		SnapshotID string `json:"snapshot_id"`
	}
	if !decode(w, r, &body) || refused(w, cairn.RequireParam("snapshot_id", body.SnapshotID)) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sn, ok := s.snapshotAt(w, body.SnapshotID)
	if !ok {
		return
	}
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	v, err := s.quietVolume(x, false)
	if refused(w, err) {
		return
	}
	v.nodes = copyTree(sn.tree)
	reply(w, map[string]any{"restore": cairn.RestoreResult{SnapshotID: sn.row.ID, Entries: sn.row.Entries, Bytes: sn.row.Bytes}})
}

func (s *Server) forkWorkspace(w http.ResponseWriter, r *http.Request) {
	var f cairn.WorkspaceFork
	if !decode(w, r, &f) || refused(w, cairn.WorkspaceCreate{Name: f.Name, Description: f.Description}.Validate()) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	src, ok := s.workspace(w, r)
	if !ok {
		return
	}
	if s.nameTaken(f.Name, "") {
		fail(w, cairn.Errorf(cairn.ReasonNameTaken, "a workspace named '%s' already exists", f.Name))
		return
	}
	snap, err := s.take(src, cairn.SnapshotCreate{Name: "fork-" + f.Name, Live: f.Live})
	if refused(w, err) {
		return
	}
	x := s.fromSnapshot(f.Name, s.snaps[snap.ID], func(x *cairn.Workspace) {
		x.Description, x.VolumeMetadata, x.LastActiveAt = f.Description, src.VolumeMetadata, x.CreatedAt
	})
	reply(w, map[string]any{"workspace": x})
}

// fromSnapshot adds a workspace whose READY volume holds sn's entries;
// the caller holds mu.
func (s *Server) fromSnapshot(name string, sn *snapshot, edits ...func(*cairn.Workspace)) *cairn.Workspace {
	x := s.addWorkspace(name, cairn.VolumeReady, edits...)
	s.volumes[x.ID].nodes = copyTree(sn.tree)
	return x
}

// dropSnapshots removes a deleted workspace's snapshots, which go with
// it; the caller holds mu.
func (s *Server) dropSnapshots(wsID string) {
	for id, sn := range s.snaps {
		if sn.row.WorkspaceID == wsID {
			delete(s.snaps, id)
		}
	}
}
