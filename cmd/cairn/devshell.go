package main

import (
	"context"

	"github.com/docker/docker/client"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/server"
)

// ensureShellImage builds the shell image (busybox-static on scratch) unless
// an up-to-date one exists; the dev stack turns the shell on, and a -c file
// that turns it off needs no image.
func ensureShellImage(ctx context.Context, cli *client.Client, cfg server.ShellConfig) error {
	if !cfg.Enable {
		return nil
	}
	files, err := stack.ShellImage()
	if err != nil {
		return err
	}
	return stack.EnsureImage(ctx, cli, cfg.Image, files)
}
