package dialog_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/dialog"
)

func TestCompletePath(t *testing.T) {
	t.Parallel()
	list := func(dir string) []dialog.DirEntry {
		if dir != "." && dir != "data/" {
			return nil
		}
		return []dialog.DirEntry{{Name: "report.csv"}, {Name: "reports", Dir: true}, {Name: "readme.md"}, {Name: ".hidden"}, {Name: "data", Dir: true}}
	}
	for _, c := range []struct {
		in, want string
		cands    []string
	}{
		{"repo", "report", []string{"report.csv", "reports/"}},
		{"reports", "reports/", nil},
		{"rea", "readme.md", nil},
		{"", "", []string{"data/", "readme.md", "report.csv", "reports/"}},
		{".h", ".hidden", nil},
		{"data/rep", "data/report", []string{"report.csv", "reports/"}},
		{"zzz", "", nil},
	} {
		got, cands := dialog.CompletePath(c.in, list)
		require.Equal(t, c.want, got, c.in)
		require.Equal(t, c.cands, cands, c.in)
	}
	require.Equal(t, "日本", dialog.CommonPrefix([]string{"日本語", "日本人"}))
}
