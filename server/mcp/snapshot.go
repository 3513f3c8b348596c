package mcp

import (
	"context"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-dev/cairn"
)

// snapshotView is a snapshot as the tools show it: by name, within its
// workspace.
type snapshotView struct {
	Name          string    `json:"name"`
	Live          bool      `json:"live"`
	Entries       int       `json:"entries"`
	Bytes         int64     `json:"bytes"`
	UploadedBytes int64     `json:"uploaded_bytes"`
	CreatedAt     time.Time `json:"created_at"`
}

func viewSnapshot(s *cairn.Snapshot) snapshotView {
	return snapshotView{Name: s.Name, Live: s.Live, Entries: s.Entries, Bytes: s.Bytes, UploadedBytes: s.UploadedBytes, CreatedAt: s.CreatedAt}
}

var snapshotItem = object{props: []property{
	{name: "name", required: true, schema: leaf("string", "Name of the snapshot, unique in its workspace.")},
	{name: "live", required: true, schema: leaf("boolean", "Taken while other containers could write the volume: files whole, not one instant.")},
	{name: "entries", required: true, schema: leaf("integer", "Directories, files and symlinks recorded.")},
	{name: "bytes", required: true, schema: leaf("integer", "Total size of the files.")},
	{name: "uploaded_bytes", required: true, schema: leaf("integer", "What this snapshot stored that no earlier one had.")},
	{name: "created_at", required: true, schema: leaf("string", "When it was taken (RFC 3339).")},
}}

const snapshotNameDesc = "Name of a snapshot of the workspace, as snapshot_workspace or list_snapshots gave it."

var snapshotWorkspaceTool = definition{
	name:  "snapshot_workspace",
	scope: "write",
	description: "Record the whole workspace volume as a named snapshot you can restore or fork from later: every directory, " +
		"file and symlink with its mode, owner and time. Only content no earlier snapshot stored is uploaded, so snapshots " +
		"are cheap. Refused with volume_in_use while another container mounts the volume, unless live is true.",
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		optionalString("snapshot_name", "Name for the snapshot: 1 to 128 ASCII letters, digits, '-' or '_', unused in the "+
			"workspace. Default: one is made."),
		optionalBoolean("live", "Snapshot even while other containers mount the volume (default false)."),
	},
	output:      &object{props: []property{{name: "snapshot", required: true, schema: snapshotItem}}},
	annotations: action(false, false),
}

var listSnapshotsTool = definition{
	name:        "list_snapshots",
	scope:       "read",
	description: "List the snapshots of a workspace, oldest first.",
	params:      []param{requiredString("workspace_name", workspaceNameDesc)},
	output: &object{props: []property{
		{name: "snapshots", required: true, schema: arrayOf(snapshotItem, "The workspace's snapshots; empty when none.")},
	}},
	annotations: readOnly(),
}

var restoreSnapshotTool = definition{
	name:  "restore_snapshot",
	scope: "write",
	description: "Replace the whole content of the workspace volume with one of its snapshots: files made since are gone, " +
		"files changed since are as they were. All or nothing: the snapshot is rebuilt and checked beside the current " +
		"content, which stays if anything fails. Refused with volume_in_use while another container mounts the volume.",
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("snapshot_name", snapshotNameDesc),
	},
	output: &object{props: []property{
		{name: "entries", required: true, schema: leaf("integer", "Entries restored.")},
		{name: "bytes", required: true, schema: leaf("integer", "Bytes of files written.")},
	}},
	annotations: action(true, true),
}

var forkWorkspaceTool = definition{
	name:  "fork_workspace",
	scope: "write",
	description: "Make a new workspace holding a copy of this one's volume, to try something without touching the original. " +
		"The source is snapshotted first (the snapshot is kept, named fork-<new name>); the new workspace's volume is READY.",
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("new_workspace_name", "Name of the new workspace: 1 to 128 ASCII letters, digits, '-' or '_', unused."),
		optionalBoolean("live", "Snapshot the source even while other containers mount it (default false)."),
	},
	output:      &object{props: []property{{name: "workspace", required: true, schema: workspaceItem}}},
	annotations: action(false, false),
}

type snapshotArgs struct {
	WorkspaceName string `json:"workspace_name"`
	SnapshotName  string `json:"snapshot_name"`
	Live          bool   `json:"live"`
}

func (a snapshotArgs) check(string) error {
	if err := checkNames("workspace", a.WorkspaceName); err != nil {
		return err
	}
	if a.SnapshotName == "" {
		return nil
	}
	return checkNames("snapshot", a.SnapshotName)
}

func (t *toolbox) snapshotWorkspace(ctx context.Context, a snapshotArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	snap, err := t.svc.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{Name: a.SnapshotName, Live: a.Live})
	if err != nil {
		return nil, err
	}
	return structured(struct {
		Snapshot snapshotView `json:"snapshot"`
	}{viewSnapshot(snap)})
}

func (t *toolbox) listSnapshots(ctx context.Context, a workspaceArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	list, err := t.svc.ListSnapshots(ctx, ws.ID)
	if err != nil {
		return nil, err
	}
	views := make([]snapshotView, len(list))
	for i, s := range list {
		views[i] = viewSnapshot(s)
	}
	return structured(struct {
		Snapshots []snapshotView `json:"snapshots"`
	}{views})
}

func (t *toolbox) restoreSnapshot(ctx context.Context, a snapshotArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	list, err := t.svc.ListSnapshots(ctx, ws.ID)
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if s.Name != a.SnapshotName {
			continue
		}
		out, err := t.svc.RestoreSnapshot(ctx, ws.ID, s.ID)
		if err != nil {
			return nil, err
		}
		return structured(struct {
			Entries int   `json:"entries"`
			Bytes   int64 `json:"bytes"`
		}{out.Entries, out.Bytes})
	}
	return nil, cairn.Errorf(cairn.ReasonSnapshotNotFound, "workspace '%s' has no snapshot named '%s'", ws.Name, a.SnapshotName)
}

type forkArgs struct {
	WorkspaceName    string `json:"workspace_name"`
	NewWorkspaceName string `json:"new_workspace_name"`
	Live             bool   `json:"live"`
}

func (a forkArgs) check(string) error {
	return checkNames("workspace", a.WorkspaceName, a.NewWorkspaceName)
}

func (t *toolbox) forkWorkspace(ctx context.Context, a forkArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	fork, err := t.svc.ForkWorkspace(ctx, ws.ID, cairn.WorkspaceFork{Name: a.NewWorkspaceName, Live: a.Live})
	if err != nil {
		return nil, err
	}
	return structured(struct {
		Workspace workspaceView `json:"workspace"`
	}{viewWorkspace(fork)})
}
