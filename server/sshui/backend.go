package sshui

import (
	"context"
	"errors"
	"io/fs"
	"net/http"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui"
	"github.com/cairn-dev/cairn/tui/config"
)

// errNoLocalDisk is what a transfer to or from a local path answers over
// SSH: the local disk is the server's, never the operator's. The TUI
// refuses these before asking (tui.Options.Remote); this is the floor
// under it.
var errNoLocalDisk = &cairn.Error{Reason: cairn.ReasonInvalidParameters,
	Detail: "over SSH there is no local disk: use the volume-side transfers or the cairn CLI on your machine"}

// remoteBackend is the client with this machine's disk taken away:
// uploads from, downloads to and interrupted uploads in local paths.
type remoteBackend struct{ *client.Client }

var _ tui.Backend = remoteBackend{}

func newBackend(apiURL, token, version string, hc *http.Client) (remoteBackend, error) {
	c, err := client.New(apiURL, client.WithToken(token), client.WithHTTPClient(hc),
		client.WithUserAgent("cairn-tui-ssh/"+version))
	return remoteBackend{c}, err
}

func (remoteBackend) Upload(context.Context, string, string, client.UploadOptions) (*cairn.Artifact, error) {
	return nil, errNoLocalDisk
}

func (remoteBackend) Replace(context.Context, string, string, client.UploadOptions) (*cairn.Artifact, error) {
	return nil, errNoLocalDisk
}

func (remoteBackend) Download(context.Context, string, string, client.DownloadOptions) (*cairn.Artifact, error) {
	return nil, errNoLocalDisk
}

// PendingUploads finds none: the state dir here is the server's, and its
// uploads are nobody's in this session.
func (remoteBackend) PendingUploads(string) ([]client.PendingUpload, error) { return nil, nil }

func (remoteBackend) PendingProgress(context.Context, client.PendingUpload) (int, int64, error) {
	return 0, 0, errNoLocalDisk
}

func (remoteBackend) DiscardUpload(context.Context, client.PendingUpload) error {
	return errNoLocalDisk
}

// tuiConfig is the session's TUI configuration: the defaults, this
// server and the session's token, the session's environment for colour
// and glyphs, and no file — this machine's config files are not the
// operator's.
func tuiConfig(env environ, apiURL, token string, readOnly bool) (*config.Config, error) {
	vars := environ{"CAIRN_URL": apiURL, "CAIRN_TOKEN": token}
	for k, v := range env {
		vars[k] = v
	}
	noFile := func(string) ([]byte, error) { return nil, fs.ErrNotExist }
	cfg, err := config.Load(config.Input{Getenv: vars.Getenv, ReadFile: noFile,
		Stat: func(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist }})
	if err != nil {
		return nil, errors.Join(errors.New("the workbench's configuration"), err)
	}
	cfg.ReadOnly = cfg.ReadOnly || readOnly
	return cfg, nil
}
