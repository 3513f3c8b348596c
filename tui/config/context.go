package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/cairn-dev/cairn/internal/clientconf"
)

// Endpoint is where a context sends the TUI: its server and token.
type Endpoint struct {
	Context string
	Server  string
	Token   string // never printed or logged
}

// OpenContext re-reads the config file and resolves the context name now,
// whole: its server and its token, whatever the flags and CAIRN_URL said
// at start. It does I/O (a token_command may run for seconds), so the TUI
// calls it inside a tea.Cmd, for ':ctx NAME'. Its errors name the context:
// an unknown one lists the known ones; a token source that gives nothing
// is a *clientconf.ContextError.
func (c *Config) OpenContext(name string) (Endpoint, error) {
	in := c.input.withDefaults()
	file, err := c.rereadFile(in)
	if err != nil {
		return Endpoint{}, fmt.Errorf("context %q: %w", name, err)
	}
	r, err := clientconf.Resolve(context.Background(), clientconf.Input{File: file, Context: name,
		Getenv: in.Getenv, ReadFile: in.ReadFile})
	if err != nil {
		return Endpoint{}, err // it names the context
	}
	e := Endpoint{Context: name, Token: r.Token}
	if err := setServer(&e.Server, r.Server); err != nil {
		return Endpoint{}, fmt.Errorf("context %q: server %q: %w", name, r.Server, err)
	}
	return e, nil
}

// rereadFile parses the config file as it is now; an absent one is empty.
func (c *Config) rereadFile(in Input) (*clientconf.File, error) {
	if c.ConfigPath == "" {
		return &clientconf.File{}, nil
	}
	data, err := in.ReadFile(c.ConfigPath)
	if errors.Is(err, fs.ErrNotExist) {
		return &clientconf.File{Path: c.ConfigPath}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", c.ConfigPath, err)
	}
	return clientconf.Parse(c.ConfigPath, data)
}
