package action

import (
	"path"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/preview"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/picker"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// The files pane's actions. Saving reads the volume; loading and unpacking
// write it, and the pane lists again after each (the volume sends no
// events). Like the other volume transfers they run in the server, so they
// are operations, not transfers.

// fileAction opens the files pane, previews a volume file, asks what to
// save, load or unpack, or what to change; each needs the volume READY.
func (act *Flow) fileAction(a screen.ActionMsg, w *cairn.Workspace) tea.Cmd {
	if w.VolumeState != cairn.VolumeReady {
		return act.host.Toast(toast.LevelInfo, "needs volume READY — v provisions it")
	}
	switch a.ID {
	case keys.Files:
		return act.host.OpenFiles(w.ID)
	case keys.FilesPreview:
		return act.openFilePreview(w.ID, a.Path)
	case keys.FilesSave:
		return act.saveEntry(w, a.Path, a.Dir)
	case keys.FilesLoad, keys.FilesUnpack:
		return act.pickArtifact(a.ID, w, a.Path)
	}
	return act.changeAction(a, w)
}

// openFilePreview pushes the preview of a volume file and reads its first
// preview.FileBytes (fewer when preview.max_bytes says so): one read of the
// files route, which refuses more than 1 MiB anyway.
func (act *Flow) openFilePreview(wsID, p string) tea.Cmd {
	req := act.host.NextID()
	push := act.host.Push(preview.NewFile(act.c, wsID, p, req))
	n := min(int64(preview.FileBytes), max(act.c.Config.PreviewMaxBytes, preview.CardBytes))
	b, ctx := act.backend, act.ctx
	return tea.Batch(push, func() tea.Msg {
		fc, err := b.ReadFile(ctx, wsID, cairn.FileReadParams{Path: p, Length: n})
		msg := preview.Msg{WorkspaceID: wsID, Path: p, Req: req, Err: err}
		if err == nil {
			msg.Data, msg.Total, msg.ContentType = fc.Data, fc.Size, fc.ContentType
		}
		return msg
	})
}

// saveEntry opens the save form with the entry filled in: a file as it
// is, a directory packed as tar.gz (its name then ends in _tar_gz).
func (act *Flow) saveEntry(w *cairn.Workspace, p string, dir bool) tea.Cmd {
	format := ""
	if dir {
		format = cairn.ArchiveTarGz
	}
	act.openModal(dialog.VolSave(act.c.Theme, act.st, w, act.volPath(w.ID, p), format), intent{kind: intentVolSave, wsID: w.ID})
	return nil
}

// pickArtifact offers the workspace's artifacts to load into the
// directory dir (L) or to unpack there (X); the picker refuses, with a
// sentence, what cannot be: a MISSING_OBJECT artifact, or one that is no
// archive.
func (act *Flow) pickArtifact(id keys.ID, w *cairn.Workspace, dir string) tea.Cmd {
	arts, cached := act.st.Artifacts(w.ID)
	name := termkit.Sanitize(w.Name)
	switch {
	case !cached:
		return act.host.Toast(toast.LevelInfo, "the artifacts of "+name+" are still listing — try again in a moment")
	case len(arts) == 0:
		return act.host.Toast(toast.LevelInfo, name+" has no artifacts yet — i saves one from the volume")
	}
	arts = slices.Clone(arts)
	slices.SortFunc(arts, func(a, b *cairn.Artifact) int { return strings.Compare(a.Name, b.Name) })
	items := make([]picker.Item, len(arts))
	for i, a := range arts {
		items[i] = picker.Item{ID: a.ID, Name: termkit.Sanitize(a.Name), Note: artifactNote(act.c.Theme, a)}
	}
	shown := termkit.Sanitize(dir)
	in := intent{kind: intentPickLoad, wsID: w.ID, dir: dir}
	title, intro, check := "Load an artifact into "+shown, "Its content is written to a file of this directory.", act.loadable
	if id == keys.FilesUnpack {
		in.kind = intentPickUnpack
		title, intro, check = "Unpack an archive into "+shown, "Its entries go into a new directory here.", act.unpackable
	}
	act.openModal(picker.New(act.c.Theme, title, intro, items, check), in)
	return nil
}

// artifactNote is a picker row's size, type and state.
func artifactNote(th *theme.Theme, a *cairn.Artifact) string {
	dot := " " + th.Glyphs.Dot + " "
	note := termkit.Size(a.Size) + dot + termkit.Sanitize(mimeOf(a))
	if a.State == cairn.ArtifactMissingObject {
		note += dot + th.Glyphs.Missing + " MISSING"
	}
	return note
}

// loadable refuses an artifact whose object is gone.
func (act *Flow) loadable(id string) string {
	a, ok := act.st.Artifact(id)
	switch {
	case !ok:
		return "the artifact is gone"
	case a.State != cairn.ArtifactRecorded:
		return termkit.Sanitize(a.Name) + " is MISSING_OBJECT — nothing to load"
	}
	return ""
}

// unpackable refuses what is not a RECORDED tar.gz or zip archive.
func (act *Flow) unpackable(id string) string {
	if reason := act.loadable(id); reason != "" {
		return strings.Replace(reason, "nothing to load", "nothing to unpack", 1)
	}
	a, _ := act.st.Artifact(id)
	if cairn.ArchiveFormatOf(mimeOf(a)) == "" {
		return termkit.Sanitize(a.Name) + " is " + termkit.Sanitize(mimeOf(a)) +
			", not an archive — X unpacks tar.gz and zip artifacts (i on a directory packs one)"
	}
	return ""
}

// picked opens the form of what the picker was for: the target file of a
// load (the directory and the artifact's name) or the new directory of an
// unpack (the directory and the archive's name without its extension).
func (act *Flow) picked(in intent) tea.Cmd {
	a, aok := act.st.Artifact(in.artID)
	w, wok := act.st.Workspace(in.wsID)
	if !aok || !wok {
		return act.host.Toast(toast.LevelInfo, "the artifact is gone")
	}
	if in.kind == intentPickUnpack {
		in.kind = intentUnpack
		act.openModal(dialog.Unpack(act.c.Theme, w, a, act.volPath(w.ID, path.Join(in.dir, UnpackDir(a.Name)))), in)
		return nil
	}
	in.kind = intentVolLoad
	act.openModal(dialog.VolLoad(act.c.Theme, w, a, act.volPath(w.ID, path.Join(in.dir, a.Name)), act.overwrites(w.ID)), in)
	return nil
}

// overwrites warns while the load's target is a file the files pane
// lists: its content is replaced.
func (act *Flow) overwrites(wsID string) func(string) string {
	return act.listedWarning(wsID, func(e cairn.FileEntry) string {
		if e.Type == cairn.FileTypeFile {
			return termkit.Sanitize(e.Name) + " exists (" + termkit.Size(e.Size) + ") — its content is replaced"
		}
		return termkit.Sanitize(e.Name) + " exists and is no file — the load is refused"
	})
}

// UnpackDir is the directory an archive artifact unpacks into by default:
// its name without the archive's extension as a saved name carries it
// (logs_tar_gz → logs; out.zip → out).
func UnpackDir(name string) string {
	for _, ext := range []string{"_tar_gz", ".tar.gz", "_tgz", ".tgz", "_zip", ".zip"} {
		if base, ok := strings.CutSuffix(name, ext); ok && base != "" {
			return base
		}
	}
	return name
}
