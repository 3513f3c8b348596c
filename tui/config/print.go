package config

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Binding is one action's effective keys as Print shows them. The key
// registry (tui/keys) resolves them; this package, which imports no Charm
// library, only prints them.
type Binding struct {
	Action string // the action ID, as in tui.keys.<Action>
	Keys   string // as help shows them: "D/delete"
	// Ignored: the file overrides the action, but the registry kept the
	// default (an unparsable key; its warning says why).
	Ignored bool
}

// Print writes the effective settings with their sources, one a line,
// then every action's keys (bindings, in registry order) with theirs. The
// token is never printed: only whether one is set.
func (c *Config) Print(w io.Writer, bindings []Binding) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# config file: %s\n", c.ConfigPath)
	for _, r := range c.rows() {
		fmt.Fprintf(&b, "%-30s %-24s # %s\n", r[0], r[1], c.source(r[0]))
	}
	for _, k := range bindings {
		key := "tui.keys." + k.Action
		src := c.source(key)
		if k.Ignored {
			src = "default (" + src + " ignored, see the warning)"
		}
		fmt.Fprintf(&b, "%-30s %-24s # %s\n", key, k.Keys, src)
	}
	for _, wmsg := range c.Warnings {
		fmt.Fprintf(&b, "# warning: %s\n", wmsg)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rows are the scalar and list settings, key and value, in file order.
func (c *Config) rows() [][2]string {
	token := "(unset)"
	if c.Token != "" {
		token = "(set, redacted)"
	}
	context := c.Context
	if context == "" {
		context = "(none)"
	}
	return [][2]string{
		{"server", c.Server}, {"token", token},
		{"context", context}, {"contexts", "[" + strings.Join(c.Contexts, ", ") + "]"},
		{"tui.theme", c.Theme}, {"tui.color", c.Color}, {"tui.glyphs", c.Glyphs},
		{"tui.read_only", fmt.Sprint(c.ReadOnly)}, {"tui.confirm_quit", fmt.Sprint(c.ConfirmQuit)},
		{"tui.mouse", fmt.Sprint(c.Mouse)},
		{"tui.highlight", c.Highlight.String()},
		{"tui.events.mode", c.EventsMode}, {"tui.events.poll_interval", c.PollInterval.String()},
		{"tui.cache.max_artifacts", fmt.Sprint(c.CacheMaxArtifacts)},
		{"tui.preview.max_bytes", fmt.Sprint(c.PreviewMaxBytes)},
		{"tui.preview.inline_max_bytes", fmt.Sprint(c.PreviewInlineMaxBytes)},
		{"tui.preview.mime_allow", "[" + strings.Join(c.PreviewMIMEAllow, ", ") + "]"},
		{"tui.transfer.download_dir", c.DownloadDir},
		{"tui.transfer.presign_ttl", c.PresignTTL.Round(time.Second).String()},
		{"tui.transfer.max_parallel", fmt.Sprint(c.MaxParallel)},
		{"tui.transfer.rate_limit", fmt.Sprint(c.RateLimit)},
		{"tui.shell.pause_on_exit", c.ShellPauseOnExit},
		{"tui.shell.term", c.ShellTerm}, {"tui.shell.abandon_key", c.ShellAbandonKey},
		{"tui.debug_log", c.DebugLog},
	}
}

// source is where key's value came from.
func (c *Config) source(key string) string {
	if src := c.Sources[key]; src != "" {
		return src
	}
	return "default"
}
