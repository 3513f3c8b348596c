// Package config resolves cairn-tui's settings from flags, environment, the
// shared client config file and defaults, in that order of precedence per
// key, and records where each value came from. The server, the token and the
// contexts are the ones the cairn CLI reads and `cairn dev` writes, resolved
// by internal/clientconf for both. It imports no Charm library.
package config

import (
	"strings"
	"time"
)

// Config is the effective configuration of one cairn-tui run.
type Config struct {
	Server string
	Token  string // never printed or logged
	// Context is the config file's context in use ("" for none): chosen by
	// --context or CAIRN_CONTEXT, or the file's current-context when it gave
	// the server. Contexts are the file's, in file order; OpenContext
	// switches to one.
	Context  string
	Contexts []string

	Theme       string // auto | dark | light | high-contrast
	Color       string // auto | never
	Glyphs      string // auto | unicode | ascii
	ReadOnly    bool
	ConfirmQuit bool
	// Mouse turns on the wheel and click-to-select; off by default, since
	// it takes the terminal's own text selection.
	Mouse     bool
	Highlight time.Duration

	EventsMode   string // ws | poll | off
	PollInterval time.Duration

	CacheMaxArtifacts int

	PreviewMaxBytes       int64
	PreviewInlineMaxBytes int64
	PreviewMIMEAllow      []string

	DownloadDir string
	PresignTTL  time.Duration
	MaxParallel int
	RateLimit   int64 // bytes per second; 0 is unlimited

	ShellPauseOnExit string // auto | always | never
	ShellTerm        string
	ShellAbandonKey  string

	Keys     map[string][]string
	DebugLog string

	// ConfigPath is the file that was read (or would have been).
	ConfigPath  string
	PrintConfig bool
	Version     bool

	// Sources maps each key to where its value came from: "flag --server",
	// "env CAIRN_URL", "file PATH" or "default".
	Sources map[string]string
	// Warnings are shown as one toast at start.
	Warnings []string

	locale string // LC_ALL, LC_CTYPE or LANG, for glyphs: auto
	input  Input  // what Load read, for OpenContext
}

// Defaults returns the built-in values.
func Defaults() Config {
	return Config{
		Theme: "auto", Color: "auto", Glyphs: "auto",
		Highlight:    2 * time.Second,
		EventsMode:   "ws",
		PollInterval: 5 * time.Second,

		CacheMaxArtifacts:     50000,
		PreviewMaxBytes:       256 << 10,
		PreviewInlineMaxBytes: 16 << 10,
		PreviewMIMEAllow: []string{
			"application/json", "application/xml", "application/yaml", "application/x-ndjson",
			"application/javascript", "application/toml",
		},
		DownloadDir: ".", PresignTTL: 300 * time.Second, MaxParallel: 2,
		ShellPauseOnExit: "auto", ShellTerm: "xterm-256color", ShellAbandonKey: "ctrl+]",
		Sources: make(map[string]string),
	}
}

// ASCII reports whether the ascii glyph set applies: chosen, or automatic
// when the locale names no UTF-8.
func (c Config) ASCII() bool {
	switch c.Glyphs {
	case "ascii":
		return true
	case "unicode":
		return false
	}
	l := strings.ToLower(c.locale)
	return !strings.Contains(l, "utf-8") && !strings.Contains(l, "utf8")
}

// NoColor reports whether colour and every other SGR attribute are off:
// color: never (NO_COLOR and --no-color set it) or a stdout that is not a
// terminal.
func (c Config) NoColor(stdoutTerminal bool) bool {
	return c.Color == "never" || !stdoutTerminal
}
