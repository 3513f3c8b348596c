package client_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client/clienttest"
)

// fakeApp names the fake's volumes in the contract.
const fakeApp = "cairn-fake"

// fakeWorld is the contract's world behind clienttest's server.
type fakeWorld struct{ s *clienttest.Server }

func (f fakeWorld) appName() string { return fakeApp }

func (f fakeWorld) mount(_ testing.TB, ws *cairn.Workspace) (stop func()) {
	f.s.SetMounts(ws.ID, 1)
	return func() { f.s.SetMounts(ws.ID, 0) }
}

func (f fakeWorld) markMissing(_ testing.TB, id string) { f.s.MarkMissing(id) }

func (f fakeWorld) writeVolume(_ testing.TB, ws *cairn.Workspace, path, content string) {
	f.s.PutVolumeFile(ws.ID, path, []byte(content))
}

func (f fakeWorld) readVolume(t testing.TB, ws *cairn.Workspace, path string) string {
	t.Helper()
	b, ok := f.s.VolumeFile(ws.ID, path)
	require.True(t, ok, "%s is no file of the volume", path)
	return string(b)
}

func (f fakeWorld) mkdir(_ testing.TB, ws *cairn.Workspace, path string) {
	f.s.PutVolumeDir(ws.ID, path)
}

func (f fakeWorld) symlink(_ testing.TB, ws *cairn.Workspace, path, target string) {
	f.s.PutVolumeLink(ws.ID, path, target)
}

func (f fakeWorld) fifo(_ testing.TB, ws *cairn.Workspace, path string) {
	f.s.PutVolumeOther(ws.ID, path)
}

func entryNames(entries []cairn.FileEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name
	}
	return out
}

func contractFiles(t *testing.T, s subject) {
	ctx := t.Context()
	ws := s.readyWorkspace(t)
	dir := cairn.MountPath + "/files"
	s.w.mkdir(t, ws, dir+"/logs")
	for _, name := range []string{"c.log", "a.log", "b.log"} {
		s.w.writeVolume(t, ws, dir+"/logs/"+name, "line of "+name)
	}
	s.w.writeVolume(t, ws, dir+"/notes.md", "# notes\nsecond line\n")
	s.w.symlink(t, ws, dir+"/latest", "logs/c.log")
	s.w.fifo(t, ws, dir+"/pipe")
	none := s.workspace(t)

	t.Run("List", func(t *testing.T) {
		l, err := s.svc.ListFiles(ctx, ws.ID, cairn.FileListParams{Path: dir})
		require.NoError(t, err)
		require.Equal(t, dir, l.Path)
		require.Equal(t, []string{"latest", "logs", "notes.md", "pipe"}, entryNames(l.Entries), "byte order of names")
		require.Empty(t, l.NextAfter)
		types := map[string]string{}
		for _, e := range l.Entries {
			types[e.Name] = e.Type
		}
		require.Equal(t, map[string]string{"latest": cairn.FileTypeSymlink, "logs": cairn.FileTypeDir,
			"notes.md": cairn.FileTypeFile, "pipe": cairn.FileTypeOther}, types)
		require.Equal(t, "logs/c.log", *l.Entries[0].LinkTarget, "a symlink is reported, not followed")
		require.Equal(t, int64(len("# notes\nsecond line\n")), l.Entries[2].Size)

		one, err := s.svc.ListFiles(ctx, ws.ID, cairn.FileListParams{Path: dir + "/notes.md"})
		require.NoError(t, err)
		require.Equal(t, []string{"notes.md"}, entryNames(one.Entries), "a file lists as its one entry")
		link, err := s.svc.ListFiles(ctx, ws.ID, cairn.FileListParams{Path: dir + "/latest"})
		require.NoError(t, err)
		require.Len(t, link.Entries, 1, "so does a symlink, unfollowed")
		require.Equal(t, cairn.FileTypeSymlink, link.Entries[0].Type)
	})
	t.Run("Paging", func(t *testing.T) {
		first, err := s.svc.ListFiles(ctx, ws.ID, cairn.FileListParams{Path: dir + "/logs", Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []string{"a.log", "b.log"}, entryNames(first.Entries))
		require.Equal(t, "b.log", first.NextAfter)
		rest, err := s.svc.ListFiles(ctx, ws.ID, cairn.FileListParams{Path: dir + "/logs", Limit: 2, After: first.NextAfter})
		require.NoError(t, err)
		require.Equal(t, []string{"c.log"}, entryNames(rest.Entries))
		require.Empty(t, rest.NextAfter)
	})
	t.Run("ListRefusals", func(t *testing.T) {
		list := func(wsID, path string) error {
			_, err := s.svc.ListFiles(ctx, wsID, cairn.FileListParams{Path: path})
			return err
		}
		s.failsInVolume(t, list(ws.ID, dir+"/absent"), cairn.ReasonPathNotFound)
		s.failsInVolume(t, list(ws.ID, "/etc"), cairn.ReasonPathOutsideMount)
		s.failsInVolume(t, list(none.ID, cairn.MountPath), cairn.ReasonVolumeNotReady)
		s.failsInVolume(t, list(unknownWorkspace, cairn.MountPath), cairn.ReasonWorkspaceNotFound)
	})
	t.Run("Read", func(t *testing.T) {
		c, err := s.svc.ReadFile(ctx, ws.ID, cairn.FileReadParams{Path: dir + "/notes.md"})
		require.NoError(t, err)
		require.Equal(t, "# notes\nsecond line\n", string(c.Data))
		require.Equal(t, int64(len(c.Data)), c.Size)
		require.Equal(t, "text/plain; charset=utf-8", c.ContentType)
		require.False(t, c.MTime.IsZero())

		part, err := s.svc.ReadFile(ctx, ws.ID, cairn.FileReadParams{Path: dir + "/notes.md", Offset: 2, Length: 5})
		require.NoError(t, err)
		require.Equal(t, "notes", string(part.Data))
		require.Equal(t, c.Size, part.Size, "the size is the whole file's")
	})
	t.Run("ReadRefusals", func(t *testing.T) {
		read := func(wsID, path string) error {
			_, err := s.svc.ReadFile(ctx, wsID, cairn.FileReadParams{Path: path})
			return err
		}
		s.failsInVolume(t, read(ws.ID, dir+"/logs"), cairn.ReasonPathIsDirectory)
		s.failsInVolume(t, read(ws.ID, dir+"/latest"), cairn.ReasonPathIsSymlink)
		s.failsInVolume(t, read(ws.ID, dir+"/pipe"), cairn.ReasonPathNotRegular)
		s.failsInVolume(t, read(ws.ID, dir+"/absent"), cairn.ReasonPathNotFound)
		s.failsInVolume(t, read(ws.ID, cairn.MountPath), cairn.ReasonPathIsMountRoot)
		s.failsInVolume(t, read(none.ID, dir+"/notes.md"), cairn.ReasonVolumeNotReady)
	})
}

func contractArchives(t *testing.T, s subject) {
	ctx := t.Context()
	ws := s.readyWorkspace(t)
	tree := cairn.MountPath + "/tree"
	s.w.mkdir(t, ws, tree+"/sub")
	s.w.writeVolume(t, ws, tree+"/a.txt", "alpha")
	s.w.writeVolume(t, ws, tree+"/sub/b.txt", "beta")
	s.w.mkdir(t, ws, cairn.MountPath+"/taken")

	for _, format := range []string{cairn.ArchiveTarGz, cairn.ArchiveZip} {
		t.Run(format, func(t *testing.T) {
			a, err := s.svc.ArtifactFromVolume(ctx, ws.ID, cairn.VolumeArtifactCreate{SourcePath: tree, Name: unique("packed"),
				Format: format})
			require.NoError(t, err)
			require.Equal(t, cairn.ArchiveMIME(format), a.MIMEType)
			require.Equal(t, cairn.ArtifactRecorded, a.State)

			target := cairn.MountPath + "/out-" + a.ID
			res, err := s.svc.UnpackArtifact(ctx, a.ID, target)
			require.NoError(t, err)
			require.Equal(t, target, res.TargetDir)
			require.Equal(t, int64(len("alpha")+len("beta")), res.Bytes)
			require.Equal(t, 3, res.Entries, "a.txt, sub/ and sub/b.txt")
			require.Equal(t, "alpha", s.w.readVolume(t, ws, target+"/a.txt"))
			require.Equal(t, "beta", s.w.readVolume(t, ws, target+"/sub/b.txt"))

			_, err = s.svc.UnpackArtifact(ctx, a.ID, target)
			s.failsInVolume(t, err, cairn.ReasonTargetExists)
			_, err = s.svc.UnpackArtifact(ctx, a.ID, cairn.MountPath+"/nodir/out")
			s.failsInVolume(t, err, cairn.ReasonTargetDirMissing)
		})
	}
	t.Run("Refusals", func(t *testing.T) {
		save := func(path, format string) error {
			_, err := s.svc.ArtifactFromVolume(ctx, ws.ID, cairn.VolumeArtifactCreate{SourcePath: path, Name: unique("x"), Format: format})
			return err
		}
		s.fails(t, save(tree, "rar"), cairn.ReasonInvalidParameters)
		s.fails(t, save(tree+"/a.txt", cairn.ArchiveTarGz), cairn.ReasonSourceNotDir)
		s.fails(t, save(tree+"/absent", cairn.ArchiveZip), cairn.ReasonSourceNotFound)

		text := s.upload(t, ws.ID, unique("text"), []byte("not an archive"))
		_, err := s.svc.UnpackArtifact(ctx, text.ID, cairn.MountPath+"/text-out")
		s.failsInVolume(t, err, cairn.ReasonArchiveInvalid)
		_, err = s.svc.UnpackArtifact(ctx, text.ID, "")
		s.fails(t, err, cairn.ReasonInvalidParameters)
		_, err = s.svc.UnpackArtifact(ctx, unknownArtifact, cairn.MountPath+"/x")
		s.fails(t, err, cairn.ReasonArtifactNotFound)
	})
}

// contractConditionalLists holds the lists' entity tags: a tag answers
// "not modified" until the list changes, a change anywhere in the
// workspace's artifacts moves it, and another workspace's does not.
func contractConditionalLists(t *testing.T, s subject) {
	ctx := t.Context()
	c := s.client
	ws, other := s.workspace(t), s.workspace(t)
	a := s.upload(t, ws.ID, "first", []byte("1"))
	f := cairn.ArtifactFilter{WorkspaceID: ws.ID}

	page, err := c.ArtifactPage(ctx, f, "")
	require.NoError(t, err)
	require.Equal(t, []string{"first"}, artifactNames(page.Rows))
	require.NotEmpty(t, page.ETag)

	same, err := c.ArtifactPage(ctx, f, page.ETag)
	require.NoError(t, err)
	require.True(t, same.NotModified)
	require.Nil(t, same.Rows)
	require.Equal(t, page.ETag, same.ETag)

	s.upload(t, other.ID, "elsewhere", []byte("2"))
	same, err = c.ArtifactPage(ctx, f, page.ETag)
	require.NoError(t, err)
	require.True(t, same.NotModified, "another workspace's artifacts are another list")

	narrower, err := c.ArtifactPage(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID, Page: cairn.Page{Limit: 1}}, page.ETag)
	require.NoError(t, err)
	require.False(t, narrower.NotModified, "another page has another tag")

	_, err = s.svc.RenameArtifact(ctx, a.ID, "renamed")
	require.NoError(t, err)
	changed, err := c.ArtifactPage(ctx, f, page.ETag)
	require.NoError(t, err)
	require.False(t, changed.NotModified)
	require.Equal(t, []string{"renamed"}, artifactNames(changed.Rows))
	require.NotEqual(t, page.ETag, changed.ETag)
}
