package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/cairn-dev/cairn"
)

// The URIs the tools hand out are resources an agent can read back with
// resources/read: an artifact's (artifactURI, in the resource_link of the
// tool that stored it) and a volume file's (fileURI, in read_file's
// answer). A read returns the whole content, up to maxResourceBytes;
// anything larger is refused, naming the tool that reads it in parts.
// Nothing is listed: resources/list is empty, resources/templates/list
// names the two templates.
const maxResourceBytes = cairn.MaxFileReadBytes

// resourceTemplates are the two readable kinds of URI. The volume file's
// template starts with the workspace name where the artifact's starts with
// "workspaces"; a file URI's path always starts /mnt/cairn/ws, which no
// artifact URI's does, so a URI matches one template only.
func (t *toolbox) resourceTemplates() []mcpserver.ServerResourceTemplate {
	return []mcpserver.ServerResourceTemplate{
		{
			Template: mcpgo.NewResourceTemplate("cairn://workspaces/{workspace}/artifacts/{artifact}", "artifact",
				mcpgo.WithTemplateDescription(fmt.Sprintf("The content of an artifact, by workspace and artifact name: "+
					"UTF-8 text as text, anything else as a base64 blob. At most %d bytes; download_artifact brings a "+
					"larger one into a volume, where read_file reads it in parts.", maxResourceBytes))),
			Handler: t.resource(t.readArtifactResource),
		},
		{
			Template: mcpgo.NewResourceTemplate("cairn://{workspace}/mnt/cairn/ws/{+path}", "volume_file",
				mcpgo.WithTemplateDescription(fmt.Sprintf("The whole content of a regular file of a workspace volume, "+
					"as read_file returns it. At most %d bytes; read_file reads a larger file in parts.", maxResourceBytes))),
			Handler: t.resource(t.readFileResource),
		},
	}
}

// resource binds a reader of one kind of URI to resources/read as serve
// binds a tool: the read scope is checked, the URI parsed, the read runs
// under the call deadline and is logged once; a failure becomes a JSON-RPC
// error (readError).
func (t *toolbox) resource(read func(ctx context.Context, u *url.URL) (mcpgo.ResourceContents, error)) mcpserver.ResourceTemplateHandlerFunc {
	return func(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
		ctx, cancel := context.WithTimeout(ctx, t.timeout)
		defer cancel()
		start := time.Now()
		item, err := readURI(ctx, req.Params.URI, read)
		t.logOutcome(ctx, "mcp resource read", err, slog.String("uri", req.Params.URI), slog.Duration("duration", time.Since(start)))
		if err != nil {
			return nil, readError(ctx, err)
		}
		return []mcpgo.ResourceContents{item}, nil
	}
}

func readURI(ctx context.Context, uri string, read func(context.Context, *url.URL) (mcpgo.ResourceContents, error)) (mcpgo.ResourceContents, error) {
	if !cairn.ScopeAllowed(ctx, "read") {
		return nil, cairn.Errorf(cairn.ReasonForbidden, "token '%s' lacks scope 'read'", deref(cairn.ActorFrom(ctx)))
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "the uri is not a URI: %v", err)
	}
	return read(ctx, u)
}

// readArtifactResource reads cairn://workspaces/WORKSPACE/artifacts/ARTIFACT.
func (t *toolbox) readArtifactResource(ctx context.Context, u *url.URL) (mcpgo.ResourceContents, error) {
	wsName, artName, ok := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/artifacts/")
	if err := checkNames("workspace", wsName); !ok || err != nil {
		return nil, cairn.Errorf(cairn.ReasonInvalidName, "'%s' names no workspace's artifact", u)
	}
	if err := checkNames("artifact", artName); err != nil {
		return nil, err
	}
	ws, err := t.workspace(ctx, wsName)
	if err != nil {
		return nil, err
	}
	art, err := t.artifact(ctx, ws, artName)
	if err != nil {
		return nil, err
	}
	c, err := t.svc.ReadArtifact(ctx, art.ID, maxResourceBytes)
	if cairn.ErrorReason(err) == cairn.ReasonObjectTooLarge {
		return nil, cairn.Errorf(cairn.ReasonObjectTooLarge, "artifact '%s' is %d bytes, more than a resource read returns (%d); "+
			"download_artifact brings it into a volume, where read_file reads it in parts", artName, art.Size, maxResourceBytes)
	}
	if err != nil {
		return nil, err
	}
	return encode(c.Data, c.Artifact.MIMEType, c.Artifact.MIMEType).item(artifactURI(ws.Name, art.Name)), nil
}

// readFileResource reads cairn://WORKSPACE/mnt/cairn/ws/PATH whole.
func (t *toolbox) readFileResource(ctx context.Context, u *url.URL) (mcpgo.ResourceContents, error) {
	if err := checkNames("workspace", u.Host); err != nil {
		return nil, err
	}
	ws, err := t.workspace(ctx, u.Host)
	if err != nil {
		return nil, err
	}
	c, err := t.svc.ReadFile(ctx, ws.ID, cairn.FileReadParams{Path: u.Path, Length: maxResourceBytes})
	if err != nil {
		return nil, err
	}
	if c.Size > int64(len(c.Data)) {
		return nil, cairn.Errorf(cairn.ReasonRangeTooLarge, "'%s' is %d bytes, more than a resource read returns (%d); "+
			"read_file reads it in parts", u.Path, c.Size, maxResourceBytes)
	}
	return encode(c.Data, textPlain, c.ContentType).item(fileURI(ws.Name, u.Path)), nil
}

const textPlain = "text/plain; charset=utf-8"

// encoded is bytes as a resource carries them: UTF-8 text as itself, typed
// textType; anything else in standard base64, typed binaryType.
type encoded struct {
	encoding, mimeType, content string
}

func encode(data []byte, textType, binaryType string) encoded {
	if utf8.Valid(data) {
		return encoded{encoding: "text", mimeType: textType, content: string(data)}
	}
	return encoded{encoding: "base64", mimeType: binaryType, content: base64.StdEncoding.EncodeToString(data)}
}

// item is the resource contents of uri holding e.
func (e encoded) item(uri string) mcpgo.ResourceContents {
	if e.encoding == "text" {
		return mcpgo.TextResourceContents{URI: uri, MIMEType: e.mimeType, Text: e.content}
	}
	return mcpgo.BlobResourceContents{URI: uri, MIMEType: e.mimeType, Blob: e.content}
}

// readError is a failed resource read as the JSON-RPC error of the
// client's protocol era: a name that resolves to nothing, or an artifact
// whose content is gone, is "resource not found" (-32002 before
// 2026-07-28, -32602 since); a fault of cairn or its store is -32603; any
// other refusal -32602. The message reads "<reason>: <detail>", as a
// failed tool's text does, and data carries {"reason"}.
func readError(ctx context.Context, err error) error {
	reason := cairn.ErrorReason(err)
	status, _ := reason.HTTPStatus()
	code := mcpgo.INVALID_PARAMS
	switch {
	case status == http.StatusNotFound || reason == cairn.ReasonObjectMissing:
		code = mcpgo.RESOURCE_NOT_FOUND
		if mcpgo.IsModernProtocol(mcpserver.RequestProtocolVersion(ctx)) {
			code = mcpgo.INVALID_PARAMS
		}
	case status >= http.StatusInternalServerError || reason == cairn.ReasonChecksumMismatch:
		code = mcpgo.INTERNAL_ERROR
	}
	return mcpserver.NewHandlerError(&rpcError{code: code, reason: reason, message: failureText(err)})
}

// rpcError is a JSON-RPC error a handler may return as it is.
type rpcError struct {
	code    int
	reason  cairn.Reason
	message string
}

func (e *rpcError) Error() string { return e.message }

func (e *rpcError) JSONRPCError() mcpgo.JSONRPCError {
	return mcpgo.JSONRPCError{JSONRPC: mcpgo.JSONRPC_VERSION,
		Error: mcpgo.NewJSONRPCErrorDetails(e.code, e.message, map[string]string{"reason": string(e.reason)})}
}
