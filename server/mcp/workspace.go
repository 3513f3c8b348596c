package mcp

import (
	"context"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-dev/cairn"
)

// workspaceView is a workspace as the read tools show it. The mount count
// is left out on purpose: it costs a Docker call and is not an agent's
// business.
type workspaceView struct {
	Name           string               `json:"name"`
	VolumeState    cairn.VolumeState    `json:"volume_state"`
	ArtifactCounts cairn.ArtifactCounts `json:"artifact_counts"`
	CreatedAt      time.Time            `json:"created_at"`
}

func viewWorkspace(ws *cairn.Workspace) workspaceView {
	return workspaceView{Name: ws.Name, VolumeState: ws.VolumeState, ArtifactCounts: ws.ArtifactCounts, CreatedAt: ws.CreatedAt}
}

// workspace resolves a workspace name to its row.
// Reasons: workspace_not_found, and the service's.
func (t *toolbox) workspace(ctx context.Context, name string) (*cairn.Workspace, error) {
	list, err := t.svc.FindWorkspaces(ctx, cairn.WorkspaceFilter{Names: []string{name}})
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, cairn.Errorf(cairn.ReasonWorkspaceNotFound, "workspace '%s' does not exist", name)
	}
	return list[0], nil
}

type workspaceArgs struct {
	WorkspaceName string `json:"workspace_name"`
}

func (a workspaceArgs) check(string) error { return checkNames("workspace", a.WorkspaceName) }

func (t *toolbox) getWorkspace(ctx context.Context, a workspaceArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	return structured(struct {
		Workspace workspaceView `json:"workspace"`
	}{viewWorkspace(ws)})
}

type listWorkspacesArgs struct {
	WorkspaceNames []string            `json:"workspace_names"`
	VolumeStates   []cairn.VolumeState `json:"volume_states"`
	Limit          *int                `json:"limit"`
	Offset         *int                `json:"offset"`
}

func (a listWorkspacesArgs) check(tool string) error {
	if err := checkNames("workspace", a.WorkspaceNames...); err != nil {
		return err
	}
	return checkPage(tool, a.Limit, a.Offset)
}

func (t *toolbox) listWorkspaces(ctx context.Context, a listWorkspacesArgs) (*mcpgo.CallToolResult, error) {
	list, err := t.svc.FindWorkspaces(ctx, cairn.WorkspaceFilter{
		Names: a.WorkspaceNames, VolumeStates: a.VolumeStates, Page: page(a.Limit, a.Offset),
	})
	if err != nil {
		return nil, err
	}
	views := make([]workspaceView, len(list))
	for i, ws := range list {
		views[i] = viewWorkspace(ws)
	}
	return structured(struct {
		Workspaces []workspaceView `json:"workspaces"`
	}{views})
}

var createWorkspaceTool = definition{
	name:  "create_workspace",
	scope: "write",
	description: "Create a workspace for a new piece of work. It starts without a volume (volume_state NONE): " +
		"call provision_volume next to give it one before any file or transfer tool.",
	params: []param{
		requiredString("workspace_name", "Name of the new workspace: 1 to 128 ASCII letters, digits, '-' or '_', unused."),
		optionalString("description", "Free text kept with the workspace, at most 4096 bytes."),
	},
	output:      &object{props: []property{{name: "workspace", required: true, schema: workspaceItem}}},
	annotations: action(false, false),
}

type createWorkspaceArgs struct {
	WorkspaceName string  `json:"workspace_name"`
	Description   *string `json:"description"`
}

func (a createWorkspaceArgs) check(string) error {
	if err := checkNames("workspace", a.WorkspaceName); err != nil {
		return err
	}
	return cairn.ValidateDescription(a.Description)
}

func (t *toolbox) createWorkspace(ctx context.Context, a createWorkspaceArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.svc.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: a.WorkspaceName, Description: a.Description})
	if err != nil {
		return nil, err
	}
	view := viewWorkspace(ws)
	return changed(struct {
		Workspace workspaceView `json:"workspace"`
	}{view}, "workspace '%s' created; its volume_state is %s", view.Name, view.VolumeState)
}

var provisionVolumeTool = definition{
	name:  "provision_volume",
	scope: "admin",
	description: "Give a workspace its volume, so that volume_state becomes READY (the token needs the admin scope, as over REST). " +
		"A workspace archived while idle gets its files back first. A workspace already READY is left as it is.",
	params:      []param{requiredString("workspace_name", workspaceNameDesc)},
	output:      &object{props: []property{{name: "workspace", required: true, schema: workspaceItem}}},
	annotations: action(false, true),
}

func (t *toolbox) provisionVolume(ctx context.Context, a workspaceArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	if err := t.svc.SetupVolume(ctx, ws.ID); err != nil {
		return nil, err
	}
	if ws, err = t.workspace(ctx, a.WorkspaceName); err != nil {
		return nil, err
	}
	view := viewWorkspace(ws)
	return changed(struct {
		Workspace workspaceView `json:"workspace"`
	}{view}, "the volume of workspace '%s' is %s", view.Name, view.VolumeState)
}
