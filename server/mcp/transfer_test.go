package mcp_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/mcp"
)

// TestAgentFlow is what an agent does with cairn, end to end: a container
// that mounts the workspace writes a file, upload_artifact keeps it, the
// volume loses it, download_artifact brings it back into a directory the
// container made, and the artifact is listed, updated, renamed and deleted.
func TestAgentFlow(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	ws := h.workspace(t, "flow", true)
	c := connect(t, h.url, "")
	// in runs a script in a tool container; its terminal ends lines in CRLF.
	in := func(script string) string {
		return strings.ReplaceAll(stacktest.RunInVolume(t, h.app, ws.VolumeName, script), "\r\n", "\n")
	}

	var got struct{ Workspace workspaceOut }
	structured(t, call(t, c, "get_workspace", map[string]any{"workspace_name": "flow"}), &got)
	require.Equal(t, "READY", got.Workspace.VolumeState)

	want := in(`mkdir -p /mnt/cairn/ws/out && printf 'line one\nline two\n\001\377' > /mnt/cairn/ws/out/report.bin` +
		` && od -An -tx1 /mnt/cairn/ws/out/report.bin`)
	msg, link := stored(t, call(t, c, "upload_artifact", map[string]any{"workspace_name": "flow",
		"source_path": "/mnt/cairn/ws/out/report.bin", "artifact_name": "report", "description": "the report"}))
	require.Equal(t, "artifact 'report' recorded in workspace 'flow' from '/mnt/cairn/ws/out/report.bin'", msg)
	require.Equal(t, "cairn://workspaces/flow/artifacts/report", link.URI)
	require.Equal(t, int64(20), *link.Size)

	in(`rm /mnt/cairn/ws/out/report.bin && mkdir /mnt/cairn/ws/back`)
	msg = ok(t, call(t, c, "download_artifact", map[string]any{"workspace_name": "flow",
		"artifact_name": "report", "target_path": "/mnt/cairn/ws/back/report.bin"}))
	require.Equal(t, "artifact 'report' of workspace 'flow' downloaded to '/mnt/cairn/ws/back/report.bin'", msg)
	back := in(`od -An -tx1 /mnt/cairn/ws/back/report.bin && stat -c %a /mnt/cairn/ws/back/report.bin` +
		` && printf 'version two' > /mnt/cairn/ws/out/v2.txt`)
	require.Equal(t, want+"\n666", back, "the bytes came back, in a file of mode 0666")

	list := listArtifacts(t, c, map[string]any{"workspace_name": "flow"})
	require.Len(t, list, 1)
	require.Equal(t, "report", list[0].Name)
	require.Equal(t, "the report", *list[0].Description)
	require.Equal(t, "RECORDED", list[0].State)

	msg, link = stored(t, call(t, c, "update_artifact", map[string]any{"workspace_name": "flow",
		"artifact_name": "report", "source_path": "/mnt/cairn/ws/out/v2.txt"}))
	require.Equal(t, "artifact 'report' of workspace 'flow' updated from '/mnt/cairn/ws/out/v2.txt'", msg)
	require.Equal(t, "cairn://workspaces/flow/artifacts/report", link.URI)
	require.Equal(t, int64(11), *link.Size)
	ok(t, call(t, c, "download_artifact", map[string]any{"workspace_name": "flow",
		"artifact_name": "report", "target_path": "/mnt/cairn/ws/back/report.bin"}))
	require.Equal(t, "version two", in(`cat /mnt/cairn/ws/back/report.bin`), "an existing file is overwritten")

	ok(t, call(t, c, "rename_artifact", map[string]any{"workspace_name": "flow", "artifact_name": "report", "new_name": "final"}))
	list = listArtifacts(t, c, map[string]any{"workspace_name": "flow"})
	require.Equal(t, []string{"final"}, names(list))
	require.Equal(t, "the report", *list[0].Description, "update and rename keep the description")

	ok(t, call(t, c, "delete_artifact", map[string]any{"workspace_name": "flow", "artifact_name": "final"}))
	require.Empty(t, listArtifacts(t, c, map[string]any{"workspace_name": "flow"}))
}

// TestTransferErrors walks the refusals of the three volume tools, in the
// order the service checks them.
func TestTransferErrors(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	ready := h.workspace(t, "ready", true)
	none := h.workspace(t, "none", false)
	h.artifact(t, ready, "taken", "body", nil)
	lost := h.artifact(t, ready, "lost", "body", nil)
	h.exec(t, "UPDATE artifacts SET state = 'MISSING_OBJECT' WHERE id = $1", lost.ID)
	h.artifact(t, none, "idle", "body", nil)
	stacktest.RunInVolume(t, h.app, ready.VolumeName, `printf 'fixed' > /mnt/cairn/ws/fix.txt && mkdir /mnt/cairn/ws/dir`)
	c := connect(t, h.url, "")

	upload := func(ws, src, name string) map[string]any {
		return map[string]any{"workspace_name": ws, "source_path": src, "artifact_name": name}
	}
	download := func(ws, name, target string) map[string]any {
		return map[string]any{"workspace_name": ws, "artifact_name": name, "target_path": target}
	}
	update := func(ws, name, src string) map[string]any {
		return map[string]any{"workspace_name": ws, "artifact_name": name, "source_path": src}
	}
	cases := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"UploadErrWorkspaceNotFound", "upload_artifact", upload("gone", "/mnt/cairn/ws/x", "x"),
			"workspace_not_found: workspace 'gone' does not exist"},
		{"UploadErrNameTakenBeforePath", "upload_artifact", upload("ready", "relative", "taken"),
			"name_taken: workspace " + ready.ID + " already has an artifact named 'taken'"},
		{"UploadErrNameTakenAnyState", "upload_artifact", upload("ready", "/mnt/cairn/ws/fix.txt", "lost"),
			"name_taken: workspace " + ready.ID + " already has an artifact named 'lost'"},
		{"UploadErrPathNotAbsolute", "upload_artifact", upload("ready", "fix.txt", "x"),
			"path_outside_mount: path 'fix.txt' must be absolute, and within the workspace volume mounted at '/mnt/cairn/ws'"},
		{"UploadErrPathOutsideMount", "upload_artifact", upload("ready", "/mnt/cairn/ws/../wsX/a", "x"),
			"path_outside_mount: path '/mnt/cairn/ws/../wsX/a' resolves to '/mnt/cairn/wsX/a', which is outside the workspace volume mounted at '/mnt/cairn/ws'"},
		{"UploadErrPathIsMountRoot", "upload_artifact", upload("ready", "/mnt/cairn/ws/", "x"),
			"path_is_mount_root: path '/mnt/cairn/ws/' is the workspace volume mount point itself, not a file within it"},
		{"UploadErrVolumeNotReady", "upload_artifact", upload("none", "/mnt/cairn/ws/fix.txt", "x"),
			"volume_not_ready: workspace " + none.ID + " has no runtime volume (volume state 'NONE')"},
		{"UploadErrSourceNotFound", "upload_artifact", upload("ready", "/mnt/cairn/ws/missing.txt", "x"),
			"source_not_found: source file '/mnt/cairn/ws/missing.txt' does not exist"},
		{"UploadErrSourceIsDirectory", "upload_artifact", upload("ready", "/mnt/cairn/ws/dir", "x"),
			"source_is_directory: source path '/mnt/cairn/ws/dir' is a directory, not a single uploadable file"},

		{"DownloadErrWorkspaceNotFound", "download_artifact", download("gone", "taken", "/mnt/cairn/ws/x"),
			"workspace_not_found: workspace 'gone' does not exist"},
		{"DownloadErrArtifactNotFound", "download_artifact", download("ready", "nope", "/mnt/cairn/ws/x"),
			"artifact_not_found: workspace 'ready' has no artifact named 'nope'"},
		{"DownloadErrPathOutsideMount", "download_artifact", download("ready", "taken", "/tmp/x"),
			"path_outside_mount: path '/tmp/x' resolves to '/tmp/x', which is outside the workspace volume mounted at '/mnt/cairn/ws'"},
		{"DownloadErrVolumeNotReady", "download_artifact", download("none", "idle", "/mnt/cairn/ws/x"),
			"volume_not_ready: workspace " + none.ID + " has no runtime volume (volume state 'NONE')"},
		{"DownloadErrObjectMissing", "download_artifact", download("ready", "lost", "/mnt/cairn/ws/x"),
			"object_missing: artifact " + lost.ID + " is 'MISSING_OBJECT'; only a 'RECORDED' artifact has a servable object"},
		{"DownloadErrTargetDirMissing", "download_artifact", download("ready", "taken", "/mnt/cairn/ws/nodir/x"),
			"target_dir_missing: destination directory '/mnt/cairn/ws/nodir' does not exist; create it before downloading into it"},
		{"DownloadErrTargetIsDirectory", "download_artifact", download("ready", "taken", "/mnt/cairn/ws/dir"),
			"target_is_directory: destination path '/mnt/cairn/ws/dir' is a directory, not a file to write"},

		{"UpdateErrWorkspaceNotFound", "update_artifact", update("gone", "taken", "/mnt/cairn/ws/fix.txt"),
			"workspace_not_found: workspace 'gone' does not exist"},
		{"UpdateErrArtifactNotFound", "update_artifact", update("ready", "nope", "/mnt/cairn/ws/fix.txt"),
			"artifact_not_found: workspace 'ready' has no artifact named 'nope'"},
		{"UpdateErrArtifactOfOtherWorkspace", "update_artifact", update("ready", "idle", "/mnt/cairn/ws/fix.txt"),
			"artifact_not_found: workspace 'ready' has no artifact named 'idle'"},
		{"UpdateErrPathOutsideMount", "update_artifact", update("ready", "taken", "/etc/passwd"),
			"path_outside_mount: path '/etc/passwd' resolves to '/etc/passwd', which is outside the workspace volume mounted at '/mnt/cairn/ws'"},
		{"UpdateErrVolumeNotReady", "update_artifact", update("none", "idle", "/mnt/cairn/ws/fix.txt"),
			"volume_not_ready: workspace " + none.ID + " has no runtime volume (volume state 'NONE')"},
		{"UpdateErrSourceNotFound", "update_artifact", update("ready", "taken", "/mnt/cairn/ws/missing.txt"),
			"source_not_found: source file '/mnt/cairn/ws/missing.txt' does not exist"},
	}
	// The refusals run side by side; the group ends when all have.
	t.Run("Refusals", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				reason, _, _ := strings.Cut(tc.want, ": ")
				require.Equal(t, tc.want, fails(t, call(t, c, tc.tool, tc.args), reason))
			})
		}
	})

	t.Run("OKUpdateRepairsMissingObject", func(t *testing.T) {
		stored(t, call(t, c, "update_artifact", update("ready", "lost", "/mnt/cairn/ws/fix.txt")))
		list := listArtifacts(t, c, map[string]any{"workspace_name": "ready", "artifact_names": []string{"lost"}})
		require.Len(t, list, 1, "RECORDED again, so listed by default")
		ok(t, call(t, c, "download_artifact", download("ready", "lost", "/mnt/cairn/ws/repaired.txt")))
		require.Equal(t, "fixed", stacktest.RunInVolume(t, h.app, ready.VolumeName, `cat /mnt/cairn/ws/repaired.txt`))
	})
}
