package tuitest

import (
	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client/clienttest"
)

// World is the fake server behind a Backend, with the rows of a test's
// world added in one call each.
type World struct{ *clienttest.Server }

// AddWorkspace stores a workspace whose volume is in state, described by
// desc ("" none).
func (w *World) AddWorkspace(name string, state cairn.VolumeState, desc string) *cairn.Workspace {
	return w.Server.AddWorkspace(name, state, func(x *cairn.Workspace) { x.Description = optional(desc) })
}

// AddArtifact stores an artifact in state whose row says size bytes of
// plain text, described by desc ("" none). The store holds no bytes for it
// until SetContent gives it some.
func (w *World) AddArtifact(wsID, name string, state cairn.ArtifactState, size int64, desc string) *cairn.Artifact {
	return w.Server.AddArtifact(wsID, name, nil, func(a *cairn.Artifact) {
		a.State, a.Size, a.Description, a.MIMEType = state, size, optional(desc), "text/plain; charset=utf-8"
	})
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
