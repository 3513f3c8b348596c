package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/ptyshell"
)

// setting is one scalar tui.* key: its file path, its environment
// variable and how a string value sets it. The server, the token and the
// contexts are clientconf's (applyEndpoint).
type setting struct {
	key string // dotted path in the file: "server", "tui.events.mode"
	env string
	set func(c *Config, v string) error
}

func settings() []setting {
	return []setting{
		tui("theme", oneOf(func(c *Config) *string { return &c.Theme }, "auto", "dark", "light", "high-contrast")),
		tui("color", oneOf(func(c *Config) *string { return &c.Color }, "auto", "never")),
		tui("glyphs", oneOf(func(c *Config) *string { return &c.Glyphs }, "auto", "unicode", "ascii")),
		tui("read_only", boolean(func(c *Config) *bool { return &c.ReadOnly })),
		tui("confirm_quit", boolean(func(c *Config) *bool { return &c.ConfirmQuit })),
		tui("mouse", boolean(func(c *Config) *bool { return &c.Mouse })),
		tui("highlight", duration(func(c *Config) *time.Duration { return &c.Highlight }, 0)),
		tui("events.mode", oneOf(func(c *Config) *string { return &c.EventsMode }, "ws", "poll", "off")),
		tui("events.poll_interval", duration(func(c *Config) *time.Duration { return &c.PollInterval }, 2*time.Second)),
		tui("cache.max_artifacts", integer(func(c *Config) *int { return &c.CacheMaxArtifacts }, 1)),
		tui("preview.max_bytes", bytes(func(c *Config) *int64 { return &c.PreviewMaxBytes }, 1)),
		tui("preview.inline_max_bytes", bytes(func(c *Config) *int64 { return &c.PreviewInlineMaxBytes }, 0)),
		tui("transfer.download_dir", text(func(c *Config) *string { return &c.DownloadDir })),
		tui("transfer.presign_ttl", duration(func(c *Config) *time.Duration { return &c.PresignTTL }, time.Second)),
		tui("transfer.max_parallel", integer(func(c *Config) *int { return &c.MaxParallel }, 1)),
		tui("transfer.rate_limit", bytes(func(c *Config) *int64 { return &c.RateLimit }, 0)),
		tui("shell.pause_on_exit", oneOf(func(c *Config) *string { return &c.ShellPauseOnExit }, "auto", "always", "never")),
		tui("shell.term", text(func(c *Config) *string { return &c.ShellTerm })),
		tui("shell.abandon_key", abandonKey(func(c *Config) *string { return &c.ShellAbandonKey })),
		tui("debug_log", text(func(c *Config) *string { return &c.DebugLog })),
	}
}

// tui names a tui.* key and derives its CAIRN_TUI_ variable.
func tui(path string, set func(*Config, string) error) setting {
	env := "CAIRN_TUI_" + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
	return setting{key: "tui." + path, env: env, set: set}
}

func setServer(dst *string, v string) error {
	v = strings.TrimRight(strings.TrimSpace(v), "/")
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want an http:// or https:// URL")
	}
	*dst = v
	return nil
}

func oneOf(field func(*Config) *string, allowed ...string) func(*Config, string) error {
	return func(c *Config, v string) error {
		v = strings.ToLower(strings.TrimSpace(v))
		for _, a := range allowed {
			if v == a {
				*field(c) = v
				return nil
			}
		}
		return fmt.Errorf("want one of %s", strings.Join(allowed, ", "))
	}
}

func boolean(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		*field(c) = b
		return nil
	}
}

// duration parses a Go duration; values under floor are raised to it.
func duration(field func(*Config) *time.Duration, floor time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration such as 5s")
		}
		*field(c) = max(d, floor)
		return nil
	}
}

func integer(field func(*Config) *int, least int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < least {
			return fmt.Errorf("want a whole number of at least %d", least)
		}
		*field(c) = n
		return nil
	}
}

func bytes(field func(*Config) *int64, least int64) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := termkit.ParseSize(v)
		if err != nil || n < least {
			return fmt.Errorf("want a size such as 256KiB (at least %d)", least)
		}
		*field(c) = n
		return nil
	}
}

// abandonKey is the shell's detach key: a key ptyshell can leave on
// (ctrl+ and a letter or one of @ [ \ ] ^ _, which send one control byte)
// or none. It is checked at start, not when the first shell opens.
func abandonKey(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		v = strings.ToLower(strings.TrimSpace(v))
		if _, _, err := ptyshell.ParseDetachKey(v); err != nil {
			return errors.New(`want ctrl+ and a letter or one of @ [ \ ] ^ _ (a key that sends one control byte), or none`)
		}
		*field(c) = v
		return nil
	}
}

// misnamed are keys people write under another name for a setting that
// cairn-tui calls otherwise (the shell's detach key is abandon_key here):
// each warns naming the right key.
func misnamed() map[string]string {
	return map[string]string{
		"tui.shell.detach_key": "tui.shell.abandon_key",
		"shell.detach_key":     "tui.shell.abandon_key",
	}
}

func text(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		*field(c) = v
		return nil
	}
}
