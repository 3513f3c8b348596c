package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/server"
)

func newDoctorCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check what a server started from the config needs, and say how to fix what fails",
		Long: `doctor checks, without serving, each thing a server started from -c FILE needs:
the database, the bucket, the store's integrity (the probe a server runs at
start), the container runtime and its sidecar image, and that a sidecar
reaches the store at the address presigned URLs name. It prints one line per
check, ✓ or ✕, with the fix under each failure, and exits 1 if any failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, cfg, err := g.setup(true)
			if err != nil {
				return err
			}
			checks := server.Doctor(cmd.Context(), cfg, g.secrets(), log)
			if printChecks(cmd.OutOrStdout(), checks) {
				return nil
			}
			return errors.New("doctor: a check failed")
		},
	}
}

// printChecks prints one line per check, and the fix under each failure;
// it reports whether all passed. What a check found came from outside (a
// store's or engine's message): it is printed inert.
func printChecks(w io.Writer, checks []server.Check) bool {
	ok := true
	for _, c := range checks {
		mark := "✓"
		if !c.OK {
			mark, ok = "✕", false
		}
		fmt.Fprintf(w, "%s %-16s %s\n", mark, c.Name, termkit.Sanitize(c.Detail))
		if !c.OK {
			fmt.Fprintf(w, "  fix: %s\n", c.Fix)
		}
	}
	return ok
}
