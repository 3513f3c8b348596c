package dialog_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/modeltest"
)

// lister serves a directory of n names in pages, as the files route does,
// and records the paths asked.
type lister struct {
	n     int
	asked []string
}

func (l *lister) ListFiles(_ context.Context, _ string, p cairn.FileListParams) (*cairn.FileListing, error) {
	l.asked = append(l.asked, p.Path+"?after="+p.After)
	if p.Path != "/mnt/cairn/ws/out" {
		return nil, &cairn.Error{Reason: cairn.ReasonPathNotFound, Status: 404}
	}
	start := 0
	if p.After != "" {
		if _, err := fmt.Sscanf(p.After, "f%05d", &start); err != nil {
			return nil, err
		}
		start++
	}
	out := &cairn.FileListing{Path: p.Path}
	for i := start; i < min(l.n, start+p.Limit); i++ {
		out.Entries = append(out.Entries, cairn.FileEntry{Name: fmt.Sprintf("f%05d", i), Type: cairn.FileTypeFile})
	}
	if start+p.Limit < l.n {
		out.NextAfter = out.Entries[len(out.Entries)-1].Name
	}
	return out, nil
}

func TestVolumeDir(t *testing.T) {
	t.Parallel()
	t.Run("PagesUpToTheBound", func(t *testing.T) {
		t.Parallel()
		l := &lister{n: 12000}
		got := dialog.VolumeDir(context.Background(), l, "w1")("/mnt/cairn/ws/out/")
		require.Len(t, got, 5000, "a completion reads at most 5 000 names")
		require.Equal(t, []string{"/mnt/cairn/ws/out?after=", "/mnt/cairn/ws/out?after=f00999", "/mnt/cairn/ws/out?after=f01999",
			"/mnt/cairn/ws/out?after=f02999", "/mnt/cairn/ws/out?after=f03999"}, l.asked, "the cleaned path, page after page")
	})
	t.Run("NothingOutsideTheMount", func(t *testing.T) {
		t.Parallel()
		l := &lister{n: 1}
		for _, dir := range []string{"/etc/", ".", "/mnt/cairn/", "/mnt/cairn/wsx/"} {
			require.Nil(t, dialog.VolumeDir(context.Background(), l, "w1")(dir), dir)
		}
		require.Empty(t, l.asked)
	})
	t.Run("ARefusalOffersNothing", func(t *testing.T) {
		t.Parallel()
		require.Empty(t, dialog.VolumeDir(context.Background(), &lister{}, "w1")("/mnt/cairn/ws/gone/"))
	})
	t.Run("CompletesLikeAShell", func(t *testing.T) {
		t.Parallel()
		got, cands := dialog.CompletePath("/mnt/cairn/ws/out/f0000", dialog.VolumeDir(context.Background(), &lister{n: 12}, "w1"))
		require.Equal(t, "/mnt/cairn/ws/out/f0000", got)
		require.Len(t, cands, 10)
	})
}

func TestAddressable(t *testing.T) {
	t.Parallel()
	require.True(t, dialog.Addressable("report.csv"))
	require.True(t, dialog.Addressable("日本語 name"))
	for _, n := range []string{"", "a/b", "esc\x1b", "nl\n", "bad\xff", strings.Repeat("x", 5000)} {
		require.False(t, dialog.Addressable(n), "%q", n)
	}
}

func TestVolSaveNames(t *testing.T) {
	t.Parallel()
	th := modeltest.Theme()
	w := &cairn.Workspace{ID: "w1", Name: "ws-alpha"}
	for _, tc := range []struct{ path, format, want string }{
		{"/mnt/cairn/ws/out/report.csv", "", "report_csv"},
		{"/mnt/cairn/ws/out", cairn.ArchiveTarGz, "out_tar_gz"},
		{"/mnt/cairn/ws/out/", cairn.ArchiveZip, "out_zip"},
		{"/mnt/cairn/ws/", "", ""},
	} {
		f := dialog.VolSave(th, noNames{}, w, dialog.VolPath{Value: tc.path}, tc.format)
		f.SetSize(100, 40)
		lines := strings.Split(f.View(), "\n")
		for i, l := range lines {
			if strings.Contains(l, "│ Name ") {
				require.Equal(t, strings.TrimSpace("> "+tc.want), strings.TrimSpace(strings.Trim(lines[i+1], "│")), tc.path)
			}
		}
	}
}

type noNames struct{}

func (noNames) Workspaces() []*cairn.Workspace             { return nil }
func (noNames) Artifacts(string) ([]*cairn.Artifact, bool) { return nil, true }
