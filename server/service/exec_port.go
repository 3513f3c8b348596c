package service

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/wsexec"
)

// ExecRuntime is the container engine as `cairn exec` needs it. The
// containers have the shell's hardened posture, image, user and limits;
// server/docker.Shells is one.
type ExecRuntime interface {
	// CreateExec creates, without starting, the container of one command:
	// no TTY, stdin open once, the argv run as given. Start attaches,
	// registers the wait and starts; Close is the one teardown (force
	// remove). The create runs detached from ctx. Reasons:
	// shell_image_missing, docker_unavailable, internal.
	CreateExec(ctx context.Context, spec ExecSpec) (wsexec.Process, error)
	// ListExecs lists every exec container of the app, running or not;
	// ShellID holds the exec's ID.
	ListExecs(ctx context.Context) ([]ShellContainer, error)
	// RemoveContainer force-removes a container; an absent one is no
	// error.
	RemoveContainer(ctx context.Context, id string) error
}

// ExecSpec is what one exec container is made of besides the operator's
// shell settings, which the runtime holds.
type ExecSpec struct {
	// Name is the container's: <appName>.exec.<workspaceID>.<execID>.
	Name          string
	ExecID        string
	WorkspaceID   string
	WorkspaceName string
	VolumeName    string // mounted read-write at cairn.MountPath
	TokenName     string // "" without authentication
	Argv          []string
	Dir           string   // the working directory, under cairn.MountPath
	Env           []string // NAME=value, added to the session's
	// Expires is when the container counts as leaked (cairn.expires).
	Expires time.Time
}
