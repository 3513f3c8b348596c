package runtimetest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

func packSpec(volume, workspaceID string, dialog func(context.Context, sidecar.Need) (sidecar.Grant, error)) service.SidecarSpec {
	spec := transferSpec(sidecar.CommandPack, volume, workspaceID, map[string]string{
		sidecar.EnvSourcePath: cairn.MountPath, sidecar.EnvFormat: sidecar.FormatTarGz,
		sidecar.EnvMaxSize: "1048576", sidecar.EnvPartSize: strconv.Itoa(sidecar.MinPartSize),
	})
	spec.Dialog = dialog
	return spec
}

// tarNames lists the entries of a tar.gz.
func tarNames(t *testing.T, archive []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		require.NoError(t, err)
		names = append(names, h.Name)
	}
}

func testDialog(t *testing.T, h Harness) {
	t.Run("OKPackConversesAndUploads", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, id := provision(t, s)
		st := newStore(t, h, []byte("packed on every runtime\n"))
		runOK(t, s.Runtime, downloadSpec(volume, id, st.URL+"/obj", cairn.MountPath+"/file.txt"))

		var needs []sidecar.Need
		res := runOK(t, s.Runtime, packSpec(volume, id, func(_ context.Context, n sidecar.Need) (sidecar.Grant, error) {
			needs = append(needs, n)
			return sidecar.Grant{URL: st.URL + "/up"}, nil
		}))
		require.Len(t, needs, 1, "one PUT for a small archive")
		require.Equal(t, 1, res.Entries)
		require.EqualValues(t, len(st.received()), needs[0].Size, "the need named the bytes sent")
		require.Contains(t, tarNames(t, st.received()), "file.txt")
	})

	t.Run("ErrDialogEndsTheRun", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, id := provision(t, s)
		st := newStore(t, h, []byte("x"))
		runOK(t, s.Runtime, downloadSpec(volume, id, st.URL+"/obj", cairn.MountPath+"/file.txt"))
		refused := errors.New("the store refused")
		out, err := s.Runtime.RunSidecar(t.Context(), packSpec(volume, id, func(context.Context, sidecar.Need) (sidecar.Grant, error) {
			return sidecar.Grant{}, refused
		}))
		require.Nil(t, out)
		require.ErrorIs(t, err, refused)
		require.Nil(t, st.received())
		requireNoSidecars(t, s)
	})
}
