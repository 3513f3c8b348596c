package mcp

import (
	"encoding/json"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// definition is what tools/list publishes about one tool.
type definition struct {
	name        string
	scope       string // read or write: what a token needs to call it (besides mcp)
	description string
	params      []param
	output      *object // the structured result every tool answers
	annotations mcpgo.ToolAnnotation
}

func (d definition) tool() mcpgo.Tool {
	t := mcpgo.NewToolWithRawSchema(d.name, d.description, inputSchema(d.params))
	if d.output != nil {
		t.RawOutputSchema = mustJSON(d.output)
	}
	t.Annotations = d.annotations
	return t
}

// tools binds every definition to its handler, in the order tools/list
// shows them.
func (t *toolbox) tools() []mcpserver.ServerTool {
	return []mcpserver.ServerTool{
		serve(t, getWorkspaceTool, t.getWorkspace),
		serve(t, listWorkspacesTool, t.listWorkspaces),
		serve(t, createWorkspaceTool, t.createWorkspace),
		serve(t, provisionVolumeTool, t.provisionVolume),
		serve(t, listArtifactsTool, t.listArtifacts),
		serve(t, downloadArtifactTool, t.downloadArtifact),
		serve(t, uploadArtifactTool, t.uploadArtifact),
		serve(t, updateArtifactTool, t.updateArtifact),
		serve(t, deleteArtifactTool, t.deleteArtifact),
		serve(t, renameArtifactTool, t.renameArtifact),
		serve(t, listFilesTool, t.listFiles),
		serve(t, readFileTool, t.readFile),
		serve(t, unpackArtifactTool, t.unpackArtifact),
		serve(t, getFileInfoTool, t.getFileInfo),
		serve(t, searchFilesTool, t.searchFiles),
		serve(t, directoryTreeTool, t.directoryTree),
		serve(t, writeFileTool, t.writeFile),
		serve(t, editFileTool, t.editFile),
		serve(t, createDirectoryTool, t.createDirectory),
		serve(t, moveFileTool, t.moveFile),
		serve(t, deletePathTool, t.deletePath),
		serve(t, snapshotWorkspaceTool, t.snapshotWorkspace),
		serve(t, listSnapshotsTool, t.listSnapshots),
		serve(t, restoreSnapshotTool, t.restoreSnapshot),
		serve(t, forkWorkspaceTool, t.forkWorkspace),
	}
}

// volumeNote closes the description of every tool that moves bytes
// between the volume and the store.
const volumeNote = ` The workspace volume is mounted at /mnt/cairn/ws in your container and in cairn's transfer container alike, so pass the path exactly as you see it: absolute, and inside /mnt/cairn/ws. The workspace's volume_state must be READY.`

// Property descriptions shared by several tools.
const (
	workspaceNameDesc = "Name of the workspace, exactly as it was created."
	limitDesc         = "Return at most this many items, 1 to 1000. Omit it to get every match (refused when more than 10000 match)."
	offsetDesc        = "Skip this many items first, 0 or more (default 0). Use with limit to page through a long list."
)

var getWorkspaceTool = definition{
	name:  "get_workspace",
	scope: "read",
	description: "Look up a workspace by name and report whether its volume is ready. " +
		"Transfers (download_artifact, upload_artifact, update_artifact) need volume_state READY. " +
		"A workspace in state NONE has no volume yet: provision_volume gives it one.",
	params: []param{requiredString("workspace_name", workspaceNameDesc)},
	output: &object{props: []property{
		{name: "workspace", required: true, schema: workspaceItem},
	}},
	annotations: readOnly(),
}

var listWorkspacesTool = definition{
	name:  "list_workspaces",
	scope: "read",
	description: "List workspaces, oldest first, with their volume state. " +
		"Optionally keep only some names or volume states, and page with limit and offset.",
	params: []param{
		optionalStrings("workspace_names", "Only list the workspaces with one of these names (exact, case-sensitive match)."),
		optionalStrings("volume_states", "Only list the workspaces whose volume is in one of these states: "+
			"NONE (no volume yet) or READY (mounted and usable for transfers). Default: every state.", "NONE", "READY"),
		optionalInteger("limit", limitDesc),
		optionalInteger("offset", offsetDesc),
	},
	output: &object{props: []property{
		{name: "workspaces", required: true, schema: arrayOf(workspaceItem, "The matching workspaces; empty when none match.")},
	}},
	annotations: readOnly(),
}

var listArtifactsTool = definition{
	name:  "list_artifacts",
	scope: "read",
	description: "List the artifacts of a workspace, oldest first: name, description, state and time of the last change. " +
		"Metadata only, no content. It is also the way to check whether an artifact name is taken. " +
		"Only RECORDED artifacts are listed unless states says otherwise; a MISSING_OBJECT artifact has lost its stored " +
		"content and cannot be downloaded until update_artifact repairs it.",
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		optionalStrings("artifact_names", "Only list the artifacts with one of these names (exact, case-sensitive match)."),
		optionalStrings("states", "Only list the artifacts in these states: RECORDED (content stored) and/or "+
			"MISSING_OBJECT (content lost from the store). Default: RECORDED only.", "RECORDED", "MISSING_OBJECT"),
		optionalInteger("limit", limitDesc),
		optionalInteger("offset", offsetDesc),
	},
	output: &object{props: []property{
		{name: "artifacts", required: true, schema: arrayOf(artifactItem, "The matching artifacts; empty when none match.")},
	}},
	annotations: readOnly(),
}

var downloadArtifactTool = definition{
	name:  "download_artifact",
	scope: "write",
	description: "Write the stored content of an artifact into a file of the workspace volume; the call returns once the file is written. " +
		"The parent directory must already exist (it is never created). An existing file at the path is overwritten; " +
		"a directory there is an error. Only a RECORDED artifact can be downloaded." + volumeNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("artifact_name", "Name of the artifact to download."),
		requiredString("target_path", "Absolute path of the file to write, inside /mnt/cairn/ws, "+
			"e.g. /mnt/cairn/ws/out/report.pdf. Its parent directory must exist."),
	},
	output: &object{props: []property{
		{name: "artifact", required: true, schema: artifactItem},
		{name: "target_path", required: true, schema: leaf("string", "The file written, as given.")},
		{name: "bytes", required: true, schema: leaf("integer", "Bytes written: the size of the artifact's content.")},
	}},
	annotations: action(true, true),
}

var uploadArtifactTool = definition{
	name:  "upload_artifact",
	scope: "write",
	description: "Store a file of the workspace volume as a NEW artifact; the call returns once it is stored. " +
		"The name must not be in use in the workspace: to replace the content of an existing artifact, use update_artifact. " +
		"Do not modify the file while the upload runs; a change midway fails the call with source_changed." +
		storedNote + volumeNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("source_path", "Absolute path of the file to store, inside /mnt/cairn/ws, "+
			"e.g. /mnt/cairn/ws/out/report.pdf. It must be a regular file; a symlink to one inside the mount is followed. "+
			"With format, a directory to pack instead."),
		requiredString("artifact_name", "Name for the new artifact: 1 to 128 ASCII letters, digits, '-' or '_', "+
			"not used by any artifact of the workspace."),
		optionalString("description", "Free text kept with the artifact, at most 4096 bytes."),
		optionalString("format", "Pack the directory at source_path into one archive artifact: tar.gz or zip. "+
			"Symlinks are stored as symlinks; FIFOs, sockets and devices are refused."),
	},
	output:      &storedOutput,
	annotations: action(false, false),
}

var updateArtifactTool = definition{
	name:  "update_artifact",
	scope: "write",
	description: "Replace the content of an EXISTING artifact with a file of the workspace volume; its name and description stay as they are. " +
		"This also repairs an artifact in state MISSING_OBJECT. Do not modify the file while the upload runs." + storedNote +
		volumeNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("artifact_name", "Name of the existing artifact whose content is replaced."),
		requiredString("source_path", "Absolute path of the file holding the new content, inside /mnt/cairn/ws, "+
			"e.g. /mnt/cairn/ws/out/report.pdf. It must be a regular file; a symlink to one inside the mount is followed."),
	},
	output:      &storedOutput,
	annotations: action(true, true),
}

var deleteArtifactTool = definition{
	name:  "delete_artifact",
	scope: "write",
	description: "Delete an artifact. Its name is free again at once; its stored content is reclaimed later by cairn's " +
		"maintenance, not immediately. Files in the workspace volume are not touched.",
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("artifact_name", "Name of the artifact to delete."),
	},
	output: &object{props: []property{
		{name: "artifact", required: true, schema: artifactItem},
	}},
	annotations: action(true, false),
}

var renameArtifactTool = definition{
	name:        "rename_artifact",
	scope:       "write",
	description: "Give an artifact a new name within its workspace. Its content and description are untouched; the new name must be free.",
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("artifact_name", "Current name of the artifact."),
		requiredString("new_name", "New name: 1 to 128 ASCII letters, digits, '-' or '_', "+
			"not used by another artifact of the workspace."),
	},
	output: &object{props: []property{
		{name: "artifact", required: true, schema: artifactItem},
		{name: "previous_name", required: true, schema: leaf("string", "The name the artifact had before.")},
	}},
	annotations: action(false, false),
}

// storedNote tells what the tools that store an artifact answer.
const storedNote = " Answers the artifact, and a resource_link to it whose uri is " +
	"cairn://workspaces/<workspace_name>/artifacts/<artifact_name>."

// storedOutput is what upload_artifact and update_artifact answer:
// storedResult.
var storedOutput = object{props: []property{
	{name: "artifact", required: true, schema: artifactItem},
	{name: "uri", required: true, schema: leaf("string", "The artifact as a resource, "+
		"cairn://workspaces/<workspace_name>/artifacts/<artifact_name>: the uri of the resource_link content item.")},
	{name: "source_path", required: true, schema: leaf("string", "The volume path stored, as given.")},
	{name: "size", required: true, schema: leaf("integer", "Bytes stored.")},
	{name: "mime_type", required: true, schema: leaf("string", "The stored content's MIME type.")},
}}

// workspaceItem and artifactItem are the shapes the tools return.
var (
	workspaceItem = object{props: []property{
		{name: "name", required: true, schema: leaf("string", "Name of the workspace.")},
		{name: "volume_state", required: true, schema: leaf("string", "NONE (no volume yet) or READY (usable for transfers).")},
		{name: "artifact_counts", required: true, schema: object{props: []property{
			{name: "recorded", required: true, schema: leaf("integer", "Artifacts whose content is stored.")},
			{name: "missing_object", required: true, schema: leaf("integer",
				"Artifacts whose content was lost from the store; update_artifact repairs one from a volume file.")},
		}}},
		{name: "created_at", required: true, schema: leaf("string", "When the workspace was created (RFC 3339).")},
	}}
	artifactItem = object{props: []property{
		{name: "name", required: true, schema: leaf("string", "Name of the artifact, unique in its workspace.")},
		{name: "description", required: true, schema: leaf([]string{"null", "string"}, "Free text kept with the artifact, or null.")},
		{name: "state", required: true, schema: leaf("string", "RECORDED (content stored) or MISSING_OBJECT (content lost).")},
		{name: "updated_at", required: true, schema: leaf("string", "When the artifact last changed (RFC 3339).")},
	}}
)

func leaf(typ any, desc string) any {
	return struct {
		Type        any    `json:"type"`
		Description string `json:"description"`
	}{typ, desc}
}

func arrayOf(items object, desc string) any {
	return struct {
		Type        []string        `json:"type"`
		Items       json.RawMessage `json:"items"`
		Description string          `json:"description"`
	}{[]string{"null", "array"}, mustJSON(items), desc}
}

// readOnly marks the read tools; nothing cairn does reaches outside it.
func readOnly() mcpgo.ToolAnnotation {
	return mcpgo.ToolAnnotation{ReadOnlyHint: mcpgo.ToBoolPtr(true), OpenWorldHint: mcpgo.ToBoolPtr(false)}
}

// action marks a tool that changes artifacts or volume files.
func action(destructive, idempotent bool) mcpgo.ToolAnnotation {
	return mcpgo.ToolAnnotation{
		ReadOnlyHint:    mcpgo.ToBoolPtr(false),
		DestructiveHint: mcpgo.ToBoolPtr(destructive),
		IdempotentHint:  mcpgo.ToBoolPtr(idempotent),
		OpenWorldHint:   mcpgo.ToBoolPtr(false),
	}
}
