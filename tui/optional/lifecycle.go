package optional

import (
	"strconv"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// A workspace's lifecycle fields (docs/api.md#expiry-and-archiving), each
// absent when unset, as cairn-tui words them.

// Until is how long until at, in its largest whole unit: "in 3h",
// "in 12m", "in <1m"; "due" once at has passed (the maintainer deletes an
// expired workspace at a pass after its warning).
func Until(now, at time.Time) string {
	switch d := at.Sub(now); {
	case d <= 0:
		return "due"
	case d < time.Minute:
		return "in <1m"
	}
	return "in " + termkit.Age(at, now)
}

// Expiry is a local time and Until it: "2025-03-14 12:26 (in 3h)".
func Expiry(now, at time.Time) string {
	return at.Local().Format("2006-01-02 15:04") + " (" + Until(now, at) + ")"
}

// Archived reports a workspace whose idle volume was archived to a
// snapshot: it has no volume (NONE), and its next volume setup restores
// the snapshot into a new one.
func Archived(w *cairn.Workspace) bool {
	return w.ArchivedSnapshotID != nil && w.VolumeState == cairn.VolumeNone
}

// Span renders a number of seconds exactly, in the largest unit that
// divides it: "1d", "36h", "90m", "45s".
func Span(secs int64) string {
	for _, u := range []struct {
		n    int64
		unit string
	}{{86400, "d"}, {3600, "h"}, {60, "m"}} {
		if secs >= u.n && secs%u.n == 0 {
			return strconv.FormatInt(secs/u.n, 10) + u.unit
		}
	}
	return strconv.FormatInt(secs, 10) + "s"
}

// ArchivesAt is when an idle volume's archiving is due, as far as the
// workspace says: its last activity plus its own idle bound. False when
// it has none of its own (the server's default applies, which the
// workspace does not carry).
func ArchivesAt(w *cairn.Workspace) (time.Time, bool) {
	if w.ArchiveIdleAfterSecs == nil || *w.ArchiveIdleAfterSecs <= 0 || w.LastActiveAt.IsZero() {
		return time.Time{}, false
	}
	return w.LastActiveAt.Add(time.Duration(*w.ArchiveIdleAfterSecs) * time.Second), true
}
