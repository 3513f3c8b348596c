package dialog_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/modeltest"
)

func TestValidateEntryName(t *testing.T) {
	t.Parallel()
	valid := dialog.ValidateEntryName("/mnt/cairn/ws/out")
	for _, ok := range []string{"reports", "日本語 notes", ".hidden", "a..b"} {
		require.Empty(t, valid(ok), ok)
	}
	for name, says := range map[string]string{
		"":                        "give a name",
		".":                       ". is not a new name",
		"..":                      ".. is not a new name",
		"a/b":                     "one name, without / — R on an entry moves it elsewhere",
		"esc\x1b":                 "the path holds a control character, is not UTF-8 or is too long",
		strings.Repeat("x", 5000): "the path holds a control character, is not UTF-8 or is too long",
	} {
		require.Equal(t, says, valid(name), "%q", name)
	}
}

// The upload's target follows the local file's name, in the directory
// listed, until edited.
func TestPutFileTarget(t *testing.T) {
	t.Parallel()
	f := dialog.PutFile(modeltest.Theme(), dialog.VolPath{Value: "/mnt/cairn/ws/out"}, nil)
	f.SetSize(100, 40)
	target := func() string {
		lines := strings.Split(f.View(), "\n")
		for i, l := range lines {
			if strings.Contains(l, "│ Into the volume ") {
				return strings.TrimSpace(strings.Trim(lines[i+1], "│"))
			}
		}
		return ""
	}
	require.Equal(t, "> /mnt/cairn/ws/out/", target())
	modeltest.Type(f.Update, "~/data/report.csv")
	require.Equal(t, "> /mnt/cairn/ws/out/report.csv", target())
	modeltest.Press(f.Update, "down", "backspace", "backspace", "backspace")
	modeltest.Press(f.Update, "up")
	modeltest.Type(f.Update, "x")
	require.Equal(t, "> /mnt/cairn/ws/out/report.", target(), "edited: it no longer follows")
}

// The conflict shows the first lines of both versions within the rows it
// has, saying how many more there are; a version that could not be read
// says why.
func TestEditConflictBody(t *testing.T) {
	t.Parallel()
	theirs := dialog.Version{Data: []byte("t1\nt2\nt3\nt4\n"), Size: 12}
	yours := dialog.Version{Data: []byte("y1\n\x1b[31my2\n"), Size: 12}
	m := dialog.EditConflict(modeltest.Theme(), "notes.txt", theirs, yours)
	m.SetSize(80, 6+5+2*3)
	v := m.View()
	for _, want := range []string{"notes.txt changed in the volume since you opened it.", "Theirs, in the volume now (12 B)",
		"  t1", "  t2", "… 2 more lines", "Yours (12 B)", "  y1", "  ^[[31my2"} {
		require.Contains(t, v, want)
	}
	require.NotContains(t, v, "t3", "cut to the rows it has")
	require.NotContains(t, v, "\x1b[31m", "sanitised")
	require.Equal(t, "o overwrite theirs · e keep editing · d discard yours", m.Hint())

	gone := dialog.EditConflict(modeltest.Theme(), "notes.txt", dialog.Version{Err: "(cannot read it: no such file or directory in the volume)"}, yours)
	gone.SetSize(80, 30)
	require.Contains(t, gone.View(), "(cannot read it: no such file or directory in the volume)")
}
