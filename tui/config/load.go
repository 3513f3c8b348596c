package config

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/cairn-dev/cairn/internal/clientconf"
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
// per key; the server and token through clientconf, whose order adds the
// contexts (--context, CAIRN_CONTEXT, the file's current-context). A flag
// error is returned as is (flag.ErrHelp for -h).
func Load(in Input) (*Config, error) {
	in = in.withDefaults()
	c := Defaults()
	c.input = in
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
		if err := c.apply(layer); err != nil {
			return nil, err
		}
	}
	if err := c.applyEndpoint(file.shared, fl.endpoint, in); err != nil {
		return nil, err
	}
	if c.Server == "" && !c.PrintConfig && !c.Version {
		return nil, ErrNoServer
	}
	return &c, nil
}

// applyEndpoint sets the server, the token and the context as clientconf
// resolves them, each with its source.
func (c *Config) applyEndpoint(file *clientconf.File, flags clientconf.Input, in Input) error {
	flags.File, flags.Getenv, flags.ReadFile = file, in.Getenv, in.ReadFile
	r, err := clientconf.Resolve(context.Background(), flags)
	if err != nil {
		return err
	}
	c.Contexts = file.Names()
	if len(c.Contexts) > 0 {
		c.Sources["contexts"] = "file " + file.Path
	}
	if r.Server != "" {
		if err := setServer(&c.Server, r.Server); err != nil {
			return &InvalidError{Key: "server", Value: r.Server, Source: r.ServerFrom, Err: err}
		}
		c.Sources["server"] = r.ServerFrom
	}
	if r.Token != "" {
		c.Token, c.Sources["token"] = r.Token, r.TokenFrom
	}
	if r.Context != "" {
		c.Context, c.Sources["context"] = r.Context, r.ContextFrom
	}
	// The config file's own literal token was warned about when it was read.
	if r.TokenPath != "" && r.TokenPath != file.Path {
		warnPermissions(r.TokenPath, in, &c.Warnings)
	}
	return nil
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
	return clientconf.DefaultPath(getenv), false
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

// apply sets every key present in layer, in settings order.
func (c *Config) apply(layer map[string]sourced) error {
	for _, s := range settings() {
		v, ok := layer[s.key]
		if !ok {
			continue
		}
		if err := s.set(c, v.value); err != nil {
			return &InvalidError{Key: s.key, Value: v.value, Source: v.source, Err: err}
		}
		c.Sources[s.key] = v.source
	}
	return nil
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
	endpoint       clientconf.Input // --server, --token, --token-file, --context
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

// flagKeys maps a tui.* flag to the key it sets and, for booleans, the
// value.
func flagKeys() map[string]struct{ key, value string } {
	return map[string]struct{ key, value string }{
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
		"context":    fs.String("context", "", "a context of the config file: its server and token (or CAIRN_CONTEXT)"),
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
		case "server":
			out.endpoint.Server = f.Value.String()
		case "token":
			out.endpoint.Token = f.Value.String()
		case "token-file":
			out.endpoint.TokenFile = f.Value.String()
		case "context":
			out.endpoint.Context = f.Value.String()
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
