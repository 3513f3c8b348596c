package client

import "fmt"

// Notice is what a transfer decided about an interrupted run of itself
// that its user should hear: that it resumes, or why it starts over.
type Notice struct {
	Kind NoticeKind
	// PartsDone of PartsTotal parts were already complete (NoticeResumed).
	PartsDone, PartsTotal int
	// Text is one sentence for a person, e.g. "resumed: 12 of 32 parts
	// already stored".
	Text string
}

// NoticeKind tells notices apart.
type NoticeKind uint8

const (
	// NoticeResumed: an interrupted upload or download continues where it
	// stopped.
	NoticeResumed NoticeKind = iota + 1
	// NoticeSourceChanged: the file changed since the interrupted upload;
	// its parts were discarded and the upload starts over.
	NoticeSourceChanged
	// NoticeUploadGone: the server no longer has the interrupted upload
	// (it expired, or was aborted); the upload starts over.
	NoticeUploadGone
	// NoticeArtifactChanged: the artifact's content changed since the
	// interrupted download; the download starts over.
	NoticeArtifactChanged
)

// notify tells the caller, if it listens.
func notify(to func(Notice), n Notice) {
	if to != nil {
		to(n)
	}
}

func resumedNotice(what string, done, total int) Notice {
	return Notice{Kind: NoticeResumed, PartsDone: done, PartsTotal: total,
		Text: fmt.Sprintf("resumed: %d of %d %s already %s", done, total, plural(total, "part"), what)}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
