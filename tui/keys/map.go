package keys

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
)

// Map is the resolved registry: defaults with the user's overrides applied
// and checked. It is built once at start and only read afterwards.
type Map struct {
	actions []Action
	byID    map[ID]int
	byKey   map[Scope]map[string]ID
	scoped  map[Scope][]Action // InScope's answers, built once
}

// ConflictError names a key bound to two actions reachable in one context.
type ConflictError struct {
	Key  string
	A, B ID
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("key %q is bound to both %s and %s", Display(e.Key), e.A, e.B)
}

// New applies overrides (action ID → keys) to the defaults. Unknown IDs and
// unparsable keys are warnings that keep the default; keys a terminal cannot
// tell apart, and two actions of one context on one key, are errors.
func New(overrides map[string][]string) (*Map, []string, error) {
	actions := Defaults()
	m := &Map{actions: actions, byID: make(map[ID]int, len(actions))}
	for i, a := range actions {
		m.byID[a.ID] = i
	}
	warnings, err := m.override(overrides)
	if err != nil {
		return nil, warnings, err
	}
	for i := range m.actions {
		a := &m.actions[i]
		a.Binding.SetHelp(a.FirstKey(), a.Short)
	}
	if err := m.index(); err != nil {
		return nil, warnings, err
	}
	return m, warnings, nil
}

func (m *Map) override(overrides map[string][]string) ([]string, error) {
	var warnings []string
	ids := make([]string, 0, len(overrides))
	for id := range overrides {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		i, ok := m.byID[ID(id)]
		if !ok {
			warnings = append(warnings, fmt.Sprintf("tui.keys.%s: unknown action; ignored", id))
			continue
		}
		keys, err := parseKeys(overrides[id])
		if err != nil {
			if _, refused := err.(refusedError); refused {
				return warnings, fmt.Errorf("tui.keys.%s: %w", id, err)
			}
			warnings = append(warnings, fmt.Sprintf("tui.keys.%s: %v; keeping the default", id, err))
			continue
		}
		m.actions[i].Binding.SetKeys(keys...)
	}
	return warnings, nil
}

// index builds the per-scope key tables and checks that no context (global
// plus navigation plus one screen) reaches two actions on one key.
func (m *Map) index() error {
	m.byKey = make(map[Scope]map[string]ID)
	m.scoped = make(map[Scope][]Action)
	for _, a := range m.actions {
		m.scoped[a.Scope] = append(m.scoped[a.Scope], a)
		table := m.byKey[a.Scope]
		if table == nil {
			table = make(map[string]ID)
			m.byKey[a.Scope] = table
		}
		for _, k := range a.Keys() {
			if other, dup := table[k]; dup {
				return &ConflictError{Key: k, A: other, B: a.ID}
			}
			table[k] = a.ID
		}
	}
	for _, screen := range Scopes() {
		shared, ok := Screens()[screen]
		if !ok {
			continue
		}
		if err := m.checkContext(append(append([]Scope{ScopeGlobal, ScopeNav}, shared...), screen)...); err != nil {
			return err
		}
	}
	return nil
}

func (m *Map) checkContext(scopes ...Scope) error {
	seen := make(map[string]ID)
	for _, s := range scopes {
		for _, a := range m.actions {
			if a.Scope != s {
				continue
			}
			for _, k := range a.Keys() {
				if other, dup := seen[k]; dup && other != a.ID {
					return &ConflictError{Key: k, A: other, B: a.ID}
				}
				seen[k] = a.ID
			}
		}
	}
	return nil
}

// Lookup returns the action a key triggers in scope.
func (m *Map) Lookup(s Scope, key string) (ID, bool) {
	id, ok := m.byKey[s][key]
	return id, ok
}

// Action returns the resolved action for id.
func (m *Map) Action(id ID) Action {
	return m.actions[m.byID[id]]
}

// Binding returns id's resolved key.Binding: its keys and its hint, for
// key.Matches and for bubbles components that take a KeyMap.
func (m *Map) Binding(id ID) key.Binding { return m.Action(id).Binding }

// InScope returns the actions of one scope in registry order; the slice
// is shared, so callers must not change it (it is built once: hints and
// help ask on every frame).
func (m *Map) InScope(s Scope) []Action { return m.scoped[s] }

// Keys are the keys that trigger the action, as Bubble Tea names them.
func (a Action) Keys() []string { return a.Binding.Keys() }

// KeyList renders an action's keys for hints and help: "D/delete".
func (a Action) KeyList() string {
	keys := a.Keys()
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = Display(k)
	}
	return strings.Join(names, "/")
}

// FirstKey is the key shown in hints.
func (a Action) FirstKey() string {
	if keys := a.Keys(); len(keys) > 0 {
		return Display(keys[0])
	}
	return ""
}
