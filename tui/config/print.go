package config

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Print writes the effective settings with their sources, one a line. The
// token is never printed: only whether one is set.
func (c *Config) Print(w io.Writer) error {
	token := "(unset)"
	if c.Token != "" {
		token = "(set, redacted)"
	}
	rows := [][2]string{
		{"server", c.Server}, {"token", token},
		{"tui.theme", c.Theme}, {"tui.color", c.Color}, {"tui.glyphs", c.Glyphs},
		{"tui.read_only", fmt.Sprint(c.ReadOnly)}, {"tui.confirm_quit", fmt.Sprint(c.ConfirmQuit)},
		{"tui.highlight", c.Highlight.String()},
		{"tui.events.mode", c.EventsMode}, {"tui.events.poll_interval", c.PollInterval.String()},
		{"tui.cache.max_artifacts", fmt.Sprint(c.CacheMaxArtifacts)},
		{"tui.preview.max_bytes", fmt.Sprint(c.PreviewMaxBytes)},
		{"tui.preview.inline_max_bytes", fmt.Sprint(c.PreviewInlineMaxBytes)},
		{"tui.transfer.download_dir", c.DownloadDir},
		{"tui.transfer.presign_ttl", c.PresignTTL.Round(time.Second).String()},
		{"tui.transfer.max_parallel", fmt.Sprint(c.MaxParallel)},
		{"tui.transfer.rate_limit", fmt.Sprint(c.RateLimit)},
		{"tui.shell.pause_on_exit", c.ShellPauseOnExit},
		{"tui.shell.term", c.ShellTerm}, {"tui.shell.abandon_key", c.ShellAbandonKey},
		{"tui.debug_log", c.DebugLog},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# config file: %s\n", c.ConfigPath)
	for _, r := range rows {
		src := c.Sources[r[0]]
		if src == "" {
			src = "default"
		}
		fmt.Fprintf(&b, "%-30s %-24s # %s\n", r[0], r[1], src)
	}
	for _, wmsg := range c.Warnings {
		fmt.Fprintf(&b, "# warning: %s\n", wmsg)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
