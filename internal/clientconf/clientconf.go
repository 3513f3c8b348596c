// Package clientconf is the client config file that the cairn CLI and
// cairn-tui share ($XDG_CONFIG_HOME/cairn/config.yaml, which 'cairn dev'
// writes): its format, where a command's server and token come from, and
// the edits that 'cairn config' and 'cairn dev' make to it.
//
// The file holds contexts, as kubectl's does: named servers, each with
// where its token comes from — never the token itself.
//
//	current-context: prod
//	contexts:
//	  - name: prod
//	    server: https://cairn.example.com
//	    token_command: [pass, show, cairn/prod]   # run without a shell
//	  - name: staging
//	    server: https://staging.example.com
//	    token_env: STAGING_TOKEN
//	  - name: dev
//	    server: http://127.0.0.1:44123
//	    token_file: ~/.local/state/cairn/dev/dev-token
//	server: http://127.0.0.1:8080   # legacy top level, still honoured
//	token_file: /path/to/token      # or token: …
//	tui: {…}                        # cairn-tui's section, untouched here
//
// Resolution (Resolve), for the server and the token:
//
//  1. --server and --token win, each on its own.
//  2. A context named by --context, else CAIRN_CONTEXT, gives the server
//     and the token, whole: the environment's CAIRN_URL and CAIRN_TOKEN
//     are not consulted. An unknown name is an error listing the known
//     ones.
//  3. Else CAIRN_URL and CAIRN_TOKEN.
//  4. Else the file's current-context.
//  5. Else the top-level server, and token (or token_file).
//
// A token from a context or from the file's top level is only ever sent
// to that entry's own server: when --server or CAIRN_URL names another,
// that token is not used. A token source is read only when its token is
// used, and one that gives nothing (a file absent or unreadable, a
// variable unset or empty, a command that fails, times out or prints
// nothing) is a *ContextError naming the context and the source, never
// the token.
//
// Edits (UseContext, SaveContext, DropLegacy) change only their keys: the
// rest of the file, the tui: section and comments included, is kept. The
// file is replaced atomically, mode 0600.
//
// It imports no Charm library: cairn-tui's config package builds on it.
package clientconf

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// File is the part of the client config file this package reads.
type File struct {
	Path string // where it was read from; "" for none

	// The top level, as 'cairn dev' wrote it before contexts.
	Server    string
	Token     string
	TokenFile string

	CurrentContext string
	Contexts       []Context // in file order
}

// Context is one named server and where its token comes from. At most one
// of the token sources is set; none is a server without authentication.
type Context struct {
	Name   string
	Server string

	TokenFile    string   // a file holding the token; ~/ is the home directory
	TokenEnv     string   // an environment variable holding it
	TokenCommand []string // argv of a command printing it, run without a shell
}

// TokenSource describes where the context's token comes from, for a
// listing: "file ~/x", "env PROD_TOKEN", "command pass show x" or "none".
func (c Context) TokenSource() string {
	switch {
	case c.TokenFile != "":
		return "file " + c.TokenFile
	case c.TokenEnv != "":
		return "env " + c.TokenEnv
	case len(c.TokenCommand) > 0:
		return "command " + strings.Join(c.TokenCommand, " ")
	}
	return "none"
}

// Context returns the context named name.
func (f *File) Context(name string) (Context, bool) {
	if f == nil {
		return Context{}, false
	}
	for _, c := range f.Contexts {
		if c.Name == name {
			return c, true
		}
	}
	return Context{}, false
}

// Names lists the contexts' names in file order.
func (f *File) Names() []string {
	if f == nil {
		return nil
	}
	names := make([]string, len(f.Contexts))
	for i, c := range f.Contexts {
		names[i] = c.Name
	}
	return names
}

// DefaultPath is $XDG_CONFIG_HOME/cairn/config.yaml, else
// $HOME/.config/cairn/config.yaml; "" when neither variable is set.
func DefaultPath(getenv func(string) string) string {
	base := getenv("XDG_CONFIG_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "cairn", "config.yaml")
}

// Read reads and parses the file at path. An absent file is an empty one;
// so is the path "".
func Read(path string) (*File, error) {
	if path == "" {
		return &File{}, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Path: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", path, err)
	}
	return Parse(path, data)
}

// rawFile is the file's shared keys; the others (tui:) are not this
// package's and are ignored.
type rawFile struct {
	Server         string      `yaml:"server"`
	Token          string      `yaml:"token"`
	TokenFile      string      `yaml:"token_file"`
	CurrentContext string      `yaml:"current-context"`
	Contexts       []yaml.Node `yaml:"contexts"`
}

// Parse reads the file's data; path names it in errors. A context with a
// literal token, an unknown key, an invalid or repeated name or no server
// is refused, naming the context.
func Parse(path string, data []byte) (*File, error) {
	var raw rawFile
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parse config %s: %w", path, err)
	}
	f := &File{Path: path, Server: raw.Server, Token: raw.Token, TokenFile: raw.TokenFile,
		CurrentContext: raw.CurrentContext}
	seen := make(map[string]bool)
	for i := range raw.Contexts {
		c, err := parseContext(&raw.Contexts[i], i)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("config %s: context %q is defined twice", path, c.Name)
		}
		seen[c.Name] = true
		f.Contexts = append(f.Contexts, c)
	}
	return f, nil
}

// parseContext reads the i-th entry of contexts:, key by key, so that a
// misspelt key is refused rather than silently ignored.
func parseContext(n *yaml.Node, i int) (Context, error) {
	var c Context
	if n.Kind != yaml.MappingNode {
		return c, fmt.Errorf("contexts[%d]: want a mapping with name, server and a token source", i)
	}
	fields := make(map[string]*yaml.Node)
	for k := 0; k+1 < len(n.Content); k += 2 {
		fields[n.Content[k].Value] = n.Content[k+1]
	}
	name, err := scalar(fields["name"])
	if err != nil || name == "" {
		return c, fmt.Errorf("contexts[%d]: want a name", i)
	}
	if err := ValidName(name); err != nil {
		return c, fmt.Errorf("contexts[%d]: %w", i, err)
	}
	c.Name = name
	for k := 0; k+1 < len(n.Content); k += 2 {
		if err := c.set(n.Content[k].Value, n.Content[k+1]); err != nil {
			return c, fmt.Errorf("context %q: %w", name, err)
		}
	}
	return c, c.validate()
}

// set sets one key of the context from its node.
func (c *Context) set(key string, v *yaml.Node) error {
	var err error
	switch key {
	case "name":
	case "server":
		c.Server, err = scalar(v)
	case "token_file":
		c.TokenFile, err = scalar(v)
	case "token_env":
		c.TokenEnv, err = scalar(v)
	case "token_command":
		c.TokenCommand, err = argv(v)
	case "token":
		return errors.New("a context never holds its token; use token_file, token_env or token_command")
	default:
		return fmt.Errorf("unknown key %q (a context has name, server, token_file, token_env, token_command)", key)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// validate checks what a context needs as a whole: a server URL and at
// most one token source.
func (c Context) validate() error {
	if err := ValidName(c.Name); err != nil {
		return err
	}
	if err := validServer(c.Server); err != nil {
		return fmt.Errorf("context %q: server %q: %w", c.Name, c.Server, err)
	}
	set := 0
	for _, present := range []bool{c.TokenFile != "", c.TokenEnv != "", len(c.TokenCommand) > 0} {
		if present {
			set++
		}
	}
	if set > 1 {
		return fmt.Errorf("context %q: choose one of token_file, token_env and token_command", c.Name)
	}
	return nil
}

func validServer(s string) error {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("want an http:// or https:// URL")
	}
	return nil
}

func scalar(n *yaml.Node) (string, error) {
	if n == nil {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", errors.New("want a string")
	}
	return n.Value, nil
}

// argv reads a command as a list of strings. A single string is refused:
// splitting it would need a shell's quoting rules.
func argv(n *yaml.Node) ([]string, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, errors.New("want a list of arguments, such as [pass, show, cairn/prod]")
	}
	out := make([]string, len(n.Content))
	for i, e := range n.Content {
		if e.Kind != yaml.ScalarNode {
			return nil, errors.New("want a list of strings")
		}
		out[i] = e.Value
	}
	return out, nil
}

var nameRule = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// ValidName checks a context name: 1 to 64 of A-Z a-z 0-9 . _ -.
func ValidName(name string) error {
	if !nameRule.MatchString(name) {
		return fmt.Errorf("context name %q: want 1 to 64 letters, digits, '.', '_' or '-'", name)
	}
	return nil
}

// NameFor makes a context name of s (a directory's base name, say): each
// character the rule refuses becomes '-', leading dots go (".cairn" is
// "cairn"), and it is cut to 64. Nothing left is "dev".
func NameFor(s string) string {
	name := strings.Map(func(r rune) rune {
		if r < 0x80 && nameRule.MatchString(string(r)) {
			return r
		}
		return '-'
	}, s)
	name = strings.TrimLeft(name, ".")
	if len(name) > 64 {
		name = name[:64]
	}
	if strings.Trim(name, ".-_") == "" {
		return "dev"
	}
	return name
}
