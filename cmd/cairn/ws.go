package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/quantity"
	"github.com/cairn-dev/cairn/internal/termkit"
)

func newWorkspaceCommand(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ws",
		Aliases: []string{"workspace"},
		Short:   "Manage workspaces (WS is a workspace name or ID)",
		Args:    usage(cobra.NoArgs),
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(wsList(c), wsGet(c), wsCreate(c), wsRename(c), wsDescribe(c), wsDelete(c),
		wsVolume(c, "setup", "Create (or adopt) the workspace's volume and mark it READY"),
		wsVolume(c, "teardown", "Remove the workspace's volume (never by force) and mark it NONE"),
		wsSnapshot(c), wsSnapshots(c), wsRestore(c), wsFork(c), wsLifecycle(c), wsTouch(c))
	return cmd
}

func wsList(c *cli) *cobra.Command {
	var names, states []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List workspaces, oldest first",
		Args:  usage(cobra.NoArgs),
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, _ []string) error {
			f := cairn.WorkspaceFilter{Names: names}
			for _, s := range states {
				st, err := cairn.ParseVolumeState(strings.ToUpper(s))
				if err != nil {
					return usagef("--state %q: expected READY or NONE", s)
				}
				f.VolumeStates = append(f.VolumeStates, st)
			}
			list, err := cl.FindWorkspaces(cmd.Context(), f)
			if err != nil {
				return err
			}
			return c.emit(workspacesView(list))
		}),
	}
	cmd.Flags().StringArrayVar(&names, "name", nil, "only this name (repeatable)")
	cmd.Flags().StringArrayVar(&states, "state", nil, "only this volume state, READY or NONE (repeatable)")
	return cmd
}

func wsGet(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:               "get WS",
		Short:             "Show a workspace and how many running containers mount its volume",
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			d, err := cl.InspectWorkspace(cmd.Context(), id)
			if err != nil {
				return err
			}
			mounts := d.MountCount
			return c.emit(workspaceView(struct {
				Workspace  *cairn.Workspace `json:"workspace"`
				MountCount int              `json:"mount_count"`
			}{d.Workspace, d.MountCount}, d.Workspace, &mounts))
		}),
	}
}

func wsCreate(c *cli) *cobra.Command {
	var desc, size, from string
	var life lifecycleFlags
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a workspace (no volume yet: see 'cairn ws setup')",
		Args:  usage(cobra.ExactArgs(1)),
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			wc := cairn.WorkspaceCreate{Name: args[0]}
			if cmd.Flags().Changed("description") {
				wc.Description = &desc
			}
			if cmd.Flags().Changed("size") {
				n, err := quantity.Bytes(size)
				if err != nil {
					return usagef("--size: %v", err)
				}
				wc.VolumeMetadata = &cairn.VolumeMetadata{SizeBytes: &n}
			}
			wc.FromSnapshot = from
			var err error
			if wc.Lifecycle, err = life.lifecycle(cmd); err != nil {
				return err
			}
			ws, err := cl.CreateWorkspace(cmd.Context(), wc)
			if err != nil {
				return err
			}
			return c.emit(workspaceView(wsPayload{ws}, ws, nil))
		}),
	}
	cmd.Flags().StringVar(&desc, "description", "", "free text, at most 4 KiB")
	cmd.Flags().StringVar(&size, "size", "", "the volume's size, in bytes or as a quantity such as 10Gi (Kubernetes claims only)")
	cmd.Flags().StringVar(&from, "from-snapshot", "", "a snapshot's ID: the workspace is made READY holding its tree")
	life.register(cmd)
	return cmd
}

func wsRename(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:               "rename WS NEW",
		Short:             "Rename a workspace (its volume keeps its name)",
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			ws, err := cl.RenameWorkspace(cmd.Context(), id, args[1])
			if err != nil {
				return err
			}
			return c.emit(workspaceView(wsPayload{ws}, ws, nil))
		}),
	}
}

func wsDescribe(c *cli) *cobra.Command {
	var desc string
	var clear bool
	cmd := &cobra.Command{
		Use:               "describe WS (--description D | --clear)",
		Short:             "Set or clear a workspace's description",
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			d, err := descriptionFlags(cmd, desc, clear)
			if err != nil {
				return err
			}
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			ws, err := cl.SetWorkspaceDescription(cmd.Context(), id, d)
			if err != nil {
				return err
			}
			return c.emit(workspaceView(wsPayload{ws}, ws, nil))
		}),
	}
	cmd.Flags().StringVar(&desc, "description", "", "the new description, at most 4 KiB")
	cmd.Flags().BoolVar(&clear, "clear", false, "remove the description")
	return cmd
}

// descriptionFlags reads exactly one of --description and --clear.
func descriptionFlags(cmd *cobra.Command, desc string, clear bool) (*string, error) {
	set := cmd.Flags().Changed("description")
	switch {
	case set == clear:
		return nil, usagef("give exactly one of --description D and --clear")
	case clear:
		return nil, nil
	}
	return &desc, nil
}

func wsDelete(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:               "delete WS",
		Short:             "Delete a workspace that has no volume, with its artifacts",
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			if err := cl.DeleteWorkspace(cmd.Context(), id); err != nil {
				return err
			}
			c.note("deleted workspace %s", args[0])
			return c.emit(view{payload: struct{}{}, names: []string{id}})
		}),
	}
}

// wsVolume is `ws setup` or `ws teardown`.
func wsVolume(c *cli, verb, short string) *cobra.Command {
	return &cobra.Command{
		Use:               verb + " WS",
		Short:             short,
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			op, done := cl.SetupVolume, "set up the volume of workspace %s"
			if verb == "teardown" {
				op, done = cl.TeardownVolume, "tore down the volume of workspace %s"
			}
			if err := op(cmd.Context(), id); err != nil {
				return err
			}
			c.note(done, args[0])
			return c.emit(view{payload: struct{}{}, names: []string{id}})
		}),
	}
}

type wsPayload struct {
	Workspace *cairn.Workspace `json:"workspace"`
}

func workspacesView(list []*cairn.Workspace) view {
	if list == nil {
		list = []*cairn.Workspace{}
	}
	v := view{payload: struct {
		Workspaces []*cairn.Workspace `json:"workspaces"`
	}{list}}
	now := time.Now()
	t := table{headers: []string{"NAME", "ID", "VOLUME", "ARTIFACTS", "AGE"}}
	for _, ws := range list {
		v.names = append(v.names, ws.ID)
		t.rows = append(t.rows, []string{ws.Name, ws.ID, string(ws.VolumeState), counts(ws.ArtifactCounts),
			termkit.Age(now, ws.CreatedAt)})
	}
	v.table = t.write
	return v
}

// workspaceView shows one workspace; mounts is the live mount count when
// it was asked for.
func workspaceView(payload any, ws *cairn.Workspace, mounts *int) view {
	return view{payload: payload, names: []string{ws.ID}, table: func(w io.Writer, width int) {
		now := time.Now()
		f := fields{{"Name", ws.Name}, {"ID", ws.ID}, {"Description", describeText(ws.Description)},
			{"Artifacts", counts(ws.ArtifactCounts)}, {"Volume", ws.VolumeName}, {"State", string(ws.VolumeState)}}
		if mounts != nil && *mounts >= 0 {
			f = append(f, [2]string{"Mounted by", fmt.Sprintf("%d running container(s)", *mounts)})
		}
		if ws.VolumeMetadata != nil && ws.VolumeMetadata.SizeBytes != nil {
			f = append(f, [2]string{"Volume size", termkit.Size(*ws.VolumeMetadata.SizeBytes)})
		}
		f = append(f, lifecycleFields(now, ws)...)
		f = append(f, [2]string{"Created", termkit.Stamp(now, ws.CreatedAt)}, [2]string{"Updated", termkit.Stamp(now, ws.UpdatedAt)})
		f.write(w, width)
	}}
}

// lifecycleFields are the lifecycle lines of a workspace, those set.
func lifecycleFields(now time.Time, ws *cairn.Workspace) fields {
	var f fields
	if ws.ExpiresAt != nil {
		expires := termkit.Stamp(now, *ws.ExpiresAt)
		if ws.TTLSecs != nil {
			expires += fmt.Sprintf(" (ttl %s)", time.Duration(*ws.TTLSecs)*time.Second)
		}
		f = append(f, [2]string{"Expires", expires})
	}
	if ws.ArchiveIdleAfterSecs != nil {
		f = append(f, [2]string{"Archive idle", (time.Duration(*ws.ArchiveIdleAfterSecs) * time.Second).String()})
	}
	if ws.ArchivedSnapshotID != nil {
		f = append(f, [2]string{"Archived to", "snapshot " + *ws.ArchivedSnapshotID + " (ws setup restores it)"})
	}
	return f
}

// counts is a workspace's number of artifacts, the missing ones named:
// "3", "3 (1 missing)".
func counts(c cairn.ArtifactCounts) string {
	s := fmt.Sprint(c.Recorded + c.MissingObject)
	if c.MissingObject > 0 {
		s += fmt.Sprintf(" (%d missing)", c.MissingObject)
	}
	return s
}

func describeText(d *string) string {
	if d == nil {
		return "-"
	}
	return strings.Join(termkit.SanitizeLines(*d, nil), "\n")
}
