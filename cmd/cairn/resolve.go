package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

// Shapes of the IDs the server makes. An argument of such a shape is taken
// as an ID; anything else is a name.
var (
	workspaceIDShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	artifactIDShape  = regexp.MustCompile(`^[0-7][0-9A-HJKMNP-TV-Z]{25}$`)
)

var bothStates = []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject}

// workspaceID resolves WS, a workspace name or ID, to an ID. An ID is not
// looked up: the call that uses it says whether it exists.
func workspaceID(ctx context.Context, cl *client.Client, ws string) (string, error) {
	if workspaceIDShape.MatchString(ws) {
		return ws, nil
	}
	if err := cairn.ValidateName("workspace", ws); err != nil {
		return "", usagef("workspace %q is neither a name nor an ID", ws)
	}
	list, err := cl.FindWorkspaces(ctx, cairn.WorkspaceFilter{Names: []string{ws}, Page: cairn.Page{Limit: 1}})
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", &cairn.Error{Reason: cairn.ReasonWorkspaceNotFound, Status: http.StatusNotFound,
			Detail: "no workspace is named '" + ws + "'"}
	}
	return list[0].ID, nil
}

// artifactID resolves ART, an artifact ID or WS/NAME, to an ID.
func artifactID(ctx context.Context, cl *client.Client, art string) (string, error) {
	if artifactIDShape.MatchString(art) {
		return art, nil
	}
	ws, name, ok := strings.Cut(art, "/")
	if !ok {
		return "", usagef("artifact %q: give an artifact ID or WS/NAME", art)
	}
	if err := cairn.ValidateName("artifact", name); err != nil {
		return "", usagef("artifact %q: %s", art, cairn.ErrorDetail(err))
	}
	wsID, err := workspaceID(ctx, cl, ws)
	if err != nil {
		return "", err
	}
	list, err := cl.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: wsID, Names: []string{name},
		States: bothStates, Page: cairn.Page{Limit: 1}})
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", &cairn.Error{Reason: cairn.ReasonArtifactNotFound, Status: http.StatusNotFound,
			Detail: "workspace '" + ws + "' has no artifact named '" + name + "'"}
	}
	return list[0].ID, nil
}

// completionTimeout bounds the server calls of a shell completion.
const completionTimeout = 5 * time.Second

// completeWorkspaces completes the first argument with workspace names.
func (c *cli) completeWorkspaces(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return c.workspaceNames(cmd, prefix, ""), cobra.ShellCompDirectiveNoFileComp
}

// completeWorkspaceThenFile completes a workspace name, then a local file.
func (c *cli) completeWorkspaceThenFile(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return c.workspaceNames(cmd, prefix, ""), cobra.ShellCompDirectiveNoFileComp
}

// completeArtifacts completes the first argument as WS/NAME: workspace
// names with a slash, then the names of that workspace's artifacts.
func (c *cli) completeArtifacts(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	ws, name, ok := strings.Cut(prefix, "/")
	if !ok {
		return c.workspaceNames(cmd, prefix, "/"), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	cl, err := c.client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	wsID, err := workspaceID(ctx, cl, ws)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []string
	for a, err := range cl.Artifacts(ctx, cairn.ArtifactFilter{WorkspaceID: wsID, States: bothStates}) {
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		if strings.HasPrefix(a.Name, name) {
			out = append(out, ws+"/"+a.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// workspaceNames lists the names starting with prefix, each with suffix.
func (c *cli) workspaceNames(cmd *cobra.Command, prefix, suffix string) []string {
	cl, err := c.client()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	var out []string
	for ws, err := range cl.Workspaces(ctx, cairn.WorkspaceFilter{}) {
		if err != nil {
			return nil
		}
		if strings.HasPrefix(ws.Name, prefix) {
			out = append(out, ws.Name+suffix)
		}
	}
	return out
}
