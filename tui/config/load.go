package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoServer is returned when no source names a server.
var ErrNoServer = errors.New("no server: pass --server, set CAIRN_URL, or run 'cairn dev'")

// InvalidError is a value that does not parse; cairn-tui exits 2 with it,
// before the alt screen.
type InvalidError struct {
	Key, Value, Source string
	Err                error
}

func (e *InvalidError) Error() string {
	v := fmt.Sprintf("%q", e.Value)
	if e.Key == "token" {
		v = "(redacted)"
	}
	return fmt.Sprintf("invalid %s %s (from %s): %v", e.Key, v, e.Source, e.Err)
}

// Input is what Load reads; zero fields use the process's own.
type Input struct {
	Args     []string
	Getenv   func(string) string
	ReadFile func(string) ([]byte, error)
	Stat     func(string) (fs.FileInfo, error)
}

func (in Input) withDefaults() Input {
	if in.Getenv == nil {
		in.Getenv = os.Getenv
	}
	if in.ReadFile == nil {
		in.ReadFile = os.ReadFile
	}
	if in.Stat == nil {
		in.Stat = os.Stat
	}
	return in
}

// sourced is a raw value and where it came from.
type sourced struct{ value, source string }

// Load resolves the configuration: flags > environment > file > defaults,
// per key. A flag error is returned as is (flag.ErrHelp for -h).
func Load(in Input) (*Config, error) {
	in = in.withDefaults()
	c := Defaults()
	c.locale = firstSet(in.Getenv("LC_ALL"), in.Getenv("LC_CTYPE"), in.Getenv("LANG"))
	fl, err := parseFlags(in.Args)
	if err != nil {
		return nil, err
	}
	c.PrintConfig, c.Version = fl.print, fl.version
	path, explicit := configPath(fl.config, in.Getenv)
	c.ConfigPath = path
	file, err := readConfigFile(path, explicit, in)
	if err != nil {
		return nil, err
	}
	c.Warnings = append(c.Warnings, file.warnings...)
	if env := "CAIRN_TUI_SHELL_DETACH_KEY"; in.Getenv(env) != "" {
		c.Warnings = append(c.Warnings, "env "+env+" ignored — cairn-tui's shell detach key is tui.shell.abandon_key (CAIRN_TUI_SHELL_ABANDON_KEY)")
	}
	c.applyLists(file)
	for _, layer := range []map[string]sourced{file.values, envValues(in.Getenv), fl.values} {
		if err := c.apply(layer, in); err != nil {
			return nil, err
		}
	}
	c.keepFileTokenForFileServer(file.values)
	if c.Server == "" && !c.PrintConfig && !c.Version {
		return nil, ErrNoServer
	}
	return &c, nil
}

// applyLists takes the file's lists, which only the file can set:
// preview.mime_allow and the key overrides, with their source.
func (c *Config) applyLists(file fileValues) {
	if file.mimeAllow != nil {
		c.PreviewMIMEAllow = file.mimeAllow
		c.Sources["tui.preview.mime_allow"] = file.source
	}
	c.Keys = file.keys
	for id := range file.keys {
		c.Sources["tui.keys."+id] = file.source
	}
}

// keepFileTokenForFileServer drops a token that came from the file when
// the server did not: as the CLI does, the file's token only ever goes to
// the file's server.
func (c *Config) keepFileTokenForFileServer(file map[string]sourced) {
	if !strings.HasPrefix(c.Sources["token"], "file ") {
		return
	}
	fileServer := ""
	if v, ok := file["server"]; ok {
		_ = setServer(&fileServer, v.value) // an invalid one already failed above
	}
	if fileServer != c.Server {
		c.Token = ""
		delete(c.Sources, "token")
	}
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// configPath is --config, else CAIRN_TUI_CONFIG, else the file `cairn dev`
// writes. explicit paths must exist.
func configPath(flagPath string, getenv func(string) string) (string, bool) {
	if p := firstSet(flagPath, getenv("CAIRN_TUI_CONFIG")); p != "" {
		return p, true
	}
	base := getenv("XDG_CONFIG_HOME")
	if base == "" {
		base = filepath.Join(getenv("HOME"), ".config")
	}
	return filepath.Join(base, "cairn", "config.yaml"), false
}

func envValues(getenv func(string) string) map[string]sourced {
	out := make(map[string]sourced)
	for _, s := range settings() {
		if s.env == "" {
			continue
		}
		if v := getenv(s.env); v != "" {
			out[s.key] = sourced{v, "env " + s.env}
		}
	}
	if getenv("NO_COLOR") != "" {
		out["tui.color"] = sourced{"never", "env NO_COLOR"}
	}
	return out
}

// apply sets every key present in layer, in settings order: token_file
// before token, so an explicit token of the same layer wins.
func (c *Config) apply(layer map[string]sourced, in Input) error {
	for _, s := range settings() {
		v, ok := layer[s.key]
		if !ok {
			continue
		}
		if s.key == "token_file" {
			tok, err := readTokenFile(v, in, &c.Warnings)
			if err != nil {
				return err
			}
			c.Token = tok
			c.Sources["token"] = v.source + " (token_file)"
			continue
		}
		if err := s.set(c, v.value); err != nil {
			return &InvalidError{Key: s.key, Value: v.value, Source: v.source, Err: err}
		}
		c.Sources[s.key] = v.source
	}
	return nil
}

func readTokenFile(v sourced, in Input, warnings *[]string) (string, error) {
	b, err := in.ReadFile(v.value)
	if err != nil {
		return "", &InvalidError{Key: "token_file", Value: v.value, Source: v.source, Err: err}
	}
	warnPermissions(v.value, in, warnings)
	return strings.TrimSpace(string(b)), nil
}

// warnPermissions warns about a token-holding file others can read.
func warnPermissions(path string, in Input, warnings *[]string) {
	fi, err := in.Stat(path)
	if err == nil && fi.Mode().Perm()&0o077 != 0 {
		*warnings = append(*warnings, fmt.Sprintf("%s holds a token and is readable by others — chmod 600 %s", path, path))
	}
}

type flags struct {
	values         map[string]sourced
	config         string
	print, version bool
}

// FlagUsage is the flag summary printed by -h.
func FlagUsage() string {
	var b strings.Builder
	fs, _ := newFlagSet()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}

// flagKeys maps a flag to the key it sets and, for booleans, the value.
func flagKeys() map[string]struct{ key, value string } {
	return map[string]struct{ key, value string }{
		"server": {"server", ""}, "token": {"token", ""}, "token-file": {"token_file", ""},
		"theme": {"tui.theme", ""}, "glyphs": {"tui.glyphs", ""}, "events": {"tui.events.mode", ""},
		"debug-log": {"tui.debug_log", ""},
		"read-only": {"tui.read_only", "true"}, "no-color": {"tui.color", "never"},
	}
}

func newFlagSet() (*flag.FlagSet, map[string]*string) {
	fs := flag.NewFlagSet("cairn-tui", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	strs := map[string]*string{
		"server":     fs.String("server", "", "cairn server URL (or CAIRN_URL)"),
		"token":      fs.String("token", "", "bearer token; visible to others in ps — prefer CAIRN_TOKEN or token_file"),
		"token-file": fs.String("token-file", "", "file holding the bearer token"),
		"theme":      fs.String("theme", "", "auto, dark, light or high-contrast"),
		"glyphs":     fs.String("glyphs", "", "auto, unicode or ascii"),
		"events":     fs.String("events", "", "live updates: ws, poll or off"),
		"debug-log":  fs.String("debug-log", "", "log each message type to FILE"),
		"config":     fs.String("config", "", "config file (default $XDG_CONFIG_HOME/cairn/config.yaml)"),
	}
	fs.Bool("read-only", false, "disable every action that changes something")
	fs.Bool("no-color", false, "no colour or other terminal attributes")
	fs.Bool("print-config", false, "print the effective settings with their sources and exit")
	fs.Bool("version", false, "print the version and exit")
	return fs, strs
}

func parseFlags(args []string) (flags, error) {
	fs, strs := newFlagSet()
	if err := fs.Parse(args); err != nil {
		return flags{}, err
	}
	if fs.NArg() > 0 {
		return flags{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	out := flags{values: make(map[string]sourced)}
	keys := flagKeys()
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "config":
			out.config = *strs["config"]
		case "print-config":
			out.print = f.Value.String() == "true"
		case "version":
			out.version = f.Value.String() == "true"
		default:
			k := keys[f.Name]
			v := f.Value.String()
			if k.value != "" {
				if v != "true" {
					return
				}
				v = k.value
			}
			out.values[k.key] = sourced{v, "flag --" + f.Name}
		}
	})
	return out, nil
}
