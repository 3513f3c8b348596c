// Package tuitest holds cairn-tui's test helpers: a fake Backend over an
// in-memory world, a scripted event source, a clipboard, a fixed clock and
// the golden sizes. It does not import package tui, so tui's own tests can
// use it.
package tuitest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cairn-dev/cairn"
)

// World is an in-memory cairn: workspaces and artifacts ordered by
// creation, safe for concurrent use.
type World struct {
	mu     sync.Mutex
	clock  *Clock
	ws     map[string]*cairn.Workspace
	arts   map[string]*cairn.Artifact
	mounts map[string]int
	// content holds artifact bytes, volumes the entries of workspace
	// volumes by cleaned path.
	content map[string][]byte
	volumes map[string]map[string]*vnode
	n       int
	// Events, when set, receives a change frame for every mutation; set it
	// with SetEvents once the world is shared.
	Events *Source
}

// SetEvents turns the change frames on (a source) or off (nil).
func (w *World) SetEvents(s *Source) {
	w.mu.Lock()
	w.Events = s
	w.mu.Unlock()
}

// NewWorld returns an empty world stamping rows with clock.
func NewWorld(clock *Clock) *World {
	return &World{clock: clock, ws: map[string]*cairn.Workspace{}, arts: map[string]*cairn.Artifact{}, mounts: map[string]int{},
		content: map[string][]byte{}, volumes: map[string]map[string]*vnode{}}
}

func (w *World) next() (string, time.Time) {
	w.n++
	return fmt.Sprintf("%08d-0000-4000-8000-%012d", w.n, w.n), w.clock.Now().Add(time.Duration(w.n) * time.Microsecond)
}

func copyWS(x *cairn.Workspace) *cairn.Workspace {
	c := *x
	return &c
}

func copyArt(x *cairn.Artifact) *cairn.Artifact {
	c := *x
	return &c
}

// AddWorkspace stores a workspace and returns a copy.
func (w *World) AddWorkspace(name string, state cairn.VolumeState, desc string) *cairn.Workspace {
	w.mu.Lock()
	defer w.mu.Unlock()
	id, at := w.next()
	ws := &cairn.Workspace{ID: id, Name: name, VolumeName: "cairn-" + id, VolumeState: state, CreatedAt: at, UpdatedAt: at}
	if desc != "" {
		ws.Description = &desc
	}
	w.ws[id] = ws
	w.emitWS(ws)
	return copyWS(ws)
}

// AddArtifact stores an artifact and returns a copy.
func (w *World) AddArtifact(wsID, name string, state cairn.ArtifactState, size int64, desc string) *cairn.Artifact {
	w.mu.Lock()
	defer w.mu.Unlock()
	id, at := w.next()
	a := &cairn.Artifact{ID: "01J" + id[:8] + id[len(id)-8:], WorkspaceID: wsID, Name: name, State: state, Size: size,
		MIMEType: "text/plain; charset=utf-8", ObjectKey: "store/" + wsID + "/" + name, CreatedAt: at, UpdatedAt: at}
	if desc != "" {
		a.Description = &desc
	}
	w.arts[a.ID] = a
	w.emitArt(a)
	w.count(wsID, "", state)
	return copyArt(a)
}

// count moves a workspace's artifact counts from one state to another ("":
// none) and, as the server's triggers do, sends the workspace with them;
// updated_at stays.
func (w *World) count(wsID string, from, to cairn.ArtifactState) {
	ws, ok := w.ws[wsID]
	if !ok || from == to {
		return
	}
	c := &ws.ArtifactCounts
	for st, n := range map[cairn.ArtifactState]int64{from: -1, to: 1} {
		switch st {
		case cairn.ArtifactRecorded:
			c.Recorded += n
		case cairn.ArtifactMissingObject:
			c.MissingObject += n
		}
	}
	w.emitWS(ws)
}

// UpdateWorkspace changes a workspace (updated_at moves) and returns a copy.
func (w *World) UpdateWorkspace(id string, f func(*cairn.Workspace)) *cairn.Workspace {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws, ok := w.ws[id]
	if !ok {
		return nil
	}
	f(ws)
	_, ws.UpdatedAt = w.next()
	w.emitWS(ws)
	return copyWS(ws)
}

// UpdateArtifact changes an artifact (updated_at moves) and returns a copy.
func (w *World) UpdateArtifact(id string, f func(*cairn.Artifact)) *cairn.Artifact {
	w.mu.Lock()
	defer w.mu.Unlock()
	a, ok := w.arts[id]
	if !ok {
		return nil
	}
	before := a.State
	f(a)
	_, a.UpdatedAt = w.next()
	w.emitArt(a)
	w.count(a.WorkspaceID, before, a.State)
	return copyArt(a)
}

// SetMounts sets what InspectWorkspace reports.
func (w *World) SetMounts(id string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mounts[id] = n
}

func (w *World) emitWS(ws *cairn.Workspace) {
	if w.Events != nil {
		w.Events.Emit(cairn.Event{Type: cairn.EventWorkspaceUpserted, ID: ws.ID, Workspace: copyWS(ws)})
	}
}

func (w *World) emitArt(a *cairn.Artifact) {
	if w.Events != nil {
		w.Events.Emit(cairn.Event{Type: cairn.EventArtifactUpserted, ID: a.ID, Artifact: copyArt(a)})
	}
}

func page[T any](rows []T, p cairn.Page) []T {
	start := min(p.Offset, len(rows))
	end := len(rows)
	if p.Limit > 0 {
		end = min(end, start+p.Limit)
	}
	return rows[start:end]
}

func (w *World) findWorkspaces(_ context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*cairn.Workspace
	for _, ws := range w.ws {
		out = append(out, copyWS(ws))
	}
	slices.SortFunc(out, func(a, b *cairn.Workspace) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return page(out, f.Page), nil
}

func (w *World) findArtifacts(_ context.Context, f cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.ws[f.WorkspaceID]; !ok {
		return nil, &cairn.Error{Reason: cairn.ReasonWorkspaceNotFound, Status: 404}
	}
	var out []*cairn.Artifact
	for _, a := range w.arts {
		if a.WorkspaceID == f.WorkspaceID && (len(f.States) == 0 || slices.Contains(f.States, a.State)) {
			out = append(out, copyArt(a))
		}
	}
	slices.SortFunc(out, func(a, b *cairn.Artifact) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return page(out, f.Page), nil
}

// FindWorkspacesForTest lists as the default fake does, for tests that
// wrap it in their own FindWorkspacesFunc.
func (w *World) FindWorkspacesForTest(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
	return w.findWorkspaces(ctx, f)
}
