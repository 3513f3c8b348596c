package transfer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// The uploads an earlier run left unfinished: the client keeps the state
// of each multipart upload on disk until it is registered, and running the
// same Upload or Replace again resumes it. At start the queue lists them
// for the offer (resume all, discard all, later); resuming is an ordinary
// transfer of the queue.

// Resumer is what the offer asks of the backend: the client's pending
// uploads, and the names of their targets.
type Resumer interface {
	// PendingUploads lists the unfinished uploads to this server kept in
	// stateDir ("" is the client's default), oldest first.
	PendingUploads(stateDir string) ([]client.PendingUpload, error)
	// PendingProgress asks how much of one the store holds.
	PendingProgress(ctx context.Context, p client.PendingUpload) (parts int, bytes int64, err error)
	// DiscardUpload aborts one and forgets it.
	DiscardUpload(ctx context.Context, p client.PendingUpload) error
	InspectWorkspace(ctx context.Context, id string) (*cairn.WorkspaceDetail, error)
	GetArtifact(ctx context.Context, id string, g cairn.ArtifactGet) (*cairn.ArtifactDetail, error)
}

// lookupTimeout bounds each request the offer makes; the offer is not
// worth a hung start.
const lookupTimeout = 10 * time.Second

// Pending is one interrupted upload as the offer shows it.
type Pending struct {
	client.PendingUpload
	// Shown is the source path for the screen: sanitised, the home
	// directory as ~.
	Shown string
	// Workspace is the target workspace's name; "" when it is gone.
	Workspace string
	// Artifact is a replace's target; nil when gone (or for an upload).
	Artifact *cairn.Artifact
	// Parts is how many parts the store holds, when Known.
	Parts int
	Known bool
	// Gone: the store no longer has the upload; it starts over.
	Gone bool
}

// Name is what the upload becomes: the new artifact's name, or the
// replaced artifact's.
func (p Pending) Name() string {
	switch {
	case p.ArtifactID == "":
		return p.PendingUpload.Name
	case p.Artifact != nil:
		return p.Artifact.Name
	}
	return shortID(p.ArtifactID)
}

// PendingMsg answers FindPending.
type PendingMsg struct {
	Uploads []Pending
	// Refused: the token lacks the write scope resuming needs; nothing
	// is offered.
	Refused bool
	// Err is why the state could not be read.
	Err error
}

// FindPending lists the interrupted uploads of this server in a Cmd, with
// what the store holds of each and their targets' names.
func (q *Queue) FindPending() tea.Cmd {
	r, ctx := q.backend, q.ctx
	return func() tea.Msg { return findPending(ctx, r) }
}

func findPending(ctx context.Context, r Resumer) PendingMsg {
	ups, err := r.PendingUploads("")
	if err != nil || len(ups) == 0 {
		return PendingMsg{Err: err}
	}
	home, _ := os.UserHomeDir() // "" leaves paths whole
	names := map[string]string{}
	out := make([]Pending, 0, len(ups))
	for _, u := range ups {
		p := Pending{PendingUpload: u, Shown: shownPath(u.Path, home)}
		rctx, cancel := context.WithTimeout(ctx, lookupTimeout)
		parts, _, err := r.PendingProgress(rctx, u)
		cancel()
		switch {
		case cairn.ErrorReason(err) == cairn.ReasonForbidden:
			return PendingMsg{Refused: true}
		case cairn.ErrorReason(err) == cairn.ReasonStagingNotFound:
			p.Gone = true
		case err == nil:
			p.Parts, p.Known = parts, true
		}
		p.Workspace = workspaceName(ctx, r, names, u.WorkspaceID)
		if u.ArtifactID != "" {
			p.Artifact = artifact(ctx, r, u.ArtifactID)
		}
		out = append(out, p)
	}
	return PendingMsg{Uploads: out}
}

// workspaceName is the workspace's name, "" when it is gone, or a short ID
// when the server could not say; names caches the answers.
func workspaceName(ctx context.Context, r Resumer, names map[string]string, id string) string {
	if n, ok := names[id]; ok {
		return n
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	d, err := r.InspectWorkspace(ctx, id)
	switch {
	case err == nil:
		names[id] = d.Workspace.Name
	case cairn.ErrorReason(err) == cairn.ReasonWorkspaceNotFound:
		names[id] = ""
	default:
		return shortID(id)
	}
	return names[id]
}

// artifact is a replace's target, nil when it cannot be had.
func artifact(ctx context.Context, r Resumer, id string) *cairn.Artifact {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	d, err := r.GetArtifact(ctx, id, cairn.ArtifactGet{})
	if err != nil {
		return nil
	}
	return d.Artifact
}

// shortID is an ID's first 8 characters, where no name is known.
func shortID(id string) string { return id[:min(8, len(id))] }

// shownPath is path for the screen: sanitised, under home as ~/….
func shownPath(path, home string) string {
	if home != "" && strings.HasPrefix(path, home+string(filepath.Separator)) {
		path = "~" + path[len(home):]
	}
	return termkit.Sanitize(path)
}

// Resume queues each pending upload as the transfer that resumes it: the
// same Upload (workspace, file, name, description) or Replace (artifact,
// file) as the interrupted one.
func (q *Queue) Resume(ps []Pending) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(ps))
	for _, p := range ps {
		s := Spec{Kind: Upload, WSID: p.WorkspaceID, Name: p.PendingUpload.Name, Desc: p.Description,
			Path: p.Path, Size: p.Size}
		if p.ArtifactID != "" {
			s = Spec{Kind: Replace, WSID: p.WorkspaceID, ArtID: p.ArtifactID, Name: p.Name(), Path: p.Path, Size: p.Size,
				Repair: p.Artifact != nil && p.Artifact.State == cairn.ArtifactMissingObject}
		}
		cmds = append(cmds, q.Enqueue(s))
	}
	return tea.Batch(cmds...)
}

// DiscardedMsg settles one discard.
type DiscardedMsg struct {
	Name string
	Err  error
}

// Discard aborts and forgets each pending upload, one Cmd each; each
// result is a toast.
func (q *Queue) Discard(ps []Pending) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(ps))
	for _, p := range ps {
		r, ctx, u, name := q.backend, q.ctx, p.PendingUpload, p.Name()
		cmds = append(cmds, func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
			defer cancel()
			return DiscardedMsg{Name: name, Err: r.DiscardUpload(ctx, u)}
		})
	}
	return tea.Batch(cmds...)
}

func (q *Queue) onDiscarded(d DiscardedMsg) tea.Cmd {
	if d.Err == nil {
		return q.host.Toast(toast.LevelOK, "discarded the interrupted upload of "+d.Name)
	}
	sentence := d.Err.Error()
	if _, ok := errors.AsType[*cairn.Error](d.Err); ok || client.IsUnreachable(d.Err) {
		sentence = errtext.Sentence(d.Err, errtext.Subject{Artifact: d.Name, Name: d.Name, Scope: "write"})
	}
	return q.host.ErrorToast("discard "+d.Name+": "+sentence, d.Err)
}
