package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
)

func newArtifactCommand(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "art",
		Aliases: []string{"artifact"},
		Short:   "Manage artifacts (ART is an artifact ID or WS/NAME)",
		Args:    usage(cobra.NoArgs),
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(artList(c), artGet(c), artRename(c), artDescribe(c), artDelete(c),
		artUpload(c), artReplace(c), artDownload(c), artSave(c), artLoad(c), artUpdate(c), artUnpack(c))
	return cmd
}

func artList(c *cli) *cobra.Command {
	var names, states []string
	cmd := &cobra.Command{
		Use:               "list WS",
		Short:             "List a workspace's artifacts, oldest first (every state unless --state)",
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			f := cairn.ArtifactFilter{Names: names, States: bothStates}
			if len(states) > 0 {
				f.States = nil
			}
			for _, s := range states {
				st, err := cairn.ParseArtifactState(strings.ToUpper(s))
				if err != nil {
					return usagef("--state %q: expected RECORDED or MISSING_OBJECT", s)
				}
				f.States = append(f.States, st)
			}
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			f.WorkspaceID = id
			list, err := cl.FindArtifacts(cmd.Context(), f)
			if err != nil {
				return err
			}
			return c.emit(artifactsView(list))
		}),
	}
	cmd.Flags().StringArrayVar(&names, "name", nil, "only this name (repeatable)")
	cmd.Flags().StringArrayVar(&states, "state", nil, "only this state, RECORDED or MISSING_OBJECT (repeatable)")
	return cmd
}

func artGet(c *cli) *cobra.Command {
	var withURL bool
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:               "get ART [--url [--ttl 5m]]",
		Short:             "Show an artifact; --url mints a presigned GET URL (-o table prints only the URL)",
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeArtifacts,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			if cmd.Flags().Changed("ttl") && (!withURL || ttl <= 0) {
				return usagef("--ttl needs --url and a positive duration")
			}
			id, err := artifactID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			d, err := cl.GetArtifact(cmd.Context(), id, cairn.ArtifactGet{Presign: withURL, TTL: ttl})
			if err != nil {
				return err
			}
			v := artifactView(struct {
				Artifact *cairn.Artifact `json:"artifact"`
				GetURL   string          `json:"get_url,omitempty"`
			}{d.Artifact, d.GetURL}, d.Artifact)
			if withURL {
				v.table = func(w io.Writer, _ int) { fmt.Fprintln(w, d.GetURL) }
			}
			return c.emit(v)
		}),
	}
	cmd.Flags().BoolVar(&withURL, "url", false, "also mint a presigned GET URL")
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "how long the URL stays valid (default and cap: the server's maximum)")
	return cmd
}

func artRename(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:               "rename ART NEW",
		Short:             "Rename an artifact within its workspace",
		Args:              usage(cobra.ExactArgs(2)),
		ValidArgsFunction: c.completeArtifacts,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := artifactID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			a, err := cl.RenameArtifact(cmd.Context(), id, args[1])
			if err != nil {
				return err
			}
			return c.emit(artifactView(artPayload{a}, a))
		}),
	}
}

func artDescribe(c *cli) *cobra.Command {
	var desc string
	var clear bool
	cmd := &cobra.Command{
		Use:               "describe ART (--description D | --clear)",
		Short:             "Set or clear an artifact's description",
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeArtifacts,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			d, err := descriptionFlags(cmd, desc, clear)
			if err != nil {
				return err
			}
			id, err := artifactID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			a, err := cl.SetArtifactDescription(cmd.Context(), id, d)
			if err != nil {
				return err
			}
			return c.emit(artifactView(artPayload{a}, a))
		}),
	}
	cmd.Flags().StringVar(&desc, "description", "", "the new description, at most 4 KiB")
	cmd.Flags().BoolVar(&clear, "clear", false, "remove the description")
	return cmd
}

func artDelete(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:               "delete ART",
		Short:             "Delete an artifact (its object is reclaimed after the grace window)",
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeArtifacts,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := artifactID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			if err := cl.DeleteArtifact(cmd.Context(), id); err != nil {
				return err
			}
			c.note("deleted artifact %s", args[0])
			return c.emit(view{payload: struct{}{}, names: []string{id}})
		}),
	}
}

type artPayload struct {
	Artifact *cairn.Artifact `json:"artifact"`
}

func artifactsView(list []*cairn.Artifact) view {
	if list == nil {
		list = []*cairn.Artifact{}
	}
	v := view{payload: struct {
		Artifacts []*cairn.Artifact `json:"artifacts"`
	}{list}}
	now := time.Now()
	t := table{headers: []string{"NAME", "ID", "SIZE", "STATE", "AGE"}}
	for _, a := range list {
		v.names = append(v.names, a.ID)
		t.rows = append(t.rows, []string{a.Name, a.ID, termkit.Size(a.Size), stateWord(a.State), termkit.Age(now, a.CreatedAt)})
	}
	v.table = t.write
	return v
}

func stateWord(s cairn.ArtifactState) string {
	if s == cairn.ArtifactMissingObject {
		return "MISSING"
	}
	return string(s)
}

func artifactView(payload any, a *cairn.Artifact) view {
	return view{payload: payload, names: []string{a.ID}, table: func(w io.Writer, width int) {
		now := time.Now()
		digest := "- (recorded before digests were kept)"
		if a.SHA256B64 != nil {
			digest = *a.SHA256B64
		}
		fields{
			{"Name", a.Name}, {"ID", a.ID}, {"Workspace", a.WorkspaceID},
			{"Description", describeText(a.Description)},
			{"Size", termkit.Size(a.Size) + " (" + termkit.Count(a.Size) + " bytes)"},
			{"Type", termkit.Sanitize(a.MIMEType)}, {"SHA-256", digest}, {"State", string(a.State)},
			{"Created", termkit.Stamp(now, a.CreatedAt)}, {"Updated", termkit.Stamp(now, a.UpdatedAt)},
		}.write(w, width)
	}}
}
