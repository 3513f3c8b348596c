package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/server/docker"
)

func newDevPurgeCommand(o *devOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "purge",
		Short: "Remove a stopped dev stack: its state dir, containers and workspace volumes",
		Long: `purge removes exactly what the stopped dev stack in --state-dir created: the
containers labelled with its instance, the workspace volumes its own database
names, then the state dir. A stack that ran with --runtime kubernetes also
loses its pods and the claims of those volumes, in the namespace it used.
Nothing is chosen by name or app label alone, so other stacks on the same
engine or namespace are never touched. A volume still mounted by a container
or pod is left in place, named, and the state dir kept, so that purge can run
again once that container is gone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return purgeDev(cmd.Context(), o.stateDir, func(format string, a ...any) {
				fmt.Fprintf(cmd.OutOrStdout(), format, a...)
			})
		},
	}
}

// purgeDev removes a stopped dev stack's containers and volumes, then its
// state dir.
func purgeDev(ctx context.Context, dir string, printf func(string, ...any)) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		printf("nothing to purge in %s\n", dir)
		return nil
	}
	volumes, err := devVolumes(ctx, dir)
	if err != nil {
		return fmt.Errorf("read the stack's volumes from its database (is the stack still running?): %w", err)
	}
	cli, err := stack.DockerClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	instance, err := devInstance(dir)
	if err != nil {
		return err
	}
	if err := removeInstanceContainers(ctx, cli, instance, printf); err != nil {
		return err
	}
	inUse, err := purgeDevKube(ctx, dir, instance, volumes, printf)
	if err != nil {
		return err
	}
	for _, name := range volumes {
		err := cli.VolumeRemove(ctx, name, false)
		switch {
		case err == nil:
			printf("removed volume %s\n", name)
		case cerrdefs.IsNotFound(err):
		case cerrdefs.IsConflict(err):
			inUse = append(inUse, name)
		default:
			return fmt.Errorf("remove volume %s: %w", name, err)
		}
	}
	if err := removeHolderVolumes(ctx, cli, "cairn-"+instance, printf); err != nil {
		return err
	}
	if len(inUse) > 0 {
		return fmt.Errorf("left in place, still mounted by a container or pod: %v; %s is kept so purge can finish later", inUse, dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	printf("removed %s\n", dir)
	return nil
}

// removeHolderVolumes removes the volumes holding the shells' holder that
// the stack's server made (<app>.holder.<image>, labelled with its app).
// One still mounted belongs to a live shell of another stack sharing the
// app name, and stays: it holds only the binary.
func removeHolderVolumes(ctx context.Context, cli *client.Client, app string, printf func(string, ...any)) error {
	list, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(
		filters.Arg("label", "cairn.app="+app), filters.Arg("label", "cairn.kind=holder"))})
	if err != nil {
		return fmt.Errorf("list the stack's holder volumes: %w", err)
	}
	for _, v := range list.Volumes {
		err := cli.VolumeRemove(ctx, v.Name, false)
		switch {
		case err == nil:
			printf("removed volume %s\n", v.Name)
		case cerrdefs.IsNotFound(err), cerrdefs.IsConflict(err):
		default:
			return fmt.Errorf("remove volume %s: %w", v.Name, err)
		}
	}
	return nil
}

// removeInstanceContainers force-removes the containers labelled with the
// stack's instance (its sidecars, and its shells), whatever their app.
func removeInstanceContainers(ctx context.Context, cli *client.Client, instance string, printf func(string, ...any)) error {
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", docker.LabelInstance+"="+instance))})
	if err != nil {
		return err
	}
	for _, c := range list {
		if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			return err
		}
		printf("removed container %s\n", c.Names)
	}
	return nil
}

// devVolumes starts the stack's own Postgres long enough to read the volume
// names its workspaces carry: those, and only those, are the stack's. A
// standby of --ha is read too: promoted, it may hold newer workspaces.
func devVolumes(ctx context.Context, dir string) ([]string, error) {
	var names []string
	for _, sub := range []string{devPostgresDir, devStandbyDir} {
		more, err := devVolumesIn(ctx, filepath.Join(dir, sub))
		if err != nil {
			return nil, err
		}
		names = append(names, more...)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// devVolumesIn reads the volume names of the cluster in pgDir, if any.
func devVolumesIn(ctx context.Context, pgDir string) ([]string, error) {
	if _, err := os.Stat(pgDir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	pg, err := stack.StartPostgres(ctx, pgDir, io.Discard)
	if err != nil {
		return nil, err
	}
	defer pg.Stop()
	conn, err := pgx.Connect(ctx, pg.DSN(pg.Database))
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	var migrated bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('workspaces') IS NOT NULL`).Scan(&migrated); err != nil || !migrated {
		return nil, err // no schema yet: no workspace, no volume
	}
	rows, err := conn.Query(ctx, `SELECT volume_name FROM workspaces`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
