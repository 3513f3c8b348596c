package cairn_test

import (
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

func TestValidateVolumePath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path   string
		reason cairn.Reason // "" when valid
	}{
		{"/mnt/cairn/ws/a.txt", ""},
		{"/mnt/cairn/ws/d/../a", ""},
		{"/mnt/cairn/ws//a", ""},
		{"/mnt/cairn/ws", cairn.ReasonPathIsMountRoot},
		{"/mnt/cairn/ws/", cairn.ReasonPathIsMountRoot},
		{"/mnt/cairn/ws/d/..", cairn.ReasonPathIsMountRoot},
		{"/mnt/cairn/wsX/a", cairn.ReasonPathOutsideMount},
		{"/mnt/cairn/ws/../wsX", cairn.ReasonPathOutsideMount},
		{"/etc/passwd", cairn.ReasonPathOutsideMount},
		{"mnt/cairn/ws/a", cairn.ReasonPathOutsideMount},
		{"", cairn.ReasonPathOutsideMount},
	}
	for _, tt := range tests {
		err := cairn.ValidateVolumePath(tt.path)
		if tt.reason == "" {
			require.NoError(t, err, tt.path)
			continue
		}
		require.Equal(t, tt.reason, cairn.ErrorReason(err), tt.path)
	}
}

func FuzzValidateVolumePath(f *testing.F) {
	for _, seed := range []string{"/mnt/cairn/ws/a", "/mnt/cairn/ws", "/mnt/cairn/wsX", "/mnt/cairn/ws/../x", "rel", "//mnt/cairn/ws/a"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if cairn.ValidateVolumePath(p) != nil {
			return
		}
		cleaned := path.Clean(p)
		require.True(t, strings.HasPrefix(cleaned, cairn.MountPath+"/"), "an accepted path %q stays inside the mount", p)
		require.NotEqual(t, cairn.MountPath, cleaned)
	})
}

func TestValidateVolumePathBytes(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]string{
		"NUL": cairn.MountPath + "/a\x00b", "ESC": cairn.MountPath + "/\x1b[2J", "DEL": cairn.MountPath + "/a\x7f",
		"Newline": cairn.MountPath + "/a\nb", "Tab": cairn.MountPath + "/a\tb", "NotUTF8": cairn.MountPath + "/\xff",
		"Long": cairn.MountPath + "/" + strings.Repeat("a", cairn.MaxPathBytes),
	} {
		err := cairn.ValidateVolumePath(p)
		require.Equal(t, cairn.ReasonInvalidPath, cairn.ErrorReason(err), name)
		require.NotContains(t, cairn.ErrorDetail(err), p, name+": the path is not echoed")
	}
	require.NoError(t, cairn.ValidateVolumePath(cairn.MountPath+"/"+strings.Repeat("a", 4000)+"/é"),
		"a long UTF-8 path within the bound")
}
