package main

import (
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// The snapshot commands of `cairn ws`. SNAP is a snapshot's ID, or the
// name of one of the workspace's snapshots.

func wsSnapshot(c *cli) *cobra.Command {
	var sc cairn.SnapshotCreate
	cmd := &cobra.Command{
		Use:   "snapshot WS [--name N] [--live]",
		Short: "Snapshot the workspace's volume; only content the store lacks is uploaded",
		Long: `snapshot records the whole volume — every directory, file and symlink with
its mode, owner and mtime — and stores the files' content by digest, so
content an earlier snapshot stored is not uploaded again. A volume another
container mounts is refused unless --live, which takes it anyway (files
whole, but not of one instant).`,
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			snap, err := cl.CreateSnapshot(cmd.Context(), id, sc)
			if err != nil {
				return err
			}
			c.note("snapshot %s: %s, %s uploaded", snap.Name, termkit.Size(snap.Bytes), termkit.Size(snap.UploadedBytes))
			return c.emit(snapshotsView([]*cairn.Snapshot{snap}, snapshotPayload{snap}))
		}),
	}
	cmd.Flags().StringVar(&sc.Name, "name", "", "the snapshot's name, unique in the workspace (default: snap-<ULID>)")
	cmd.Flags().BoolVar(&sc.Live, "live", false, "snapshot even while other containers mount the volume")
	return cmd
}

func wsSnapshots(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "snapshots WS | rm WS SNAP",
		Short:             "List the workspace's snapshots, oldest first",
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			list, err := cl.ListSnapshots(cmd.Context(), id)
			if err != nil {
				return err
			}
			if list == nil {
				list = []*cairn.Snapshot{}
			}
			return c.emit(snapshotsView(list, struct {
				Snapshots []*cairn.Snapshot `json:"snapshots"`
			}{list}))
		}),
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "rm WS SNAP",
		Short: "Delete a snapshot; content other snapshots share stays",
		Args:  usage(cobra.ExactArgs(2)),
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			snap, err := snapshotOf(cmd.Context(), cl, args[0], args[1])
			if err != nil {
				return err
			}
			if err := cl.DeleteSnapshot(cmd.Context(), snap.ID); err != nil {
				return err
			}
			c.note("deleted snapshot %s", snap.Name)
			return c.emit(view{payload: struct{}{}, names: []string{snap.ID}})
		}),
	})
	return cmd
}

func wsRestore(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "restore WS SNAP",
		Short: "Replace the volume's contents with a snapshot's (the old stay until the new are whole)",
		Long: `restore rebuilds the snapshot's tree beside the volume's contents, checks
every file's digest, and swaps only once all of it is there; if anything
fails the volume is as it was. SNAP may be a snapshot of another workspace,
by ID. The volume must not be mounted by another container.`,
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			snap, err := snapshotOf(cmd.Context(), cl, id, args[1])
			if err != nil {
				return err
			}
			out, err := cl.RestoreSnapshot(cmd.Context(), id, snap.ID)
			if err != nil {
				return err
			}
			c.note("restored %s: %d entries, %s", snap.Name, out.Entries, termkit.Size(out.Bytes))
			return c.emit(view{payload: struct {
				Restore *cairn.RestoreResult `json:"restore"`
			}{out}, names: []string{id}})
		}),
	}
}

func wsFork(c *cli) *cobra.Command {
	var f cairn.WorkspaceFork
	var desc string
	cmd := &cobra.Command{
		Use:               "fork WS NAME [--live]",
		Short:             "Snapshot the workspace and make the new workspace NAME, READY, from it",
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			f.Name = args[1]
			if cmd.Flags().Changed("description") {
				f.Description = &desc
			}
			ws, err := cl.ForkWorkspace(cmd.Context(), id, f)
			if err != nil {
				return err
			}
			return c.emit(workspaceView(wsPayload{ws}, ws, nil))
		}),
	}
	cmd.Flags().BoolVar(&f.Live, "live", false, "snapshot the source even while other containers mount it")
	cmd.Flags().StringVar(&desc, "description", "", "the new workspace's description")
	return cmd
}

// snapshotOf resolves SNAP: a snapshot ID as it is, else the name of one
// of the workspace's snapshots.
func snapshotOf(ctx context.Context, cl *client.Client, ws, snap string) (*cairn.Snapshot, error) {
	if uuid.Validate(snap) == nil {
		return cl.GetSnapshot(ctx, snap)
	}
	id, err := workspaceID(ctx, cl, ws)
	if err != nil {
		return nil, err
	}
	list, err := cl.ListSnapshots(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if s.Name == snap {
			return s, nil
		}
	}
	return nil, cairn.Errorf(cairn.ReasonSnapshotNotFound, "workspace %s has no snapshot named '%s'", ws, snap)
}

type snapshotPayload struct {
	Snapshot *cairn.Snapshot `json:"snapshot"`
}

func snapshotsView(list []*cairn.Snapshot, payload any) view {
	v := view{payload: payload}
	now := time.Now()
	t := table{headers: []string{"NAME", "ID", "ENTRIES", "SIZE", "UPLOADED", "LIVE", "AGE"}}
	for _, s := range list {
		v.names = append(v.names, s.ID)
		live := "-"
		if s.Live {
			live = "live"
		}
		t.rows = append(t.rows, []string{termkit.Sanitize(s.Name), s.ID, strconv.Itoa(s.Entries), termkit.Size(s.Bytes),
			termkit.Size(s.UploadedBytes), live, termkit.Age(now, s.CreatedAt)})
	}
	v.table = t.write
	return v
}
