// Package tui is cairn-tui, the operator workbench over a remote cairn
// server: Options, New (the root model) and Run, the wiring that
// cmd/cairn-tui and the tests share.
package tui

import (
	"context"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/shell"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Backend is everything the TUI asks of the server, met by *client.Client
// (in tests, a client of clienttest's fake server). Errors are *cairn.Error.
type Backend interface {
	cairn.WorkspaceService
	cairn.ArtifactService
	cairn.EventService
	cairn.VolumeTransferService
	cairn.FileService
	cairn.FileWriter
	cairn.MaintenanceService
	cairn.AuditService
	cairn.SnapshotService
	cairn.LifecycleService
	Transfers
	Shells
	// Info is what the server offers and the bounds it holds requests
	// to: an upload into the volume is checked against its file write
	// bound before any byte is sent.
	Info(ctx context.Context) (*cairn.Info, error)
}

// Transfers moves file content between this machine and the store through
// presigned URLs. Progress callbacks run on the goroutine moving the bytes.
type Transfers interface {
	// Upload hashes, stages, PUTs and registers the file as a new artifact.
	Upload(ctx context.Context, workspaceID, path string, o client.UploadOptions) (*cairn.Artifact, error)
	// Replace uploads the file as the artifact's new content (repairing a
	// MISSING_OBJECT artifact).
	Replace(ctx context.Context, artifactID, path string, o client.UploadOptions) (*cairn.Artifact, error)
	// Download writes the content to dest through dest.part, verified.
	Download(ctx context.Context, artifactID, dest string, o client.DownloadOptions) (*cairn.Artifact, error)
	// ReadHead returns at most the first n bytes and the total size.
	ReadHead(ctx context.Context, artifactID string, n int64) ([]byte, int64, error)
	// PendingUploads, PendingProgress and DiscardUpload are the uploads
	// an earlier run left unfinished: listed, asked about, aborted.
	PendingUploads(stateDir string) ([]client.PendingUpload, error)
	PendingProgress(ctx context.Context, p client.PendingUpload) (parts int, bytes int64, err error)
	DiscardUpload(ctx context.Context, p client.PendingUpload) error
}

// Shells opens interactive shells and says whether the server has them on.
type Shells interface {
	Shell(ctx context.Context, workspaceID string, size ptyshell.Size, term string) (*ptyshell.Session, error)
	FindShells(ctx context.Context, workspaceID string) (*cairn.ShellList, error)
	KillShell(ctx context.Context, id string) error
	CreateShell(ctx context.Context, workspaceID string, size ptyshell.Size, term string) (*cairn.ShellSessionInfo, error)
	AttachShell(ctx context.Context, shellID, secret string, size ptyshell.Size) (*ptyshell.Session, error)
	ReattachShell(ctx context.Context, shellID, secret string, lostAt time.Time, detached time.Duration,
		size func() (ptyshell.Size, error)) (*ptyshell.Session, error)
	WatchShell(ctx context.Context, shellID string, size ptyshell.Size) (*ptyshell.Session, error)
}

// Clipboard puts text on the operator's clipboard.
type Clipboard interface {
	Copy(ctx context.Context, text string) error
}

// Options is what New needs. Zero fields get defaults.
type Options struct {
	Config  *config.Config
	Backend Backend
	// Theme defaults to one built from Config (theme kind, glyphs).
	Theme *theme.Theme
	// Keys defaults to the registry with Config.Keys applied.
	Keys *keys.Map
	// Clock defaults to time.Now.
	Clock func() time.Time
	// Clipboard defaults to OSC 52 on Output.
	Clipboard Clipboard
	Output    io.Writer
	// After schedules timers; defaults to tea.Tick (tests record them).
	After func(d time.Duration, msg func() tea.Msg) tea.Cmd
	// ShellCommand builds what tea.Exec runs for a shell; defaults to
	// ptyshell's Terminal (tests choose how the shell ends).
	ShellCommand shell.Factory
	// ShellSecrets keeps the secrets of the v2 shells this workbench
	// creates, so that the shells screen reattaches to them; defaults to
	// memory. cairn-tui passes the state directory `cairn shell --attach`
	// reads; an SSH key's sessions share one.
	ShellSecrets shell.Keeper
	// Connect opens another context of the config file (:ctx); nil when
	// there is no file to read contexts from.
	Connect Connector
	// Remote is set when the program runs where the operator is not (the
	// workbench over SSH): this machine's disk and process are not the
	// operator's, so uploads from and downloads to a local path, editing
	// in an editor and suspending say why not instead (remote.go).
	Remote bool
	// Editor is the command line that edits a volume file's private copy,
	// its path appended as the last argument; defaults to $EDITOR, else vi.
	Editor string
}

// osc52 copies with one OSC 52 sequence written to the terminal, as glow
// does; tmux needs set-clipboard on.
type osc52 struct{ out *termenv.Output }

// NewOSC52 is the OSC 52 clipboard writing to out, a terminal whose
// environment is environ (TERM decides tmux's and screen's wrapping): an
// SSH session's, whose sequence travels to the operator's terminal.
func NewOSC52(out io.Writer, environ termenv.Environ) Clipboard {
	return osc52{out: termenv.NewOutput(out, termenv.WithEnvironment(environ))}
}

func (c osc52) Copy(_ context.Context, text string) error {
	c.out.Copy(text)
	return nil
}
