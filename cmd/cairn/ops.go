package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
)

func newSweepCommand(c *cli) *cobra.Command {
	var ws string
	cmd := &cobra.Command{
		Use:   "sweep [--ws WS]",
		Short: "Run one reconciliation pass now (admin), for one workspace or everything",
		Args:  usage(cobra.NoArgs),
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, _ []string) error {
			id := ""
			if ws != "" {
				var err error
				if id, err = workspaceID(cmd.Context(), cl, ws); err != nil {
					return err
				}
			}
			res, err := cl.Sweep(cmd.Context(), id)
			if err != nil {
				return err
			}
			return c.emit(view{payload: struct {
				Sweep *cairn.SweepResult `json:"sweep"`
			}{res}, table: func(w io.Writer, width int) { sweepFields(res).write(w, width) }})
		}),
	}
	cmd.Flags().StringVar(&ws, "ws", "", "only this workspace (name or ID)")
	_ = cmd.RegisterFlagCompletionFunc("ws", c.completeWorkspaces) // the flag was just defined
	return cmd
}

func sweepFields(r *cairn.SweepResult) fields {
	scope := "every workspace"
	if r.WorkspaceID != "" {
		scope = "workspace " + r.WorkspaceID
	}
	n := func(v int) string { return fmt.Sprint(v) }
	f := fields{
		{"Scope", scope},
		{"Took", r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()},
		{"Volumes", fmt.Sprintf("%d examined, %d adopted, %d cleared, %d orphaned",
			r.VolumesExamined, r.VolumesAdopted, r.VolumesCleared, r.VolumesOrphaned)},
		{"Staging", fmt.Sprintf("%d examined, %d deleted", r.StagingExamined, r.StagingDeleted)},
		{"Uploads", fmt.Sprintf("%d aborted", r.UploadsAborted)},
		{"Storage", fmt.Sprintf("%d examined, %d deleted", r.StorageExamined, r.StorageDeleted)},
		{"Flagged missing", n(r.ArtifactsFlagged)},
		{"Released pruned", n(r.ReleasedPruned)},
		{"Containers removed", n(r.ContainersRemoved)},
	}
	for _, e := range r.Errors {
		f = append(f, [2]string{"Error", termkit.Sanitize(e)})
	}
	return f
}

func newAuditCommand(c *cli) *cobra.Command {
	var ws string
	var types []string
	cmd := &cobra.Command{
		Use:   "audit [--ws WS] [--type T]...",
		Short: "List audit events, oldest first (admin)",
		Args:  usage(cobra.NoArgs),
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, _ []string) error {
			var f cairn.AuditFilter
			for _, t := range types {
				at, err := cairn.ParseAuditType(strings.ToUpper(t))
				if err != nil {
					return usagef("--type %q: %s", t, cairn.ErrorDetail(err))
				}
				f.Types = append(f.Types, at)
			}
			if ws != "" {
				var err error
				if f.WorkspaceID, err = workspaceID(cmd.Context(), cl, ws); err != nil {
					return err
				}
			}
			list, err := cl.FindAuditEvents(cmd.Context(), f)
			if err != nil {
				return err
			}
			return c.emit(auditView(list))
		}),
	}
	cmd.Flags().StringVar(&ws, "ws", "", "only events of this workspace (name or ID)")
	cmd.Flags().StringArrayVar(&types, "type", nil, "only this event type, e.g. NEW_ARTIFACT (repeatable)")
	_ = cmd.RegisterFlagCompletionFunc("ws", c.completeWorkspaces) // the flag was just defined
	return cmd
}

func auditView(list []*cairn.AuditEvent) view {
	if list == nil {
		list = []*cairn.AuditEvent{}
	}
	v := view{payload: struct {
		AuditEvents []*cairn.AuditEvent `json:"audit_events"`
	}{list}}
	now := time.Now()
	t := table{headers: []string{"AGE", "TYPE", "ACTOR", "SUBJECT"}, flex: 3}
	for _, ev := range list {
		v.names = append(v.names, ev.ID)
		actor := "-"
		if ev.Actor != nil {
			actor = termkit.Sanitize(*ev.Actor)
		}
		t.rows = append(t.rows, []string{termkit.Age(now, ev.CreatedAt), string(ev.Type), actor, subject(ev.Metadata)})
	}
	v.table = t.write
	return v
}

// subject names what an event is about, from its metadata: names first.
func subject(md map[string]any) string {
	var parts []string
	for _, k := range []string{"artifact_name", "new_artifact_name", "workspace_name", "new_workspace_name", "artifact_id", "workspace_id"} {
		if v, ok := md[k].(string); ok && v != "" {
			parts = append(parts, termkit.Sanitize(v))
		}
	}
	return strings.Join(slices.Compact(parts), " ")
}
