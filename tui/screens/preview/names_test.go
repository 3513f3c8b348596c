package preview_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/screens/preview"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
)

// The artifact's name and MIME type reach the terminal as visible escapes
// in every state of the screen and in its crumbs.
func TestSanitisedNames(t *testing.T) {
	t.Parallel()
	h, shown := screentest.Hostile, screentest.HostileShown
	a := &cairn.Artifact{ID: "a1", WorkspaceID: "w1", Name: h, MIMEType: "t/" + h, UpdatedAt: screentest.Epoch}
	answer := preview.Msg{ArtifactID: a.ID, UpdatedAt: a.UpdatedAt, Req: 1, Data: []byte{0, 1, 2}, Total: 3}
	failure := answer
	failure.Err = errors.New("boom")
	for _, tc := range []struct {
		name   string
		answer *preview.Msg
		want   []string
	}{
		{"Loading", nil, []string{"loading " + shown + "…"}},
		{"Failed", &failure, []string{"cannot preview " + shown + ": "}},
		{"Card", &answer, []string{" " + shown + " ", "MIME        t/" + shown + " ", "its type t/" + shown + " is not"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := screentest.New(t)
			s := preview.New(c, a, 1, false)
			s.SetSize(100, 20)
			if tc.answer != nil {
				s.Update(*tc.answer)
			}
			screentest.RequireShown(t, s.View(), tc.want...)
			screentest.RequireShown(t, strings.Join(s.Crumbs(), "\n"), shown+"\n")
		})
	}
}
