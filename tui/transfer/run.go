package transfer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/live"
)

// Options are the transfer settings every transfer of a queue shares.
type Options struct {
	RateLimit  int64         // bytes per second, 0 for none
	PresignTTL time.Duration // how long a download's presigned GET lives (transfer.presign_ttl), 0 for the server's default
}

// Run moves the bytes; it runs in a Cmd. Progress and the client's
// notices go to the hub, never to the program: the program may be
// blocked inside a shell.
func Run(ctx context.Context, b Backend, hub *live.Hub, s Spec, o Options) DoneMsg {
	m := &meter{hub: hub, s: live.Sample{Transfer: s.ID}}
	note := func(n client.Notice) { hub.Note(live.Note{Transfer: s.ID, Text: n.Text}) }
	done := DoneMsg{ID: s.ID}
	switch s.Kind {
	case Upload:
		done.Art, done.Err = b.Upload(ctx, s.WSID, s.Path, client.UploadOptions{Name: s.Name, Description: s.Desc,
			PhaseProgress: m.bytes, PartProgress: m.parts, Notice: note, RateLimit: o.RateLimit})
	case Replace:
		done.Art, done.Err = b.Replace(ctx, s.ArtID, s.Path, client.UploadOptions{
			PhaseProgress: m.bytes, PartProgress: m.parts, Notice: note, RateLimit: o.RateLimit})
	case Download:
		done.Art, done.Err = b.Download(ctx, s.ArtID, s.Path, client.DownloadOptions{Overwrite: s.Overwrite,
			PhaseProgress: m.bytes, PartProgress: m.parts, Notice: note, RateLimit: o.RateLimit, TTL: o.PresignTTL})
		if done.Err != nil && ctx.Err() != nil {
			// Cancelled, or the program is quitting: the operator wants none
			// of it, so the part file a large download keeps for a resume
			// goes too. What cannot be removed is what the next download to
			// the same path resumes or starts over.
			_ = client.DiscardDownload(s.Path)
		}
	}
	return done
}

// meter joins a transfer's two callbacks, bytes and parts, into the one
// sample per transfer the hub keeps: each report sends the latest of
// both. The client bounds how often it reports bytes (ProgressInterval)
// and reports parts once per part, so the hub sees no more than before.
type meter struct {
	hub *live.Hub

	mu      sync.Mutex // the parts and the bytes come from different goroutines
	s       live.Sample
	sampled bool // a bytes report came: the sample's phase is known
}

func (m *meter) bytes(phase client.Phase, done, total int64) {
	m.mu.Lock()
	m.s.Hashing, m.s.Done, m.s.Total, m.sampled = phase == client.PhaseHashing, done, total, true
	s := m.s
	m.mu.Unlock()
	m.hub.Progress(s)
}

// parts keeps the count; before any bytes report it waits for one, since
// a sample without bytes would read as all of them sent.
func (m *meter) parts(done, total int) {
	m.mu.Lock()
	m.s.Parts, m.s.PartsTotal = done, total
	s, send := m.s, m.sampled
	m.mu.Unlock()
	if send {
		m.hub.Progress(s)
	}
}

// KindWord names what a transfer does: upload, replace, download.
func KindWord(k Kind) string {
	switch k {
	case Upload:
		return "upload"
	case Replace:
		return "replace"
	}
	return "download"
}

// doneText is a finished transfer's success toast.
func doneText(t *Transfer, s Spec) string {
	switch s.Kind {
	case Upload:
		return fmt.Sprintf("uploaded %s (%s)", t.Name, termkit.Size(t.Total))
	case Replace:
		if s.Repair {
			return "repaired " + t.Name
		}
		return "replaced " + t.Name
	}
	return fmt.Sprintf("downloaded %s → %s (%s)", t.Name, t.Path, termkit.Size(t.Total))
}

// Sentence is a failed transfer's one sentence.
func Sentence(t *Transfer, err error) string {
	base := filepath.Base(t.Path)
	switch {
	case errors.Is(err, client.ErrVerification):
		return t.Name + ": the downloaded bytes are not the artifact's (size or SHA-256) — nothing was kept"
	case errors.Is(err, fs.ErrExist):
		return t.Path + " exists — download again to overwrite it"
	case errors.Is(err, fs.ErrNotExist):
		return t.Path + " does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "no permission to use " + t.Path
	}
	switch cairn.ErrorReason(err) {
	case cairn.ReasonSourceChanged:
		return base + " changed while uploading — retry"
	case cairn.ReasonObjectMissing:
		return t.Name + " is MISSING_OBJECT — nothing to download"
	}
	if _, ok := errors.AsType[*cairn.Error](err); !ok && !client.IsUnreachable(err) {
		return t.Name + ": " + err.Error() // a local failure: the path is the operator's own
	}
	return errtext.Sentence(err, errtext.Subject{Artifact: t.Name, Name: t.Name, Scope: "write"})
}
