package clientconf

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// Input is what Resolve reads: the file, the flags and the environment.
// Zero functions use the process's own.
type Input struct {
	File *File // nil: no file

	// The flags; "" when not given. TokenFile is cairn-tui's --token-file.
	Server, Token, TokenFile, Context string

	Getenv   func(string) string
	ReadFile func(string) ([]byte, error)
	// CommandTimeout bounds a token_command; zero is 10 s.
	CommandTimeout time.Duration
}

// Result is where a command goes and with what: the context in use ("" for
// none), the server and the token ("" for none), each with where it came
// from, as --print-config shows it ("flag --server", "env CAIRN_URL",
// "context prod (file PATH)", "file PATH (token_file)").
type Result struct {
	Context, ContextFrom string
	Server, ServerFrom   string
	Token, TokenFrom     string
	// TokenPath is the file the token was read from (the config file for a
	// literal token), for the warning about a file others can read.
	TokenPath string
}

// ContextError is a token source that gave no token. Context is "" for the
// file's top-level token_file. The message names the context and the
// source, never a token.
type ContextError struct {
	Context string
	Source  string // "token_file /x", "token_env PROD_TOKEN", "token_command pass"
	Err     error
}

func (e *ContextError) Error() string {
	if e.Context == "" {
		return fmt.Sprintf("%s: %v", e.Source, e.Err)
	}
	return fmt.Sprintf("context %q: %s: %v", e.Context, e.Source, e.Err)
}

func (e *ContextError) Unwrap() error { return e.Err }

// UnknownContextError is a context name the file does not define.
type UnknownContextError struct {
	Name  string
	From  string // "flag --context", "env CAIRN_CONTEXT", "file PATH (current-context)"
	Path  string
	Known []string
}

func (e *UnknownContextError) Error() string {
	known := "which defines none"
	if len(e.Known) > 0 {
		known = "known: " + strings.Join(e.Known, ", ")
	}
	where := e.Path
	if where == "" {
		where = "(none)"
	}
	sep := "; "
	if len(e.Known) == 0 {
		sep = ", "
	}
	return fmt.Sprintf("no context %q (from %s) in config %s%s%s", e.Name, e.From, where, sep, known)
}

func (in Input) withDefaults() Input {
	if in.File == nil {
		in.File = &File{}
	}
	if in.Getenv == nil {
		in.Getenv = os.Getenv
	}
	if in.ReadFile == nil {
		in.ReadFile = os.ReadFile
	}
	if in.CommandTimeout == 0 {
		in.CommandTimeout = 10 * time.Second
	}
	return in
}

// entry is one place a server may come from, with the token bound to it.
type entry struct {
	context    string // "" for the top level and the environment
	server     string
	serverFrom string
	token      func(context.Context) (token, error) // nil: this entry has no token
	// anyServer: the token goes wherever the command goes (CAIRN_TOKEN),
	// not only to this entry's server.
	anyServer bool
}

// token is a token read from a source.
type token struct{ value, from, path string }

// Resolve picks the server and token by the order of the package comment.
func Resolve(ctx context.Context, in Input) (Result, error) {
	in = in.withDefaults()
	if name, from := chosenContext(in); name != "" {
		c, ok := in.File.Context(name)
		if !ok {
			return Result{}, &UnknownContextError{Name: name, From: from, Path: in.File.Path, Known: in.File.Names()}
		}
		// A chosen context is used whole: the environment's URL and token
		// are meant for some other server. It stays the context in use even
		// when --server sends the command elsewhere.
		r, err := in.resolve(ctx, in.contextEntry(c))
		r.Context, r.ContextFrom = name, from
		return r, err
	}
	current, err := in.currentEntry()
	if err != nil {
		return Result{}, err
	}
	env := entry{server: in.Getenv("CAIRN_URL"), serverFrom: "env CAIRN_URL", anyServer: true}
	if t := in.Getenv("CAIRN_TOKEN"); t != "" {
		env.token = fixed(token{value: strings.TrimSpace(t), from: "env CAIRN_TOKEN"})
	}
	r, err := in.resolve(ctx, env, current, in.topLevelEntry())
	if r.Context != "" {
		r.ContextFrom = "file " + in.File.Path + " (current-context)"
	}
	return r, err
}

// chosenContext is --context, else CAIRN_CONTEXT.
func chosenContext(in Input) (name, from string) {
	if in.Context != "" {
		return in.Context, "flag --context"
	}
	if v := in.Getenv("CAIRN_CONTEXT"); v != "" {
		return v, "env CAIRN_CONTEXT"
	}
	return "", ""
}

// currentEntry is the file's current-context; an empty entry when it names
// none.
func (in Input) currentEntry() (entry, error) {
	name := in.File.CurrentContext
	if name == "" {
		return entry{}, nil
	}
	c, ok := in.File.Context(name)
	if !ok {
		return entry{}, &UnknownContextError{Name: name, From: "current-context", Path: in.File.Path, Known: in.File.Names()}
	}
	return in.contextEntry(c), nil
}

// resolve takes the server from --server, else from the first entry that
// has one (whose context, if any, is then the one in use), and the token
// by pickToken.
func (in Input) resolve(ctx context.Context, entries ...entry) (Result, error) {
	var r Result
	if in.Server != "" {
		r.Server, r.ServerFrom = in.Server, "flag --server"
	}
	for _, e := range entries {
		if r.Server == "" && e.server != "" {
			r.Server, r.ServerFrom, r.Context = e.server, e.serverFrom, e.context
		}
	}
	t, err := in.pickToken(ctx, r.Server, entries)
	if err != nil {
		return Result{}, err
	}
	r.Token, r.TokenFrom, r.TokenPath = t.value, t.from, t.path
	return r, nil
}

// pickToken is the flags' token, else the first entry's token that may go
// to server. A source is read only when its token is the one used.
func (in Input) pickToken(ctx context.Context, server string, entries []entry) (token, error) {
	if in.Token != "" {
		return token{value: strings.TrimSpace(in.Token), from: "flag --token"}, nil
	}
	if in.TokenFile != "" {
		return in.readTokenFile("", "--token-file "+in.TokenFile, in.TokenFile, "flag --token-file (token_file)")
	}
	for _, e := range entries {
		if e.token != nil && (e.anyServer || sameServer(e.server, server)) {
			return e.token(ctx)
		}
	}
	return token{}, nil
}

func sameServer(a, b string) bool {
	norm := func(s string) string { return strings.TrimRight(strings.TrimSpace(s), "/") }
	return a != "" && norm(a) == norm(b)
}

// contextEntry is a context's server and its token source.
func (in Input) contextEntry(c Context) entry {
	e := entry{context: c.Name, server: c.Server, serverFrom: fmt.Sprintf("context %s (file %s)", c.Name, in.File.Path)}
	switch {
	case c.TokenFile != "":
		e.token = func(context.Context) (token, error) {
			return in.readTokenFile(c.Name, "token_file "+c.TokenFile, c.TokenFile,
				fmt.Sprintf("context %s (token_file %s)", c.Name, c.TokenFile))
		}
	case c.TokenEnv != "":
		e.token = func(context.Context) (token, error) { return in.readTokenEnv(c) }
	case len(c.TokenCommand) > 0:
		e.token = func(ctx context.Context) (token, error) { return in.runTokenCommand(ctx, c) }
	}
	return e
}

// topLevelEntry is the file's top-level server and token: a literal token
// beats token_file.
func (in Input) topLevelEntry() entry {
	f := in.File
	src := "file " + f.Path
	e := entry{server: f.Server, serverFrom: src}
	switch {
	case f.Token != "":
		e.token = fixed(token{value: strings.TrimSpace(f.Token), from: src, path: f.Path})
	case f.TokenFile != "":
		e.token = func(context.Context) (token, error) {
			return in.readTokenFile("", "config "+f.Path+": token_file "+f.TokenFile, f.TokenFile, src+" (token_file)")
		}
	}
	return e
}

func fixed(t token) func(context.Context) (token, error) {
	return func(context.Context) (token, error) { return t, nil }
}
