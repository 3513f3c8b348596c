package service

import (
	"context"
	"net"
	"time"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/holder"
)

// ShellRuntime is the container engine as the shell needs it. The volume's
// existence comes from Runtime.VolumeExists. Failures of the engine itself
// are docker_unavailable.
type ShellRuntime interface {
	// CreateShell creates, without starting, the container of one shell
	// with the shell's hardened posture and labels, and returns its
	// terminal: Start attaches, registers the wait and starts; Close is the
	// one teardown (stop, force remove). The create runs detached from ctx,
	// so a cancelled request never leaves a container it cannot name.
	// Reasons: shell_image_missing, docker_unavailable, internal.
	CreateShell(ctx context.Context, spec ShellSpec) (ptyshell.Stream, error)
	// StartHolder creates and starts the container of a v2 shell: the
	// holder (cairn-sidecar hold) as its main process, configured by cfg
	// and proving requests with key, with the shell's posture and labels,
	// no network and no TTY. The create runs detached from ctx. Reasons:
	// shell_image_missing, docker_unavailable, internal.
	StartHolder(ctx context.Context, spec ShellSpec, cfg holder.Config, key []byte) (string, error)
	// DialHolder runs the holder's relay in the named container and returns
	// the stream to its socket. Reasons: shell_not_found (the container is
	// gone or not running), docker_unavailable.
	DialHolder(ctx context.Context, container string) (net.Conn, error)
	// ListShells lists every shell container of the app, running or not.
	ListShells(ctx context.Context) ([]ShellContainer, error)
	// RemoveContainer force-removes a container; an absent one is no
	// error.
	RemoveContainer(ctx context.Context, id string) error
}

// ShellSpec is what one shell container is made of besides the operator's
// settings (image, entrypoint, user, limits), which the runtime holds.
type ShellSpec struct {
	// Name is the container's: <appName>.shell.<workspaceID>.<shellID>,
	// the sidecars' scheme, so a leftover never collides with a new one.
	Name          string
	ShellID       string
	WorkspaceID   string
	WorkspaceName string
	VolumeName    string // mounted read-write at cairn.MountPath
	TokenName     string // "" without authentication
	Term          string
	Cols, Rows    int
	// Expires is when the container counts as leaked: its creation plus
	// the maximum lifetime (the cairn.expires label).
	Expires time.Time
}

// ShellContainer is a shell container as its labels and state describe it.
type ShellContainer struct {
	ContainerID string
	Name        string
	ShellID     string
	WorkspaceID string
	Instance    string // the cairn.instance of the server that made it
	TokenName   string
	State       string // Docker's: created, running, exited, …; or ShellNodeLost
	Created     time.Time
	Expires     time.Time // zero when the label is absent or malformed
	// FinishedAt is when an exited or dead container stopped; zero
	// otherwise.
	FinishedAt time.Time
}

// ShellNodeLost is the State of a session container whose node has been
// lost (Kubernetes: gone, or not Ready past kubernetes.nodeLostSecs): it
// cannot be reached, so its session is ended with reason node_lost.
const ShellNodeLost = "node_lost"
