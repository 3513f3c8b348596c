package transfer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/live"
)

// Options are the transfer settings every transfer of a queue shares.
type Options struct {
	RateLimit  int64         // bytes per second, 0 for none
	PresignTTL time.Duration // how long a download's presigned GET lives (transfer.presign_ttl), 0 for the server's default
}

func (q *Queue) options() Options {
	return Options{RateLimit: q.c.Config.RateLimit, PresignTTL: q.c.Config.PresignTTL}
}

// Run moves the bytes; it runs in a Cmd. Progress goes to the hub, never
// to the program: the program may be blocked inside a shell.
func Run(ctx context.Context, b Backend, hub *live.Hub, s Spec, o Options) DoneMsg {
	progress := func(phase client.Phase, done, total int64) {
		hub.Progress(live.Sample{Transfer: s.ID, Hashing: phase == client.PhaseHashing, Done: done, Total: total})
	}
	done := DoneMsg{ID: s.ID}
	switch s.Kind {
	case common.Upload:
		done.Art, done.Err = b.Upload(ctx, s.WSID, s.Path, client.UploadOptions{
			Name: s.Name, Description: s.Desc, PhaseProgress: progress, RateLimit: o.RateLimit})
	case common.Replace:
		done.Art, done.Err = b.Replace(ctx, s.ArtID, s.Path, client.UploadOptions{PhaseProgress: progress, RateLimit: o.RateLimit})
	case common.Download:
		done.Art, done.Err = b.Download(ctx, s.ArtID, s.Path, client.DownloadOptions{
			Overwrite: s.Overwrite, PhaseProgress: progress, RateLimit: o.RateLimit, TTL: o.PresignTTL})
	}
	return done
}

// KindWord names what a transfer does: upload, replace, download.
func KindWord(k common.TransferKind) string {
	switch k {
	case common.Upload:
		return "upload"
	case common.Replace:
		return "replace"
	}
	return "download"
}

// doneText is a finished transfer's success toast.
func doneText(t *common.Transfer, s Spec) string {
	switch s.Kind {
	case common.Upload:
		return fmt.Sprintf("uploaded %s (%s)", t.Name, termkit.Size(t.Total))
	case common.Replace:
		if s.Repair {
			return "repaired " + t.Name
		}
		return "replaced " + t.Name
	}
	return fmt.Sprintf("downloaded %s → %s (%s)", t.Name, t.Path, termkit.Size(t.Total))
}

// Sentence is a failed transfer's one sentence (TUI.md §3.7–3.9).
func Sentence(t *common.Transfer, err error) string {
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
	return common.Sentence(err, common.Subject{Artifact: t.Name, Name: t.Name, Scope: "write"})
}
