package main

import (
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/keys"
)

// resolveKeys applies tui.keys to the registry and checks it. Its
// warnings (unknown IDs, unparsable keys: the default stays) join cfg's;
// a conflict or a key the terminal cannot tell apart is an error naming
// the file, the key and both actions.
func resolveKeys(cfg *config.Config) (*keys.Map, error) {
	km, warnings, err := keys.New(cfg.Keys)
	cfg.Warnings = append(cfg.Warnings, warnings...)
	if err != nil {
		return nil, fmt.Errorf("invalid tui.keys (from file %s): %w", cfg.ConfigPath, err)
	}
	return km, nil
}

// bindings lists every action of the registry with its effective keys, in
// help order; an action whose override was refused (a warning names it)
// is marked, since its keys are the default ones.
func bindings(km *keys.Map, warnings []string) []config.Binding {
	var out []config.Binding
	for _, s := range keys.Scopes() {
		for _, a := range km.InScope(s) {
			out = append(out, config.Binding{Action: string(a.ID), Keys: a.KeyList(), Ignored: warned(warnings, a.ID)})
		}
	}
	return out
}

// warned reports a warning of keys.New about id's override.
func warned(warnings []string, id keys.ID) bool {
	for _, w := range warnings {
		if strings.HasPrefix(w, "tui.keys."+string(id)+":") {
			return true
		}
	}
	return false
}
