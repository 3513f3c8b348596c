package main

import (
	"context"
	"fmt"
	"os"
	"regexp"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/stack"
)

func newDevPurgeCommand(o *devOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "purge",
		Short: "Remove a stopped dev stack: its state dir, containers and workspace volumes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return purgeDev(cmd.Context(), o.stateDir, func(format string, a ...any) {
				fmt.Fprintf(cmd.OutOrStdout(), format, a...)
			})
		},
	}
}

// purgeDev removes what a dev stack left: containers labelled with its app
// name, its workspace volumes (labelled, or named <app>-<uuid> when adopted),
// and the state dir.
func purgeDev(ctx context.Context, dir string, printf func(string, ...any)) error {
	app := devAppName(dir)
	cli, err := stack.DockerClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	containers, err := cli.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", "cairn.app="+app))})
	if err != nil {
		return err
	}
	for _, c := range containers {
		if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil {
			return err
		}
		printf("removed container %s\n", c.Names)
	}
	vols, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("name", app+"-"))})
	if err != nil {
		return err
	}
	owned := regexp.MustCompile("^" + regexp.QuoteMeta(app) + "-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
	for _, v := range vols.Volumes {
		if v.Labels["cairn.app"] != app && !owned.MatchString(v.Name) {
			continue
		}
		if err := cli.VolumeRemove(ctx, v.Name, true); err != nil {
			return err
		}
		printf("removed volume %s\n", v.Name)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	printf("removed %s\n", dir)
	return nil
}
