package runtimetest

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// testBrowse: a workspace's files are listed and read through the warm
// browse sidecar and changed through its writer, refusals come back as the
// sidecar's, neither counts as a mount, and StopBrowse frees the volume
// for a teardown.
func testBrowse(t *testing.T, h Harness) {
	s := h.New(t, 0)
	volume, id := provision(t, s)
	body := bytes.Repeat([]byte("0123456789"), 300)
	st := newStore(t, h, body)
	runOK(t, s.Runtime, downloadSpec(volume, id, st.URL+"/obj", cairn.MountPath+"/file.txt"))
	target := service.BrowseTarget{WorkspaceID: id, VolumeName: volume}
	browse := func(req sidecar.BrowseRequest) *sidecar.BrowseReply {
		t.Helper()
		reply, err := s.Runtime.Browse(t.Context(), target, req)
		require.NoError(t, err)
		return reply
	}

	ls := browse(sidecar.BrowseRequest{Op: sidecar.OpList, Path: cairn.MountPath, Limit: 10})
	require.True(t, ls.OK, "%+v", ls)
	require.Len(t, ls.Entries, 1)
	require.Equal(t, "file.txt", ls.Entries[0].Name)
	require.EqualValues(t, len(body), ls.Entries[0].Size)

	rd := browse(sidecar.BrowseRequest{Op: sidecar.OpRead, Path: cairn.MountPath + "/file.txt", Offset: 5, Length: 20})
	require.True(t, rd.OK, "%+v", rd)
	require.Equal(t, body[5:25], rd.Data)
	whole := browse(sidecar.BrowseRequest{Op: sidecar.OpRead, Path: cairn.MountPath + "/file.txt", Length: sidecar.MaxReadBytes})
	require.Equal(t, body, whole.Data)

	missing := browse(sidecar.BrowseRequest{Op: sidecar.OpRead, Path: cairn.MountPath + "/none", Length: 1})
	require.False(t, missing.OK)
	require.Equal(t, sidecar.ReasonPathNotFound, *missing.Reason)
	escaped := browse(sidecar.BrowseRequest{Op: sidecar.OpList, Path: cairn.MountPath + "/../../etc", Limit: 1})
	require.False(t, escaped.OK)
	require.Equal(t, sidecar.ReasonPathOutsideMount, *escaped.Reason)

	// The writer: a second container beside the reader, which changes
	// the volume; a reader refuses every write.
	writer := service.BrowseTarget{WorkspaceID: id, VolumeName: volume, Writable: true}
	write := func(req sidecar.BrowseRequest) *sidecar.BrowseReply {
		t.Helper()
		reply, err := s.Runtime.Browse(t.Context(), writer, req)
		require.NoError(t, err)
		require.True(t, reply.OK, "%+v", reply)
		return reply
	}
	write(sidecar.BrowseRequest{Op: sidecar.OpMkdir, Path: cairn.MountPath + "/out"})
	put := write(sidecar.BrowseRequest{Op: sidecar.OpPut, Path: cairn.MountPath + "/out/new.txt", Size: 5, Body: []byte("hello")})
	require.NotEmpty(t, put.File.ETag)
	write(sidecar.BrowseRequest{Op: sidecar.OpMove, Path: cairn.MountPath + "/out/new.txt", To: cairn.MountPath + "/moved.txt"})
	require.Equal(t, []byte("hello"), browse(sidecar.BrowseRequest{Op: sidecar.OpRead, Path: cairn.MountPath + "/moved.txt"}).Data,
		"the reader sees what the writer wrote")
	write(sidecar.BrowseRequest{Op: sidecar.OpRemove, Path: cairn.MountPath + "/out", Recursive: true})
	refused := browse(sidecar.BrowseRequest{Op: sidecar.OpPut, Path: cairn.MountPath + "/x", Size: 1, Body: []byte("x")})
	require.False(t, refused.OK)
	require.Equal(t, sidecar.ReasonReadOnly, *refused.Reason)

	counts, err := s.Runtime.MountCounts(t.Context(), []string{volume})
	require.NoError(t, err)
	require.Equal(t, 0, counts[volume], "the browser and the writer are cairn's own, not mounts")
	require.NoError(t, s.Runtime.StopBrowse(t.Context(), id))
	require.NoError(t, s.Runtime.RemoveVolume(t.Context(), volume), "nothing holds the volume once the browser stopped")
	requireNoSidecars(t, s)
}
