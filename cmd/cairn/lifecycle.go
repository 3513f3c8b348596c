package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

// lifecycleFlags are the flags that set a workspace's lifecycle, on
// `ws create` and `ws lifecycle`.
type lifecycleFlags struct {
	ttl, idle time.Duration
	expiresAt string
}

func (f *lifecycleFlags) register(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&f.ttl, "ttl", 0, "expire this long after the last touch, e.g. 24h")
	cmd.Flags().StringVar(&f.expiresAt, "expires-at", "", "expire at this time (RFC 3339); not with --ttl")
	cmd.Flags().DurationVar(&f.idle, "archive-idle-after", 0, "archive the volume after this long idle, e.g. 72h (0s: never)")
}

// lifecycle is what the flags given say; flags not given stay unset.
func (f *lifecycleFlags) lifecycle(cmd *cobra.Command) (cairn.Lifecycle, error) {
	var l cairn.Lifecycle
	if cmd.Flags().Changed("ttl") {
		secs, err := wholeSeconds("--ttl", f.ttl)
		if err != nil {
			return l, err
		}
		l.TTLSecs = &secs
	}
	if cmd.Flags().Changed("expires-at") {
		at, err := time.Parse(time.RFC3339, f.expiresAt)
		if err != nil {
			return l, usagef("--expires-at %q: expected an RFC 3339 time such as 2027-01-02T15:04:05Z", f.expiresAt)
		}
		l.ExpiresAt = &at
	}
	if cmd.Flags().Changed("archive-idle-after") {
		secs, err := wholeSeconds("--archive-idle-after", f.idle)
		if err != nil {
			return l, err
		}
		l.ArchiveIdleAfterSecs = &secs
	}
	if err := l.Validate(time.Now()); err != nil {
		return l, usagef("%s", cairn.ErrorDetail(err))
	}
	return l, nil
}

func wholeSeconds(flag string, d time.Duration) (int64, error) {
	if d < 0 || d%time.Second != 0 {
		return 0, usagef("%s %s: expected a whole number of seconds, 0 or more", flag, d)
	}
	return int64(d / time.Second), nil
}

func wsLifecycle(c *cli) *cobra.Command {
	var f lifecycleFlags
	cmd := &cobra.Command{
		Use:   "lifecycle WS [--ttl D | --expires-at T] [--archive-idle-after D]",
		Short: "Set when the workspace expires and when its idle volume is archived (no flag clears both)",
		Long: `lifecycle replaces the workspace's lifecycle: what is not given is cleared.
The maintainer sends workspace.expiring or workspace.archiving
lifecycle.warnBeforeSecs before it deletes or archives anything; 'cairn ws
touch' postpones both.`,
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			l, err := f.lifecycle(cmd)
			if err != nil {
				return err
			}
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			ws, err := cl.SetWorkspaceLifecycle(cmd.Context(), id, l)
			if err != nil {
				return err
			}
			return c.emit(workspaceView(wsPayload{ws}, ws, nil))
		}),
	}
	f.register(cmd)
	return cmd
}

func wsTouch(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:               "touch WS",
		Short:             "Postpone the workspace's expiry (by its ttl) and archiving, withdrawing warnings",
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			ws, err := cl.TouchWorkspace(cmd.Context(), id)
			if err != nil {
				return err
			}
			return c.emit(workspaceView(wsPayload{ws}, ws, nil))
		}),
	}
}
