// Package mcp is cairn's MCP front door (name-addressed): tools for
// workspaces, artifacts and the files of a workspace volume, over the Model
// Context Protocol's Streamable HTTP transport, stateless. Each
// tool checks its arguments against its published input schema, resolves
// workspace and artifact names to rows, and ends in the same service method
// as the matching REST route. Every failure is a tool result with isError
// set and the text "<reason>: <detail>"; none is a JSON-RPC error.
package mcp

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/route"
)

// Path is where the endpoint hangs under the API's path prefix.
const Path = "/v1/mcp"

// Services is what the tools call; the service layer implements all of it.
type Services interface {
	cairn.WorkspaceService
	cairn.ArtifactService
	cairn.ArtifactReader
	cairn.VolumeTransferService
	cairn.FileService
	cairn.FileWriter
	cairn.FileFinder
	cairn.SnapshotService
}

// Config holds the endpoint's settings; zero values take defaults.
type Config struct {
	Version string       // reported as the server's version; default "dev"
	Logger  *slog.Logger // default: discard
	// LogLevel is the level of the one log line per successful tool call;
	// failed calls are logged at error level.
	LogLevel slog.Level
	// CallTimeout bounds one tool call, so that waits for a workspace lock
	// or a sidecar slot end before the server's write timeout; default 655 s.
	CallTimeout time.Duration

	// Enable is api.apis.mcp.enable and Origins api.apis.mcp.allowedOrigins,
	// read by Routes only.
	Enable  bool
	Origins []string

	// Calls is the registry of the requests in flight, which the server
	// shares with its other replicas; nil: one of this endpoint alone.
	Calls *Calls
}

// New returns the MCP endpoint: Streamable HTTP, stateless (no session
// survives a request; tools/call needs no prior initialize), no standalone
// GET stream; tools, and resources to read back what the tools name
// (resources.go). Answers are JSON, or an event stream where the transport
// chooses one.
func New(svc Services, cfg Config) http.Handler {
	cfg.Version = cmp.Or(cfg.Version, "dev")
	cfg.CallTimeout = cmp.Or(cfg.CallTimeout, 655*time.Second)
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))

	srv := mcpserver.NewMCPServer("cairn", cfg.Version,
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithResourceCapabilities(false, false),
		mcpserver.WithInstructions(instructions),
		mcpserver.WithRecovery(),
	)
	t := &toolbox{svc: svc, log: log, level: cfg.LogLevel, timeout: cfg.CallTimeout}
	srv.AddTools(t.tools()...)
	srv.AddResourceTemplates(t.resourceTemplates()...)

	h := mcpserver.NewStreamableHTTPServer(srv,
		mcpserver.WithStateLess(true),
		mcpserver.WithDisableStreaming(true),
		// server/auth guards the Host of every route, this one included,
		// answering with the REST envelope; the library's own guard would
		// answer in plain text.
		mcpserver.WithDisableLocalhostProtection(true),
		mcpserver.WithStreamableHTTPLogger(log),
	)
	calls := cfg.Calls
	if calls == nil {
		calls = NewCalls(nil, log)
	}
	return boundBody(calls.scope(h))
}

// Routes declares the endpoint (New) at Path, every method, scope mcp,
// admitting cfg.Origins besides the API's browser origins; none when
// cfg.Enable is off, so the path is then an unknown route. Each tool
// also checks read or write itself.
func Routes(svc Services, cfg Config) []route.Route {
	if !cfg.Enable {
		return nil
	}
	return []route.Route{{Path: Path, Scope: route.MCP, Handler: New(svc, cfg), Origins: cfg.Origins}}
}

// boundBody reads at most maxBodyBytes of the request before the transport
// sees it and answers a larger body with HTTP 413 and the JSON-RPC error
// its clients understand; memory stays bounded whatever the client sends.
// next gets the bytes, and the request with a Body that replays them.
func boundBody(next func(w http.ResponseWriter, r *http.Request, body []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read through a MaxBytesReader, so that the server, having seen the
		// limit hit, answers before it drops the connection.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			if _, big := errors.AsType[*http.MaxBytesError](err); !big {
				return // the client went away mid-body; nobody is left to answer
			}
		}
		if err != nil {
			tooLarge(w)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next(w, r, body)
	})
}

// maxBodyBytes bounds one JSON-RPC message, as REST bounds its bodies.
const maxBodyBytes = 1 << 20

func tooLarge(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"body_too_large: the request body is larger than 1 MiB"}}`+"\n")
}

// instructions is what an agent reads about cairn when it connects.
const instructions = `cairn keeps the files of a piece of work safe while the containers doing that work come and go.

A workspace is the shared scratch space of one scope of work. Its Docker volume is mounted at /mnt/cairn/ws in your container and in the short-lived containers cairn starts to move files, so a path under /mnt/cairn/ws names the same file for you and for cairn. The volume is disposable: treat it as scratch. Artifacts are the durable part: named files that cairn keeps in its object store, independent of any volume.

The usual flow: when you have a file worth keeping, call upload_artifact to store it under a name; later, in this container or another one of the same workspace, call download_artifact to bring it back. list_artifacts shows what is kept; update_artifact replaces the content of a kept file with a newer version.

The cairn:// URIs in tool answers (an artifact's resource_link, read_file's resource) can be read whole with resources/read, up to 1 MiB.

To look at or change the volume's files without a shell of your own: list_files, read_file, get_file_info, search_files and directory_tree read; write_file, edit_file, create_directory, move_file and delete_path change. Prefer edit_file for a small change to a text file: it refuses to overwrite a change made since it read the file.

An operator usually creates the workspaces; for work of your own, create_workspace makes one and provision_volume (admin scope) gives it its volume. Before a transfer, call get_workspace and check that volume_state is READY. NONE means the workspace has no volume yet: provision_volume gives it one.

Address workspaces and artifacts by name, never by ID. An artifact name is unique within its workspace: 1 to 128 ASCII letters, digits, '-' or '_'.`
