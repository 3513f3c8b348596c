package keys

import "github.com/charmbracelet/bubbles/key"

// State is an action as one context offers it right now.
type State struct {
	Action
	Enabled bool
	Reason  string // why it is disabled: toasted when pressed, dimmed in help
	Hidden  bool   // read-only mode: neither hinted nor listed as usable
}

// Binding is the action's key.Binding as this context offers it: its hint
// word is the context's Short (a preview calls filter "search"), and it is
// disabled when the action is disabled or hidden, so key.Matches skips it
// and bubbles' help leaves it out.
func (s State) Binding() key.Binding {
	b := s.Action.Binding
	b.SetHelp(s.FirstKey(), s.Short)
	b.SetEnabled(s.Enabled && !s.Hidden)
	return b
}

// Context is the set of bindings a screen (or the root) offers now; it
// feeds the hint line, the help overlay and the disabled-key toasts.
type Context struct {
	Name     string
	Bindings []State
}

// ShortHelp is the context's bindings for bubbles' help.Model (it drops
// disabled ones itself): Context is a help.KeyMap.
func (c Context) ShortHelp() []key.Binding {
	out := make([]key.Binding, len(c.Bindings))
	for i, b := range c.Bindings {
		out[i] = b.Binding()
	}
	return out
}

// FullHelp is ShortHelp as one column.
func (c Context) FullHelp() [][]key.Binding { return [][]key.Binding{c.ShortHelp()} }

// Enabled returns the states of a scope with every action enabled.
func (m *Map) Enabled(s Scope) []State {
	acts := m.InScope(s)
	out := make([]State, len(acts))
	for i, a := range acts {
		out[i] = State{Action: a, Enabled: true}
	}
	return out
}

// Find returns the state of id in the context.
func (c Context) Find(id ID) (State, bool) {
	for _, b := range c.Bindings {
		if b.ID == id {
			return b, true
		}
	}
	return State{}, false
}

// Relabel gives id another hint word in this context (v "restore volume"
// on an archived workspace).
func (c Context) Relabel(id ID, short string) {
	for i := range c.Bindings {
		if c.Bindings[i].ID == id {
			c.Bindings[i].Short = short
		}
	}
}

// Disable marks id disabled with a reason, unless it already is.
func (c Context) Disable(id ID, reason string) {
	for i := range c.Bindings {
		if c.Bindings[i].ID == id && c.Bindings[i].Enabled {
			c.Bindings[i].Enabled = false
			c.Bindings[i].Reason = reason
		}
	}
}

// Hide leaves the actions out of the hints and the help but still acted
// on, so that pressing one is answered by whoever handles it (over SSH,
// the root's page on what works instead).
func (c Context) Hide(ids ...ID) {
	for i := range c.Bindings {
		for _, id := range ids {
			if c.Bindings[i].ID == id {
				c.Bindings[i].Hidden = true
			}
		}
	}
}

// ReadOnly hides and disables every mutating action.
func (c Context) ReadOnly() {
	for i := range c.Bindings {
		if c.Bindings[i].Mutates {
			c.Bindings[i].Enabled = false
			c.Bindings[i].Hidden = true
			c.Bindings[i].Reason = "read-only mode"
		}
	}
}
