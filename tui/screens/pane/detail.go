package pane

import (
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/theme"
)

// VolumeIssue is the sentence saying why w's volume cannot take containers
// now, sanitised for one line ("" when it can): the server's detail, which
// names the node on Kubernetes.
func VolumeIssue(w *cairn.Workspace) string {
	if w == nil || w.VolumeIssue == nil {
		return ""
	}
	return termkit.Sanitize("volume cannot take containers: " + w.VolumeIssue.Detail)
}

// Field is one "Label  value" line of a detail pane.
func Field(th *theme.Theme, label, value string) string {
	return " " + th.Label.Render(fmt.Sprintf("%-12s", label)) + value
}

// Stamped is a local time and its age.
func Stamped(now, t time.Time) string {
	return t.Local().Format("2006-01-02 15:04") + " (" + termkit.Age(now, t) + ")"
}

// Paragraph wraps untrusted text (a description, an error) under a label
// for a detail pane of width: each of its lines sanitised
// (termkit.SanitizeLines: controls as visible escapes, tabs expanded),
// then wrapped. Trailing line breaks are dropped.
func Paragraph(th *theme.Theme, label, text string, width int) []string {
	lines := []string{"", " " + th.Label.Render(label)}
	for _, para := range termkit.SanitizeLines(strings.TrimRight(text, "\r\n"), nil) {
		for _, l := range strings.Split(theme.Wrap(para, max(1, width-2)), "\n") {
			lines = append(lines, " "+l)
		}
	}
	return lines
}

// Line is an untrusted description's first line for one table cell: the
// text before its first line break (CRLF or LF), sanitised
// (termkit.Sanitize). Rows call it once, when they are built.
func Line(p *string) string {
	return termkit.Sanitize(strings.TrimSuffix(optional.FirstLine(p), "\r"))
}

// Failure says what failed and when the next retry is.
func Failure(c *deps.Deps, what string, st deps.ListStatus) string {
	text := "cannot list " + what + ": " + errtext.Sentence(st.Err, errtext.Subject{Scope: "read"})
	if st.RetryAt.IsZero() {
		return text + "\nr retries"
	}
	wait := max(0, st.RetryAt.Sub(c.Data.Now()))
	return text + fmt.Sprintf("\nnext retry in %ds — r retries now", int((wait+time.Second-1)/time.Second))
}
