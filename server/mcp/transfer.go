package mcp

import (
	"context"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-dev/cairn"
)

// checkPath refuses an empty path with the tool's invalid_parameters
// sentence; every other path rule is the service's (path_outside_mount,
// path_is_mount_root).
func checkPath(tool, name, path string) error {
	if path == "" {
		return badParameters(tool, "'%s' must not be empty", name)
	}
	return nil
}

type downloadArgs struct {
	artifactArgs
	TargetPath string `json:"target_path"`
}

func (a downloadArgs) check(tool string) error {
	if err := a.artifactArgs.check(tool); err != nil {
		return err
	}
	return checkPath(tool, "target_path", a.TargetPath)
}

func (t *toolbox) downloadArtifact(ctx context.Context, a downloadArgs) (*mcpgo.CallToolResult, error) {
	ws, art, err := t.resolve(ctx, a.artifactArgs)
	if err != nil {
		return nil, err
	}
	if err := t.svc.LoadIntoVolume(ctx, art.ID, a.TargetPath); err != nil {
		return nil, err
	}
	return changed(struct {
		Artifact   artifactView `json:"artifact"`
		TargetPath string       `json:"target_path"`
		Bytes      int64        `json:"bytes"`
	}{viewArtifact(art), a.TargetPath, art.Size},
		"artifact '%s' of workspace '%s' downloaded to '%s'", art.Name, ws.Name, a.TargetPath)
}

type uploadArgs struct {
	WorkspaceName string  `json:"workspace_name"`
	SourcePath    string  `json:"source_path"`
	ArtifactName  string  `json:"artifact_name"`
	Description   *string `json:"description"`
	Format        string  `json:"format"`
}

func (a uploadArgs) check(tool string) error {
	if err := checkNames("workspace", a.WorkspaceName); err != nil {
		return err
	}
	if err := checkNames("artifact", a.ArtifactName); err != nil {
		return err
	}
	if err := checkPath(tool, "source_path", a.SourcePath); err != nil {
		return err
	}
	if err := cairn.ValidateDescription(a.Description); err != nil {
		return badParameters(tool, "%s", cairn.ErrorDetail(err))
	}
	if a.Format != "" && a.Format != cairn.ArchiveTarGz && a.Format != cairn.ArchiveZip {
		return badParameters(tool, "'format' must be '%s' or '%s'", cairn.ArchiveTarGz, cairn.ArchiveZip)
	}
	return nil
}

// uploadArtifact checks the name is free before it looks at the path, as
// artifact-from-volume does.
func (t *toolbox) uploadArtifact(ctx context.Context, a uploadArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	art, err := t.svc.ArtifactFromVolume(ctx, ws.ID, cairn.VolumeArtifactCreate{
		SourcePath: a.SourcePath, Name: a.ArtifactName, Description: a.Description, Format: a.Format,
	})
	if err != nil {
		return nil, err
	}
	return linked(stored(ws, art, a.SourcePath), artifactLink(ws, art),
		"artifact '%s' recorded in workspace '%s' from '%s'", a.ArtifactName, ws.Name, a.SourcePath)
}

type updateArgs struct {
	artifactArgs
	SourcePath string `json:"source_path"`
}

func (a updateArgs) check(tool string) error {
	if err := a.artifactArgs.check(tool); err != nil {
		return err
	}
	return checkPath(tool, "source_path", a.SourcePath)
}

// updateArtifact repairs a MISSING_OBJECT artifact as well: there is no
// state gate.
func (t *toolbox) updateArtifact(ctx context.Context, a updateArgs) (*mcpgo.CallToolResult, error) {
	ws, art, err := t.resolve(ctx, a.artifactArgs)
	if err != nil {
		return nil, err
	}
	art, err = t.svc.UpdateFromVolume(ctx, art.ID, a.SourcePath)
	if err != nil {
		return nil, err
	}
	return linked(stored(ws, art, a.SourcePath), artifactLink(ws, art),
		"artifact '%s' of workspace '%s' updated from '%s'", art.Name, ws.Name, a.SourcePath)
}

// storedResult is what upload_artifact and update_artifact answer:
// storedOutput.
type storedResult struct {
	Artifact   artifactView `json:"artifact"`
	URI        string       `json:"uri"`
	SourcePath string       `json:"source_path"`
	Size       int64        `json:"size"`
	MIMEType   string       `json:"mime_type"`
}

func stored(ws *cairn.Workspace, art *cairn.Artifact, sourcePath string) storedResult {
	return storedResult{Artifact: viewArtifact(art), URI: artifactURI(ws.Name, art.Name), SourcePath: sourcePath,
		Size: art.Size, MIMEType: art.MIMEType}
}
