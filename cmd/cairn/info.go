package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
)

func newInfoCommand(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "What the server offers: its version, bounds, features and this token's scopes",
		Args:  usage(cobra.NoArgs),
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, _ []string) error {
			info, err := cl.Info(cmd.Context())
			if err != nil {
				return err
			}
			return c.emit(view{payload: struct {
				Info *cairn.Info `json:"info"`
			}{info}, names: []string{info.Version}, table: func(w io.Writer, width int) { infoFields(info).write(w, width) }})
		}),
	}
}

func infoFields(i *cairn.Info) fields {
	b, f := i.Bounds, i.Features
	on := func(yes bool) string {
		if yes {
			return "on"
		}
		return "off"
	}
	return fields{
		{"Version", fmt.Sprintf("%s (API %s)", i.Version, i.APIVersion)},
		{"Scopes", strings.Join(i.Scopes, ", ")},
		{"Runtime", f.Runtime},
		{"Features", fmt.Sprintf("shell %s, ssh %s, mcp %s, stream uploads %s, file writes %s, watch %s",
			on(f.Shell), on(f.SSH), on(f.MCP), on(f.StreamUploads), on(f.FilesWrite), on(f.Watch))},
		{"Integrity", "checked by the " + f.Integrity},
		{"Objects", fmt.Sprintf("up to %s; one PUT up to %s; in parts above %s, %s each",
			termkit.Size(b.MaxObjectSize), termkit.Size(b.SinglePutMax), termkit.Size(b.MultipartThreshold),
			termkit.Size(b.PartSize))},
		{"Requests", fmt.Sprintf("bodies up to %s; lists of %d; file reads up to %s",
			termkit.Size(b.MaxBodyBytes), b.ListLimit, termkit.Size(b.FileReadMaxBytes))},
		{"Unpack", fmt.Sprintf("up to %d entries, %s, ratio %d", b.UnpackMaxEntries, termkit.Size(b.UnpackMaxBytes),
			b.UnpackMaxRatio)},
	}
}
