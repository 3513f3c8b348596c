package mcp

import (
	"context"
	"net/url"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-dev/cairn"
)

// artifactView is an artifact as list_artifacts shows it.
type artifactView struct {
	Name        string              `json:"name"`
	Description *string             `json:"description"`
	State       cairn.ArtifactState `json:"state"`
	UpdatedAt   time.Time           `json:"updated_at"`
}

func viewArtifact(art *cairn.Artifact) artifactView {
	return artifactView{Name: art.Name, Description: art.Description, State: art.State, UpdatedAt: art.UpdatedAt}
}

// artifactURI names an artifact as a resource:
// cairn://workspaces/WORKSPACE/artifacts/ARTIFACT. It names the artifact by
// name, as every tool does, so a rename changes it. Names are URL-safe; a
// volume file's URI (fileURI) has no "artifacts" path under its workspace.
func artifactURI(workspace, artifact string) string {
	return (&url.URL{Scheme: "cairn", Host: "workspaces", Path: "/" + workspace + "/artifacts/" + artifact}).String()
}

// artifactLink is the resource_link content item of an artifact of ws.
func artifactLink(ws *cairn.Workspace, art *cairn.Artifact) mcpgo.ResourceLink {
	link := mcpgo.NewResourceLink(artifactURI(ws.Name, art.Name), art.Name, deref(art.Description), art.MIMEType)
	link.Size = &art.Size
	return link
}

// anyState lets name resolution find an artifact whatever its state.
var anyState = []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject}

// artifact resolves an artifact name within a workspace, in any state.
// Reasons: artifact_not_found, and the service's.
func (t *toolbox) artifact(ctx context.Context, ws *cairn.Workspace, name string) (*cairn.Artifact, error) {
	list, err := t.svc.FindArtifacts(ctx, cairn.ArtifactFilter{
		WorkspaceID: ws.ID, Names: []string{name}, States: anyState,
	})
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, cairn.Errorf(cairn.ReasonArtifactNotFound, "workspace '%s' has no artifact named '%s'", ws.Name, name)
	}
	return list[0], nil
}

// resolve resolves both names of a.
func (t *toolbox) resolve(ctx context.Context, a artifactArgs) (*cairn.Workspace, *cairn.Artifact, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, nil, err
	}
	art, err := t.artifact(ctx, ws, a.ArtifactName)
	return ws, art, err
}

type listArtifactsArgs struct {
	WorkspaceName string                `json:"workspace_name"`
	ArtifactNames []string              `json:"artifact_names"`
	States        []cairn.ArtifactState `json:"states"`
	Limit         *int                  `json:"limit"`
	Offset        *int                  `json:"offset"`
}

func (a listArtifactsArgs) check(tool string) error {
	if err := checkNames("workspace", a.WorkspaceName); err != nil {
		return err
	}
	if err := checkNames("artifact", a.ArtifactNames...); err != nil {
		return err
	}
	return checkPage(tool, a.Limit, a.Offset)
}

// listArtifacts lists RECORDED artifacts only when no state is given; the
// service applies that default.
func (t *toolbox) listArtifacts(ctx context.Context, a listArtifactsArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	list, err := t.svc.FindArtifacts(ctx, cairn.ArtifactFilter{
		WorkspaceID: ws.ID, Names: a.ArtifactNames, States: a.States, Page: page(a.Limit, a.Offset),
	})
	if err != nil {
		return nil, err
	}
	views := make([]artifactView, len(list))
	for i, art := range list {
		views[i] = viewArtifact(art)
	}
	return structured(struct {
		Artifacts []artifactView `json:"artifacts"`
	}{views})
}

type artifactArgs struct {
	WorkspaceName string `json:"workspace_name"`
	ArtifactName  string `json:"artifact_name"`
}

func (a artifactArgs) check(string) error {
	if err := checkNames("workspace", a.WorkspaceName); err != nil {
		return err
	}
	return checkNames("artifact", a.ArtifactName)
}

// deleteArtifact refuses an unknown name (artifact_not_found), unlike the
// idempotent REST delete by ID, as the first cairn did.
func (t *toolbox) deleteArtifact(ctx context.Context, a artifactArgs) (*mcpgo.CallToolResult, error) {
	ws, art, err := t.resolve(ctx, a)
	if err != nil {
		return nil, err
	}
	if err := t.svc.DeleteArtifact(ctx, art.ID); err != nil {
		return nil, err
	}
	return changed(struct {
		Artifact artifactView `json:"artifact"`
	}{viewArtifact(art)}, "artifact '%s' deleted from workspace '%s'", art.Name, ws.Name)
}

type renameArgs struct {
	artifactArgs
	NewName string `json:"new_name"`
}

func (a renameArgs) check(tool string) error {
	if err := a.artifactArgs.check(tool); err != nil {
		return err
	}
	return checkNames("artifact", a.NewName)
}

func (t *toolbox) renameArtifact(ctx context.Context, a renameArgs) (*mcpgo.CallToolResult, error) {
	ws, art, err := t.resolve(ctx, a.artifactArgs)
	if err != nil {
		return nil, err
	}
	renamed, err := t.svc.RenameArtifact(ctx, art.ID, a.NewName)
	if err != nil {
		return nil, err
	}
	return changed(struct {
		Artifact     artifactView `json:"artifact"`
		PreviousName string       `json:"previous_name"`
	}{viewArtifact(renamed), art.Name}, "artifact '%s' of workspace '%s' renamed to '%s'", art.Name, ws.Name, a.NewName)
}
