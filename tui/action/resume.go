package action

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// OfferResume looks, once at start, for the uploads an earlier run left
// unfinished, to offer resuming them. Read-only mode offers nothing:
// resuming uploads.
func (act *Flow) OfferResume() tea.Cmd {
	if act.c.Config.ReadOnly {
		return nil
	}
	return act.host.Queue().FindPending()
}

// onPending opens the offer, unless there is nothing to offer, the token
// could not resume (it lacks write, as the server said), or another modal
// is open (then a toast says the offer comes again next start).
func (act *Flow) onPending(msg transfer.PendingMsg) tea.Cmd {
	n := len(msg.Uploads)
	switch {
	case msg.Err != nil:
		return act.host.Toast(toast.LevelWarn, "cannot read the interrupted uploads: "+msg.Err.Error())
	case msg.Refused:
		return act.host.Toast(toast.LevelInfo, "interrupted uploads are not offered: this token lacks the write scope")
	case n == 0:
		return nil
	case act.host.Modal() != nil:
		return act.host.Toast(toast.LevelInfo, fmt.Sprintf("%s interrupted %s not offered now: they are offered again at the next start",
			termkit.Count(int64(n)), termkit.Plural(n, "upload", "uploads")))
	}
	act.openModal(dialog.Resume(act.c.Theme, act.host.Now(), msg.Uploads), intent{kind: intentResume, pending: msg.Uploads})
	return nil
}

// settleResume queues the uploads again, discards them, or leaves them
// for the next start (esc).
func (act *Flow) settleResume(res screen.Result) tea.Cmd {
	ups := act.intent.pending
	act.closeModal()
	switch res.Values["choice"] {
	case dialog.ResumeAll:
		return act.host.Queue().Resume(ups)
	case dialog.DiscardAll:
		return act.host.Queue().Discard(ups)
	}
	return act.host.Toast(toast.LevelInfo, "kept the interrupted uploads: they are offered again at the next start")
}
