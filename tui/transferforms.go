package tui

import (
	"github.com/cairn-dev/cairn/internal/termkit"

	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// localStatMsg is what a transfer form's path turned out to be on this
// machine.
type localStatMsg struct {
	opID   int
	path   string // ~ expanded
	size   int64
	exists bool
	err    string // the sentence under the path field
}

// uploadForm asks for a local file, the new artifact's name (derived from
// the file name until edited) and a description (TUI.md §3.7).
func (m *Model) uploadForm(w *cairn.Workspace) *form.Model {
	st := m.sh.st
	return form.New(m.c.Theme, "Upload to "+w.Name,
		form.Field{Key: "path", Label: "Local file", Limit: 4096, Complete: completeCmd("path"), Validate: required("a file path")},
		form.Field{Key: "name", Label: "Name", Limit: cairn.MaxNameLength, Validate: validateName("artifact"),
			From: "path", Derive: client.ArtifactName,
			Warn: func(v string) string {
				if hasArtifactNamed(st, w.ID, v) {
					return w.Name + " already has an artifact named " + v
				}
				return ""
			}},
		form.Field{Key: "description", Label: "Description", Limit: cairn.MaxDescriptionBytes, Validate: validateDescription})
}

// replaceForm asks for the local file whose bytes become the content.
func (m *Model) replaceForm(a *cairn.Artifact) *form.Model {
	title := "Replace the content of " + a.Name
	if a.State == cairn.ArtifactMissingObject {
		title = "Repair " + a.Name
	}
	return form.New(m.c.Theme, title,
		form.Field{Key: "path", Label: "Local file", Limit: 4096, Complete: completeCmd("path"), Validate: required("a file path")})
}

// downloadForm asks for the target, default transfer.download_dir/name.
func (m *Model) downloadForm(a *cairn.Artifact) *form.Model {
	target := filepath.Join(m.c.Config.DownloadDir, a.Name)
	if m.c.Config.DownloadDir == "." {
		target = "./" + a.Name
	}
	return form.New(m.c.Theme, "Download "+a.Name+" ("+termkit.Size(a.Size)+")",
		form.Field{Key: "path", Label: "Save to", Limit: 4096, Value: target, Complete: completeCmd("path"),
			Validate: required("a file path"), Note: "written to <path>.part, verified, then renamed"})
}

func required(what string) func(string) string {
	return func(v string) string {
		if v == "" {
			return "give " + what
		}
		return ""
	}
}

func hasArtifactNamed(st interface {
	Artifacts(string) ([]*cairn.Artifact, bool)
}, wsID, name string) bool {
	arts, _ := st.Artifacts(wsID)
	for _, a := range arts {
		if a.Name == name {
			return true
		}
	}
	return false
}

// submitTransferForm checks the local path in a Cmd; the form stays open
// and busy until the answer.
func (m *Model) submitTransferForm(f *form.Model, in intent, res common.Result) tea.Cmd {
	id := m.id()
	m.intent.opID = id
	m.intent.name, m.intent.desc = res.Values["name"], m.multiLine(res.Values["description"])
	f.BusyWith(m.sh.Frame(), "checking "+res.Values["path"]+"…")
	path := res.Values["path"]
	source := in.kind != intentDownload
	return func() tea.Msg { return statLocal(id, path, source) }
}

// statLocal looks at a path: a source must be a regular file (symlinks
// followed); a target may be absent (in an existing directory) or a
// regular file, which is then overwritten only after a confirmation.
func statLocal(opID int, raw string, source bool) localStatMsg {
	p := expandHome(raw)
	msg := localStatMsg{opID: opID, path: p}
	fi, err := os.Stat(p)
	switch {
	case err == nil && fi.IsDir():
		msg.err = raw + " is a directory — name a file"
	case err == nil && !fi.Mode().IsRegular():
		msg.err = raw + " is not a regular file"
	case err == nil:
		msg.exists, msg.size = true, fi.Size()
	case !errors.Is(err, fs.ErrNotExist):
		msg.err = "cannot use " + raw + ": " + errors.Unwrap(err).Error()
	case source:
		msg.err = "no such file: " + raw
	default:
		if d, derr := os.Stat(filepath.Dir(p)); derr != nil || !d.IsDir() {
			msg.err = "the directory " + filepath.Dir(raw) + " does not exist"
		}
	}
	return msg
}

// onLocalStat answers a transfer form: an error goes under the path
// field; otherwise the form closes and the transfer is queued, or its
// confirmation asked.
func (m *Model) onLocalStat(s localStatMsg) tea.Cmd {
	f, ok := m.modal.(*form.Model)
	if !ok || m.intent.opID != s.opID {
		return nil // the form was closed meanwhile
	}
	if s.err != "" {
		f.Fail("path", s.err)
		return nil
	}
	in := m.intent
	in.path, in.size = s.path, s.size
	m.closeModal()
	switch in.kind {
	case intentUpload:
		var desc *string
		if in.desc != "" {
			desc = &in.desc
		}
		return m.xfer.Enqueue(transfer.Spec{Kind: common.Upload, WSID: in.wsID, Name: in.name, Desc: desc, Path: in.path, Size: s.size})
	case intentReplace:
		return m.confirmReplace(in)
	case intentDownload:
		if s.exists {
			in.kind = intentOverwrite
			m.openConfirm(in, "Overwrite", fmt.Sprintf("%s exists (%s). Overwrite it?", in.path, termkit.Size(s.size)))
			return nil
		}
		return m.enqueueDownload(in, false)
	}
	return nil
}

// confirmReplace names both sizes, or asks to repair a MISSING artifact.
func (m *Model) confirmReplace(in intent) tea.Cmd {
	a, ok := m.sh.st.Artifact(in.artID)
	if !ok {
		return m.toast(common.LevelInfo, "the artifact is gone")
	}
	in.kind = intentReplaceConfirm
	if a.State == cairn.ArtifactMissingObject {
		in.repair = true
		m.openConfirm(in, "Repair", fmt.Sprintf("Repair %s: upload %s as its content?", a.Name, in.path))
		return nil
	}
	m.openConfirm(in, "Replace content", fmt.Sprintf("Replace the content of %s (%s, %s) with %s (%s)?",
		a.Name, termkit.Size(a.Size), mimeOf(a), in.path, termkit.Size(in.size)))
	return nil
}

func mimeOf(a *cairn.Artifact) string {
	t, _, _ := strings.Cut(a.MIMEType, ";")
	return strings.TrimSpace(t)
}

func (m *Model) enqueueDownload(in intent, overwrite bool) tea.Cmd {
	a, ok := m.sh.st.Artifact(in.artID)
	if !ok {
		return m.toast(common.LevelInfo, "the artifact is gone")
	}
	return m.xfer.Enqueue(transfer.Spec{Kind: common.Download, WSID: a.WorkspaceID, ArtID: a.ID, Name: a.Name,
		Path: in.path, Overwrite: overwrite, Size: a.Size})
}

func (m *Model) enqueueReplace(in intent) tea.Cmd {
	a, ok := m.sh.st.Artifact(in.artID)
	if !ok {
		return m.toast(common.LevelInfo, "the artifact is gone")
	}
	return m.xfer.Enqueue(transfer.Spec{Kind: common.Replace, WSID: a.WorkspaceID, ArtID: a.ID, Name: a.Name,
		Path: in.path, Repair: in.repair, Size: in.size})
}
